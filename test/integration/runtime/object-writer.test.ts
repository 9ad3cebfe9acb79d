import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { withClusterSet } from '../../support/clusterset.ts';
import {
  CONTROLLER_NAME,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
  SERVICE_EXPORT_FINALIZER,
} from '../../../src/core/names.ts';
import { KubeApiError } from '../../../src/kube/api-error.ts';
import { kubeClientFor } from '../../../src/kube/client.ts';
import { ObjectWriter } from '../../../src/runtime/object-writer.ts';
import {
  ENDPOINT_SLICES,
  resourcePath,
  SERVICE_EXPORTS,
  SERVICE_IMPORTS,
  SERVICES,
  type KubeObject,
} from '../../../src/kube/resources.ts';
import { createTestNamespace, deleteNamespace, installCrds } from '../kube/support.ts';

type Obj = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown>; endpoints?: unknown[] };

describe('object writes: server-side apply, status, delete, finalizers', function () {
  this.timeout(60_000);
  const clusterSet = withClusterSet();
  let kc: KubeConfig;
  let ns: string;
  let writer: ObjectWriter;

  before(async () => {
    const cluster = clusterSet().clusters[0]!;
    kc = cluster.kubeConfig();
    await installCrds(cluster.kubeconfigPath);
    ns = await createTestNamespace(kc, 'kube-writer');
    writer = new ObjectWriter({ kubeConfig: kc });
  });

  after(async () => {
    await deleteNamespace(kc, ns);
  });

  const serviceImport = (name: string, port: number) => ({
    metadata: { name, namespace: ns },
    spec: { type: 'ClusterSetIP', ports: [{ name: 'http', protocol: 'TCP', port }] },
  });

  it('applying the same ServiceImport, derived Service and EndpointSlice twice changes nothing the second time', async () => {
    const si = await writer.apply<Obj>(SERVICE_IMPORTS, serviceImport('nginx', 80));
    const svc = await writer.apply<Obj>(SERVICES, {
      metadata: { name: 'imported-nginx', namespace: ns },
      spec: { type: 'ClusterIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
    });
    const slice = {
      metadata: {
        name: 'imported-nginx-cls1',
        namespace: ns,
        labels: {
          [LABEL_SERVICE_NAME]: 'nginx',
          [LABEL_SOURCE_CLUSTER]: 'cls1',
          [LABEL_MANAGED_BY]: CONTROLLER_NAME,
          [LABEL_KUBE_SERVICE_NAME]: 'imported-nginx',
        },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
      endpoints: [{ addresses: ['10.1.0.5'], conditions: { ready: true } }],
    };
    const es = await writer.apply<Obj>(ENDPOINT_SLICES, slice);
    expect(si.kind).to.equal('ServiceImport');
    expect(si.metadata.managedFields).to.satisfy((mf: { manager: string }[]) =>
      mf.some((m) => m.manager === 'mcs-cloudmap-worker'),
    );

    const si2 = await writer.apply<Obj>(SERVICE_IMPORTS, serviceImport('nginx', 80));
    const svc2 = await writer.apply<Obj>(SERVICES, {
      metadata: { name: 'imported-nginx', namespace: ns },
      spec: { type: 'ClusterIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
    });
    const es2 = await writer.apply<Obj>(ENDPOINT_SLICES, slice);
    expect(si2.metadata.resourceVersion).to.equal(si.metadata.resourceVersion);
    expect(svc2.metadata.resourceVersion).to.equal(svc.metadata.resourceVersion);
    expect(es2.metadata.resourceVersion).to.equal(es.metadata.resourceVersion);

    // A real change does write, and drops what the apply no longer lists (the endpoint).
    const es3 = await writer.apply<Obj>(ENDPOINT_SLICES, { ...slice, endpoints: [] });
    expect(es3.metadata.resourceVersion).to.not.equal(es.metadata.resourceVersion);
    expect(es3.endpoints ?? []).to.deep.equal([]);
  });

  it('applies ServiceExport and ServiceImport status on the status subresource, leaving spec alone', async () => {
    await kubeClientFor(kc).request({
      method: 'POST',
      path: resourcePath(SERVICE_EXPORTS, ns),
      body: {
        apiVersion: 'multicluster.x-k8s.io/v1beta1',
        kind: 'ServiceExport',
        metadata: { name: 'web', namespace: ns },
      },
    });
    const condition = {
      type: 'Valid',
      status: 'False',
      reason: 'NoService',
      message: 'Create Service web to export it.',
      lastTransitionTime: '2025-01-01T00:00:00Z',
      observedGeneration: 1,
    };
    const written = await writer.applyStatus<Obj>(SERVICE_EXPORTS, {
      metadata: { name: 'web', namespace: ns },
      status: { conditions: [condition] },
    });
    expect(written.status).to.deep.equal({ conditions: [condition] });
    const again = await writer.applyStatus<Obj>(SERVICE_EXPORTS, {
      metadata: { name: 'web', namespace: ns },
      status: { conditions: [condition] },
    });
    expect(again.metadata.resourceVersion).to.equal(written.metadata.resourceVersion);

    await writer.apply(SERVICE_IMPORTS, serviceImport('web', 8080));
    const si = await writer.applyStatus<Obj>(SERVICE_IMPORTS, {
      metadata: { name: 'web', namespace: ns },
      status: { clusters: [{ cluster: 'cls1' }] },
    });
    expect(si.status).to.deep.equal({ clusters: [{ cluster: 'cls1' }] });
    expect((si.spec as { ports: { port: number }[] }).ports[0]!.port).to.equal(8080);
  });

  it('errors name the verb, kind, namespace/name and cluster', async () => {
    let error: unknown;
    await writer
      .apply(SERVICE_IMPORTS, { metadata: { name: 'invalid', namespace: ns }, spec: { type: 'Nonsense', ports: [] } })
      .catch((e: unknown) => {
        error = e;
      });
    expect(error).to.be.instanceOf(KubeApiError);
    const e = error as KubeApiError;
    expect(e.statusCode).to.equal(422);
    expect(e.message).to.include(`PATCH ServiceImport ${ns}/invalid on cluster cls1: 422 Invalid`);
  });

  it("adds and removes a finalizer idempotently, and keeps others' finalizers under concurrent writers", async () => {
    await kubeClientFor(kc).request({
      method: 'POST',
      path: resourcePath(SERVICE_EXPORTS, ns),
      body: {
        apiVersion: 'multicluster.x-k8s.io/v1beta1',
        kind: 'ServiceExport',
        metadata: { name: 'fin', namespace: ns, finalizers: ['example.com/keep'] },
      },
    });
    const added = await writer.addFinalizer<Obj>(SERVICE_EXPORTS, ns, 'fin', SERVICE_EXPORT_FINALIZER);
    expect(added!.metadata.finalizers).to.deep.equal(['example.com/keep', SERVICE_EXPORT_FINALIZER]);
    const again = await writer.addFinalizer<Obj>(SERVICE_EXPORTS, ns, 'fin', SERVICE_EXPORT_FINALIZER);
    expect(again!.metadata.resourceVersion).to.equal(added!.metadata.resourceVersion);

    // Eight writers adding different finalizers at once: every write is guarded by resourceVersion, so conflicts are
    // retried and none is lost.
    const others = Array.from({ length: 8 }, (_, i) => `example.com/concurrent-${i}`);
    await Promise.all(
      others.map((f) =>
        new ObjectWriter({ kubeConfig: clusterSet().clusters[0]!.kubeConfig() }).addFinalizer(
          SERVICE_EXPORTS,
          ns,
          'fin',
          f,
        ),
      ),
    );
    const all = (await writer.get<Obj>(SERVICE_EXPORTS, ns, 'fin'))!.metadata.finalizers!;
    expect([...all].sort()).to.deep.equal(['example.com/keep', SERVICE_EXPORT_FINALIZER, ...others].sort());

    const removed = await writer.removeFinalizer<Obj>(SERVICE_EXPORTS, ns, 'fin', SERVICE_EXPORT_FINALIZER);
    expect(removed!.metadata.finalizers).to.not.include(SERVICE_EXPORT_FINALIZER);
    expect(removed!.metadata.finalizers).to.include('example.com/keep');
    const removedAgain = await writer.removeFinalizer<Obj>(SERVICE_EXPORTS, ns, 'fin', SERVICE_EXPORT_FINALIZER);
    expect(removedAgain!.metadata.resourceVersion).to.equal(removed!.metadata.resourceVersion);

    // A deleted object waits on its finalizers; removing the last one lets it go, and later calls see it gone.
    await writer.delete(SERVICE_EXPORTS, ns, 'fin');
    const deleting = (await writer.get<Obj>(SERVICE_EXPORTS, ns, 'fin'))!;
    expect(deleting.metadata.deletionTimestamp).to.be.a('string');
    expect(
      (await writer.addFinalizer<Obj>(SERVICE_EXPORTS, ns, 'fin', 'example.com/late'))!.metadata.finalizers,
    ).to.not.include('example.com/late');
    for (const f of ['example.com/keep', ...others]) await writer.removeFinalizer(SERVICE_EXPORTS, ns, 'fin', f);
    expect(await writer.get(SERVICE_EXPORTS, ns, 'fin')).to.equal(undefined);
    expect(await writer.removeFinalizer(SERVICE_EXPORTS, ns, 'fin', SERVICE_EXPORT_FINALIZER)).to.equal(undefined);
  });

  it('delete with a uid precondition refuses to delete a newer object of the same name', async () => {
    const first = await writer.apply<Obj>(SERVICE_IMPORTS, serviceImport('recreated', 80));
    expect(await writer.delete(SERVICE_IMPORTS, ns, 'recreated', { uid: first.metadata.uid })).to.equal(true);
    const second = await writer.apply<Obj>(SERVICE_IMPORTS, serviceImport('recreated', 80));
    let error: unknown;
    await writer.delete(SERVICE_IMPORTS, ns, 'recreated', { uid: first.metadata.uid }).catch((e: unknown) => {
      error = e;
    });
    expect((error as KubeApiError).statusCode).to.equal(409);
    expect((await writer.get<Obj>(SERVICE_IMPORTS, ns, 'recreated'))!.metadata.uid).to.equal(second.metadata.uid);
    expect(await writer.delete(SERVICE_IMPORTS, ns, 'never-existed')).to.equal(false);
  });
});
