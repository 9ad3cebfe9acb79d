// X5, strict port conflicts, on the shared testbed: the upstream conformance cases "exported services with same port name
// but different port numbers on each cluster should only route traffic to the cluster that exposes the port" and "...
// different port name on each cluster should route traffic to each port only to the cluster that exposes it", checked
// on the imported EndpointSlices every cluster's kube-proxy (and any GEP-1748 gateway) routes by. Watches record every
// version of the slices, the derived Service and the ServiceImport each API server publishes, so a state that existed
// for a moment between two writes counts, not only the final one. Also I8: status.endpointSliceObjects, in both versions.
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  makeInformer,
  type Informer,
  type KubernetesListObject,
  type KubernetesObject,
  type V1EndpointSlice,
  type V1Service,
} from '@kubernetes/client-node';
import { expect } from 'chai';
import {
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
  MCS_GROUP,
  SERVICE_IMPORT_PLURAL,
  STORAGE_VERSION,
} from '../../src/core/names.ts';
import { condition, withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, exportReady, runApp, service } from '../support/workloads.ts';

const NS = 'e2e-strict-ports';

type Kind = 'slice' | 'service' | 'import';
type Ported = KubernetesObject & {
  ports?: Array<{ name?: string; port?: number | null }>;
  spec?: { ports?: Array<{ name?: string; port?: number }> };
  endpoints?: unknown[];
};

/** Every version of one import's EndpointSlices, derived Service and ServiceImport one API server published. */
class History {
  /** In the order of their resourceVersion: one etcd revision counter orders all three kinds in one API server. */
  readonly #versions: Array<{ rv: number; kind: Kind; name: string; object: Ported | undefined }> = [];
  readonly #informers: Array<Informer<KubernetesObject>> = [];

  constructor(cluster: E2ECluster, name: string) {
    const kc = cluster.kubeConfig;
    const selector = `${LABEL_SERVICE_NAME}=${name}`;
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    this.#record(
      'slice',
      makeInformer<V1EndpointSlice>(
        kc,
        `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
        () => discovery.listNamespacedEndpointSlice({ namespace: NS, labelSelector: selector }),
        selector,
      ),
    );
    this.#record(
      'service',
      makeInformer<V1Service>(
        kc,
        `/api/v1/namespaces/${NS}/services`,
        () => core.listNamespacedService({ namespace: NS, labelSelector: selector }),
        selector,
      ),
    );
    this.#record(
      'import',
      makeInformer<KubernetesObject>(
        kc,
        `/apis/${MCS_GROUP}/${STORAGE_VERSION}/namespaces/${NS}/${SERVICE_IMPORT_PLURAL}`,
        async () =>
          (await custom.listNamespacedCustomObject({
            group: MCS_GROUP,
            version: STORAGE_VERSION,
            namespace: NS,
            plural: SERVICE_IMPORT_PLURAL,
          })) as KubernetesListObject<KubernetesObject>,
      ),
      name,
    );
  }

  #record<T extends KubernetesObject>(kind: Kind, informer: Informer<T>, only?: string): void {
    const add = (object: T, deleted: boolean) => {
      if (only !== undefined && object.metadata?.name !== only) return;
      this.#versions.push({
        rv: Number(object.metadata?.resourceVersion),
        kind,
        name: object.metadata?.name ?? '',
        object: deleted ? undefined : object,
      });
    };
    informer.on('add', (o) => add(o, false));
    informer.on('update', (o) => add(o, false));
    informer.on('delete', (o) => add(o, true));
    this.#informers.push(informer);
  }

  start(): Promise<void[]> {
    return Promise.all(this.#informers.map((i) => i.start()));
  }

  stop(): Promise<void[]> {
    return Promise.all(this.#informers.map((i) => i.stop()));
  }

  /**
   * Every state the API server went through, from the first version recorded: the derived Service's and the
   * ServiceImport's port numbers by name, and which source clusters had endpoints behind each port name in the slices.
   */
  states(): Array<{ stated: Array<Record<string, number>>; behind: Record<string, string[]> }> {
    const current = new Map<string, Ported>();
    return [...this.#versions]
      .sort((a, b) => a.rv - b.rv)
      .map((v) => {
        if (v.object === undefined) current.delete(`${v.kind}/${v.name}`);
        else current.set(`${v.kind}/${v.name}`, v.object);
        const stated: Array<Record<string, number>> = [];
        const behind: Record<string, string[]> = {};
        for (const [key, object] of current) {
          if (key.startsWith('slice/')) {
            if ((object.endpoints ?? []).length === 0) continue;
            const source = object.metadata?.labels?.[LABEL_SOURCE_CLUSTER] ?? '?';
            for (const p of object.ports ?? [])
              behind[p.name ?? ''] = [...new Set([...(behind[p.name ?? ''] ?? []), source])].sort();
          } else {
            stated.push(Object.fromEntries((object.spec?.ports ?? []).map((p) => [p.name ?? '', p.port ?? 0])));
          }
        }
        return { stated, behind };
      });
  }
}

/** Imported endpoints by source cluster and port name: `<cluster> <port>` → sorted addresses. */
async function routedPorts(cluster: E2ECluster, name: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const slice of await cluster.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${name}`)) {
    for (const p of slice.ports ?? []) {
      const key = `${slice.metadata!.labels![LABEL_SOURCE_CLUSTER]} ${p.name ?? ''}`;
      out[key] = [...(out[key] ?? []), ...(slice.endpoints ?? []).map((e) => e.addresses[0]!)].sort();
    }
  }
  return out;
}

