import { expect } from 'chai';
import fc from 'fast-check';
import { allAnnounced, announced, namespacesWithNonAnnouncing } from '../../../src/core/announcing-writers.ts';
import { instancesForExport } from '../../../src/core/cloudmap-attributes.ts';
import { clusterTag, legacyInstanceId } from '../../../src/core/instance-id.ts';
import { clusterExportArb } from './export-fixtures.ts';

describe('core writers that announce their changes (M3, M6)', () => {
  it('every instance this controller writes is announced (property)', () => {
    fc.assert(
      fc.property(clusterExportArb({ min: 0, max: 4 }), (x) => instancesForExport(x, 'v1.2.3').every(announced)),
    );
  });

  it('the AWS controller v0.3.1, or an instance without our markers, is not', () => {
    const v031 = {
      K8S_CONTROLLER: 'aws-cloud-map-mcs-controller-for-k8s d07e680 (d07e680)',
      CLUSTER_ID: 'cls1',
      CLUSTERSET_ID: 'clusterset1',
    };
    expect(announced({ id: legacyInstanceId('TCP', '10.244.2.0', 8080), attributes: v031 })).to.equal(false);
    const ourId = `tcp-10.0.0.5-80-${clusterTag({ clusterId: 'cls1', clustersetId: 'clusterset1' })}`;
    expect(announced({ id: ourId, attributes: v031 })).to.equal(false);
    expect(announced({ id: ourId, attributes: { CLUSTER_ID: 'cls1' } })).to.equal(false);
    expect(announced({ id: 'hand-made', attributes: { K8S_CONTROLLER: 'mcs-cloudmap v1.0.0' } })).to.equal(false);
    expect(announced({ id: ourId, attributes: { K8S_CONTROLLER: 'mcs-cloudmap v1.0.0' } })).to.equal(true);
  });

  it('names the namespaces where any instance is not announced', () => {
    const x = { clusterId: 'cls1', clustersetId: 'clusterset1' };
    const ours = { id: `svc-${clusterTag(x)}`, attributes: { K8S_CONTROLLER: 'mcs-cloudmap v1.0.0' } };
    const v031 = {
      id: legacyInstanceId('TCP', '10.244.2.0', 8080),
      attributes: { K8S_CONTROLLER: 'aws-cloud-map-mcs-controller-for-k8s v0.3.1' },
    };
    expect([
      ...namespacesWithNonAnnouncing([
        { namespace: 'ours', instances: [ours] },
        { namespace: 'mixed', instances: [ours] },
        { namespace: 'mixed', instances: [ours, v031] },
        { namespace: 'empty', instances: [] },
      ]),
    ]).to.deep.equal(['mixed']);
  });

  it('judges each list of instances once, and a list that replaces it afresh', () => {
    const x = { clusterId: 'cls1', clustersetId: 'clusterset1' };
    const ours = { id: `svc-${clusterTag(x)}`, attributes: { K8S_CONTROLLER: 'mcs-cloudmap v1.0.0' } };
    const v031 = {
      id: legacyInstanceId('TCP', '10.244.2.0', 8080),
      attributes: { K8S_CONTROLLER: 'aws-cloud-map-mcs-controller-for-k8s v0.3.1' },
    };
    const before = [ours];
    expect(allAnnounced(before)).to.equal(true);
    expect(allAnnounced(before)).to.equal(true);
    expect(allAnnounced([...before, v031])).to.equal(false);
    expect([
      ...namespacesWithNonAnnouncing([
        { namespace: 'n', instances: before },
        { namespace: 'n', instances: [v031] },
      ]),
    ]).to.deep.equal(['n']);
  });
});
