// Migration (W2): a ServiceExport stored as v1alpha1 by an older controller, with conditions lacking reason
// and lastTransitionTime, is read through our conversion as v1beta1, normalised, and can be written again at v1beta1.

import { expect } from 'chai';
import type { TestCluster } from '../../../hack/testbed/index.ts';
import { WORKER_SERVICE_ACCOUNT } from '../../../src/core/names.ts';
import { LEGACY_REASON } from '../../../src/webhook/conversion/convert.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { createNamespace, deleteNamespace } from '../../support/kube.ts';
import { kubectlOk, startRegisteredWebhook, storedObject, type RegisteredWebhook } from './harness.ts';

const NS = 'webhook-legacy';

/** A v1alpha1-only ServiceExport CRD like the one the AWS controller v0.3.1 installs: lax conditions, v1alpha1 stored. */
const legacyCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'serviceexports.multicluster.x-k8s.io' },
  spec: {
    group: 'multicluster.x-k8s.io',
    scope: 'Namespaced',
    names: {
      kind: 'ServiceExport',
      listKind: 'ServiceExportList',
      plural: 'serviceexports',
      singular: 'serviceexport',
    },
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe('conversion of objects an older controller stored as v1alpha1 (W2)', function () {
  this.timeout(120_000);
  const clusterSet = withClusterSet();
  let cluster: TestCluster;
  let webhook: RegisteredWebhook | undefined;
  const ok = (args: string[], input?: string) => kubectlOk(cluster.kubeconfigPath, args, input);
  const key = `/registry/multicluster.x-k8s.io/serviceexports/${NS}/legacy`;

  before(async () => {
    cluster = clusterSet().clusters[1]!;
    // Start from the older controller's world: its CRD, and an export whose conditions it wrote without reason/time.
    // Ours cannot simply be replaced by it (v1beta1 may already be a stored version), so it goes first.
    await ok(['delete', 'crd', 'serviceexports.multicluster.x-k8s.io', '--ignore-not-found', '--timeout=60s']);
    await ok(['create', '-f', '-'], JSON.stringify(legacyCrd));
    await ok(['wait', '--for=condition=Established', '--timeout=60s', 'crd/serviceexports.multicluster.x-k8s.io']);
    await createNamespace(cluster.kubeConfig(), NS);
    await ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'multicluster.x-k8s.io/v1alpha1',
        kind: 'ServiceExport',
        metadata: { name: 'legacy', namespace: NS },
      }),
    );
    await ok([
      'patch',
      'serviceexports.v1alpha1.multicluster.x-k8s.io',
      'legacy',
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          conditions: [
            { type: 'Valid', status: 'True' },
            { type: 'Ready', status: 'True', message: 'exported' },
          ],
        },
      }),
    ]);
    webhook = await startRegisteredWebhook({
      kubeconfigPath: cluster.kubeconfigPath,
      policy: 'Warn',
      worker: WORKER_SERVICE_ACCOUNT,
    });
  });

  after(async () => {
    await webhook?.stop();
    if (cluster) await deleteNamespace(cluster.kubeConfig(), NS);
  });

  it('etcd still holds the object as v1alpha1 after our CRDs are installed', async () => {
    expect((await storedObject(cluster.endpoints.etcd, key)).apiVersion).to.equal('multicluster.x-k8s.io/v1alpha1');
  });

  it('reading it as v1beta1 goes through conversion, which completes the legacy conditions', async () => {
    const obj = JSON.parse(
      (await ok(['get', 'serviceexports.v1beta1.multicluster.x-k8s.io', 'legacy', '-n', NS, '-o', 'json'])).stdout,
    ) as {
      apiVersion: string;
      metadata: { creationTimestamp: string };
      status: { conditions: Array<Record<string, string>> };
    };
    expect(obj.apiVersion).to.equal('multicluster.x-k8s.io/v1beta1');
    expect(obj.status.conditions).to.deep.equal([
      {
        type: 'Valid',
        status: 'True',
        reason: LEGACY_REASON,
        message: '',
        lastTransitionTime: obj.metadata.creationTimestamp,
      },
      {
        type: 'Ready',
        status: 'True',
        reason: LEGACY_REASON,
        message: 'exported',
        lastTransitionTime: obj.metadata.creationTimestamp,
      },
    ]);
  });

  it('a later status write at v1beta1 validates against our schema and stores v1beta1', async () => {
    await ok([
      'patch',
      'serviceexports.v1beta1.multicluster.x-k8s.io',
      'legacy',
      '-n',
      NS,
      '--subresource=status',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/status/conditions/0/reason', value: 'Valid' }]),
    ]);
    expect((await storedObject(cluster.endpoints.etcd, key)).apiVersion).to.equal('multicluster.x-k8s.io/v1beta1');
    const reason = (
      await ok(['get', 'serviceexport', 'legacy', '-n', NS, '-o', 'jsonpath={.status.conditions[0].reason}'])
    ).stdout;
    expect(reason).to.equal('Valid');
  });
});
