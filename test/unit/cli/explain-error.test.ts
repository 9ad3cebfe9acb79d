import { expect } from 'chai';
import { errorCode, explainCloudMapError, explainKubeError } from '../../../src/cli/explain-error.ts';
import { CloudMapCallError } from '../../../src/cloudmap/errors.ts';
import { KubeApiError } from '../../../src/kube/api-error.ts';

function kubeError(statusCode: number | undefined, cause?: unknown): KubeApiError {
  return new KubeApiError({
    verb: 'GET',
    target: 'serviceexports',
    cluster: 'cls1',
    statusCode,
    detail: 'x',
    ...(cause === undefined ? {} : { cause }),
  });
}

function sdkError(name: string, status?: number): Error {
  return Object.assign(new Error(`${name} happened`), {
    name,
    ...(status === undefined ? {} : { $metadata: { httpStatusCode: status } }),
  });
}

describe('mcs-cloudmap status: error explanations', () => {
  it('finds the socket error code through fetch/undici cause chains and AggregateErrors', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(errorCode(new Error('fetch failed', { cause: refused }))).to.equal('ECONNREFUSED');
    expect(errorCode(new Error('fetch failed', { cause: new AggregateError([refused]) }))).to.equal('ECONNREFUSED');
    expect(errorCode(new Error('plain'))).to.equal(undefined);
  });

  it('says what to do for each way a cluster can fail', () => {
    const table: [unknown, string][] = [
      [
        kubeError(undefined, Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })),
        'cannot reach the API server https://h:6443 (ECONNREFUSED); check that the cluster is running',
      ],
      [
        kubeError(401),
        'rejected the credentials (401 Unauthorized) while listing serviceexports; refresh the credentials',
      ],
      [kubeError(403), 'may not list serviceexports (403 Forbidden); grant get/list'],
      [kubeError(404), 'is not served by https://h:6443 (404); install the CRDs'],
      [kubeError(503), 'failed while listing serviceexports (HTTP 503)'],
      [
        kubeError(undefined, Object.assign(new Error('self signed'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' })),
        'TLS verification of https://h:6443 failed',
      ],
    ];
    for (const [err, expected] of table) {
      const text = explainKubeError(err, 'cls1', 'https://h:6443', 'serviceexports');
      expect(text).to.contain('context "cls1"').and.contain(expected);
    }
  });

  it('says what to do for missing AWS credentials, region, permissions and an unreachable endpoint', () => {
    const wrapped = new CloudMapCallError('ListNamespaces', {}, sdkError('CredentialsProviderError'), 1);
    expect(explainCloudMapError(wrapped, undefined, 'ListNamespaces'))
      .to.contain('no AWS credentials')
      .and.contain('--cloudmap=false');
    expect(explainCloudMapError(new Error('Region is missing'), undefined, 'ListNamespaces')).to.contain(
      'pass --region or set AWS_REGION',
    );
    expect(explainCloudMapError(sdkError('AccessDeniedException', 400), undefined, 'ListInstances')).to.contain(
      'may not call servicediscovery:ListInstances',
    );
    expect(explainCloudMapError(sdkError('UnrecognizedClientException', 400), undefined, 'ListNamespaces')).to.contain(
      'rejected the AWS credentials',
    );
    const down = new CloudMapCallError(
      'ListNamespaces',
      {},
      Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
      4,
    );
    expect(explainCloudMapError(down, 'http://127.0.0.1:1', 'ListNamespaces')).to.equal(
      'cannot reach http://127.0.0.1:1 (ECONNREFUSED) on ListNamespaces; check --cloudmap-endpoint / --region and the network.',
    );
  });
});
