import { expect } from 'chai';
import { ConfigError } from '../../../src/config/options.ts';
import { OwnershipError } from '../../../src/cloudmap/errors.ts';
import { assertOwnAccount } from '../../../src/cloudmap/ownership.ts';
import {
  NamespaceNotSharedError,
  resourceReference,
  sameResource,
  serviceArnIn,
} from '../../../src/cloudmap/shared-namespaces.ts';
import { parseWorkerOptions } from '../../../src/worker/options.ts';

const NS_ARN = 'arn:aws:servicediscovery:us-east-1:111111111111:namespace/ns-abc';

describe('shared namespaces (Cloud Map across AWS accounts)', () => {
  it('a shared namespace or service is named by its ARN, an own one by its id', () => {
    expect(resourceReference({ Id: 'ns-abc', Arn: NS_ARN }, true)).to.equal(NS_ARN);
    expect(resourceReference({ Id: 'ns-abc', Arn: NS_ARN }, false)).to.equal('ns-abc');
    expect(resourceReference({ Id: 'ns-abc' }, true)).to.equal('ns-abc');
  });

  it('the ARN of a service id (ServiceAlreadyExists names only the id) is built from its namespace ARN', () => {
    expect(serviceArnIn(NS_ARN, 'srv-1')).to.equal('arn:aws:servicediscovery:us-east-1:111111111111:service/srv-1');
    expect(serviceArnIn('ns-abc', 'srv-1')).to.equal('srv-1');
    expect(serviceArnIn(NS_ARN, 'arn:aws:servicediscovery:us-east-1:111111111111:service/srv-1')).to.equal(
      'arn:aws:servicediscovery:us-east-1:111111111111:service/srv-1',
    );
  });

  it('an id and the ARN ending in it name the same resource; different ids do not', () => {
    expect(sameResource('ns-abc', NS_ARN)).to.equal(true);
    expect(sameResource(NS_ARN, 'ns-abc')).to.equal(true);
    expect(sameResource('ns-abc', 'ns-abc')).to.equal(true);
    expect(sameResource('ns-ab', NS_ARN)).to.equal(false);
    expect(sameResource('ns-abd', 'ns-abc')).to.equal(false);
  });

  it('a namespace not shared says which namespace, which owner, and what to do', () => {
    const err = new NamespaceNotSharedError('demo', '111111111111');
    expect(err.message)
      .to.include('"demo"')
      .and.include('111111111111')
      .and.include('AWS RAM resource share')
      .and.include('docs/install.md');
  });

  it('C4: an instance claiming this cluster that another account registered is not ours to deregister', () => {
    const me = { clusterId: 'cls1', clustersetId: 'set-1' };
    const instance = { id: 'tcp-10.0.0.1-80-x', attributes: { CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'set-1' } };
    expect(() =>
      assertOwnAccount({ ...instance, createdByAccount: '222222222222' }, me, '111111111111', 'service srv-1'),
    ).to.throw(OwnershipError, /account 222222222222 registered it, not this cluster's account 111111111111.*C4/);
    expect(() =>
      assertOwnAccount({ ...instance, createdByAccount: '111111111111' }, me, '111111111111', 'service srv-1'),
    ).to.not.throw();
    // Unknown on either side: nothing to compare.
    expect(() => assertOwnAccount(instance, me, '111111111111', 'service srv-1')).to.not.throw();
    expect(() =>
      assertOwnAccount({ ...instance, createdByAccount: '222222222222' }, me, undefined, 'service srv-1'),
    ).to.not.throw();
  });

  it('account flags take 12 digits or nothing', () => {
    expect(parseWorkerOptions(['--namespace-owner-account=111111111111', '--account-id=222222222222'], {})).to.include({
      namespaceOwnerAccount: '111111111111',
      accountId: '222222222222',
    });
    expect(parseWorkerOptions([], {})).to.include({ namespaceOwnerAccount: '', accountId: '' });
    expect(() => parseWorkerOptions(['--namespace-owner-account=1111'], {})).to.throw(ConfigError, /12-digit/);
    expect(() => parseWorkerOptions([], { MCS_AWS_ACCOUNT_ID: 'arn:aws:iam::1' })).to.throw(
      ConfigError,
      /--account-id/,
    );
  });
});