async function portConflictEverywhere(clusters: readonly E2ECluster[], name: string): Promise<void> {
  for (const cluster of clusters) {
    await eventually(
      `${cluster.id}: Conflict=True PortConflict on ${name}`,
      async () => condition(await cluster.serviceExport(NS, name), 'Conflict')?.reason === 'PortConflict',
    );
  }
}

describe('e2e: strict port conflicts (X5)', function () {
  this.timeout(300_000);
  const e2e = withE2E({ namespaces: [NS] });
  const histories: History[] = [];

  async function record(name: string): Promise<History[]> {
    const mine = e2e().clusters.map((cluster) => new History(cluster, name));
    histories.push(...mine);
    await Promise.all(mine.map((h) => h.start()));
    return mine;
  }

  before(async function () {
    this.timeout(120_000);
    await createNamespaces(e2e().clusters, NS);
  });

  after(async () => {
    await Promise.all(histories.map((h) => h.stop()));
  });

  it("X5: same port name, different numbers: the port routes only to the older export's cluster, in every cluster, at every moment", async () => {
    const { cls1, cls2, clusters } = e2e();
    const ips = {
      cls1: await runApp(cls1, NS, 'hello', 2, { ports: [{ name: 'tcp', port: 42 }] }),
      cls2: await runApp(cls2, NS, 'hello', 2, { ports: [{ name: 'tcp', port: 4242 }] }),
    };
    await exportReady(cls1, NS, 'hello');
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: cls1's endpoints imported behind "tcp"`,
        async () => JSON.stringify(await routedPorts(cluster, 'hello')) === JSON.stringify({ 'cls1 tcp': ips.cls1 }),
      );
    }
    const history = await record('hello');
    await exportReady(cls2, NS, 'hello');

    await portConflictEverywhere(clusters, 'hello');
    const conflict = condition(await cls2.serviceExport(NS, 'hello'), 'Conflict')!;
    expect(conflict.status).to.equal('True');
    expect(conflict.message).to.contain(
      'port "tcp" is TCP/42 in cluster cls1 (older export, wins) but TCP/4242 in cluster cls2, so the endpoints of cls2 are left out of port "tcp" and receive no traffic for it',
    );
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: status.clusters lists cls1 and cls2`,
        async () =>
          JSON.stringify((await cluster.serviceImport(NS, 'hello'))?.status?.clusters) ===
          JSON.stringify([{ cluster: 'cls1' }, { cluster: 'cls2' }]),
      );
      const si = (await cluster.serviceImport(NS, 'hello'))!;
      expect(si.spec.ports).to.deep.equal([{ name: 'tcp', port: 42, protocol: 'TCP' }]);
      expect(await routedPorts(cluster, 'hello'), `${cluster.id}: only cls1's endpoints behind "tcp"`).to.deep.equal({
        'cls1 tcp': ips.cls1,
      });
    }
    for (const [i, h] of history.entries()) {
      const states = h.states();
      expect(states.length, `${clusters[i]!.id}: versions recorded`).to.be.greaterThan(0);
      expect(
        states.filter((s) => Object.values(s.behind).some((sources) => sources.includes('cls2'))),
        `${clusters[i]!.id}: no state put cls2 behind a port`,
      ).to.deep.equal([]);
    }
  });

  it('X5: different port names: each port routes only to the cluster that exposes it', async () => {
    const { cls2, clusters } = e2e();
    cls2.apply([service(NS, 'hello', { ports: [{ name: 'tcp2', port: 4242 }] })]);
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: "tcp" to cls1, "tcp2" to cls2`,
        async () =>
          JSON.stringify(Object.keys(await routedPorts(cluster, 'hello')).sort()) ===
          JSON.stringify(['cls1 tcp', 'cls2 tcp2']),
      );
      const ports = ((await cluster.serviceImport(NS, 'hello'))?.spec.ports ?? [])
        .map((p) => `${p.name} ${p.protocol}/${p.port}`)
        .sort();
      expect(ports).to.deep.equal(['tcp TCP/42', 'tcp2 TCP/4242']);
    }
    for (const [i, h] of histories.entries()) {
      const wrong = h
        .states()
        .filter((s) => (s.behind.tcp ?? []).includes('cls2') || (s.behind.tcp2 ?? []).includes('cls1'));
      expect(wrong, `${clusters[i]!.id}: cls2 never behind "tcp", cls1 never behind "tcp2"`).to.deep.equal([]);
    }
  });

  it('X5: when the older export renumbers a port both clusters agreed on, no moment routes that port to the cluster that now loses it', async () => {
    const { cls1, cls2, clusters } = e2e();
    await runApp(cls1, NS, 'agree', 1, { ports: [{ name: 'tcp', port: 42 }] });
    await runApp(cls2, NS, 'agree', 1, { ports: [{ name: 'tcp', port: 42 }] });
    await exportReady(cls1, NS, 'agree');
    for (const cluster of clusters)
      await eventually(
        `${cluster.id}: agree imported`,
        async () => (await cluster.serviceImport(NS, 'agree')) !== undefined,
      );
    await exportReady(cls2, NS, 'agree');
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: both clusters behind "tcp"`,
        async () =>
          JSON.stringify(Object.keys(await routedPorts(cluster, 'agree')).sort()) ===
          JSON.stringify(['cls1 tcp', 'cls2 tcp']),
      );
    }
    const history = await record('agree');
    // cls1 stays the older export, so the import restates "tcp" as TCP/43; cls2, still TCP/42, loses the port.
    cls1.apply([service(NS, 'agree', { ports: [{ name: 'tcp', port: 43 }] })]);
    await portConflictEverywhere(clusters, 'agree');
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: "tcp" is TCP/43 and routes to cls1 only`,
        async () =>
          JSON.stringify(Object.keys(await routedPorts(cluster, 'agree'))) === JSON.stringify(['cls1 tcp']) &&
          JSON.stringify((await cluster.serviceImport(NS, 'agree'))?.spec.ports) ===
            JSON.stringify([{ name: 'tcp', port: 43, protocol: 'TCP' }]),
      );
    }
    for (const [i, h] of history.entries()) {
      const states = h.states();
      expect(
        states.some((s) => s.stated.some((ports) => ports.tcp === 43)),
        `${clusters[i]!.id}: the restatement was recorded`,
      ).to.equal(true);
      // cls2 defines "tcp" as TCP/42 throughout: while the Service or the ServiceImport states another number, no slice
      // may have cls2's endpoints behind "tcp".
      const wrong = states.filter(
        (s) =>
          s.stated.some((ports) => ports.tcp !== undefined && ports.tcp !== 42) &&
          (s.behind.tcp ?? []).includes('cls2'),
      );
      expect(
        wrong,
        `${clusters[i]!.id}: states with cls2 behind "tcp" while it is stated as another number`,
      ).to.deep.equal([]);
    }
  });

  it('I8: every ServiceImport says its EndpointSlices are Present, read as v1beta1 and as v1alpha1', async () => {
    for (const cluster of e2e().clusters) {
      const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
      for (const version of ['v1beta1', 'v1alpha1']) {
        const si = (await custom.getNamespacedCustomObject({
          group: MCS_GROUP,
          version,
          namespace: NS,
          plural: SERVICE_IMPORT_PLURAL,
          name: 'hello',
        })) as { apiVersion: string; status?: { endpointSliceObjects?: string } };
        expect([si.apiVersion, si.status?.endpointSliceObjects], cluster.id).to.deep.equal([
          `${MCS_GROUP}/${version}`,
          'Present',
        ]);
      }
    }
  });
});
