// The runbook of docs/migration.md end to end (M3): cls1 runs a stand-in for the AWS controller v0.3.1
// (test/support/v031.ts: its CRDs, finalizer, instance ids and attributes, 10 s caches, no marker bumps) and cls2 runs
// mcs-cloudmap. cls1 is switched to mcs-cloudmap, step by step, while cls2's import of cls1's endpoints is sampled
// every 100 ms: it must never lose one. Then cls1 goes back to the stand-in the same way, and finally unexports, and
// nothing of cls1 is left in Cloud Map.
import {
  DeleteServiceCommand,
  DeregisterInstanceCommand,
  DiscoverInstancesCommand,
  GetServiceCommand,
  ListInstancesCommand,
  ListNamespacesCommand,
  ListServicesCommand,
  type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { MARKER_SERVICE, markerNamespaceName } from '../../src/change-detection/change-marker.ts';
import { parseInstanceId } from '../../src/core/instance-id.ts';
import { CustomObjectsApi } from '@kubernetes/client-node';
import {
  CONTROLLER_NAME,
  LABEL_CREATED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
  MCS_GROUP,
  SERVICE_EXPORT_FINALIZER,
  SERVICE_IMPORT_PLURAL,
} from '../../src/core/names.ts';
import { V031_DERIVED_SERVICE_ANNOTATION } from '../../src/core/service-import.ts';
import { clusterProperties } from '../../hack/demo/cluster-properties.ts';
import { V031_FINALIZER, V031StandIn, v031Crds, v031DerivedName } from '../support/v031.ts';
import { condition, retried, withE2E, type E2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, exportReady, importedBySource, runApp } from '../support/workloads.ts';

const NS = 'e2e-migration';
/** A namespace only cls2 (mcs-cloudmap) exports in, then v0.3.1 too; and one v0.3.1 creates in Cloud Map. */
const NS_OURS = 'e2e-migration-ours';
const NS_NEW = 'e2e-migration-new';
/** v0.3.1's new exports reach mcs-cloudmap within this, at the default settings, wherever they land (M3). */
const SEEN_WITHIN_MS = 10_000;
const APP = 'web';
/** Exported by cls2 (mcs-cloudmap throughout), imported by cls1. */
const PEER = 'peer';
const REPLICAS = 3;
/** cls1's worker beats every HEARTBEAT_S; cls2 judges a cluster silent after TTL_S (the runbook's "within the TTL"). */
const HEARTBEAT_S = 5;
const TTL_S = 60;
const CRDS = [
  'serviceexports.multicluster.x-k8s.io',
  'serviceimports.multicluster.x-k8s.io',
  'clusterproperties.about.k8s.io',
];
const WEBHOOKS = [
  'validatingwebhookconfiguration/mcs-cloudmap-validating',
  'mutatingwebhookconfiguration/mcs-cloudmap-mutating',
];

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** Objects as `kubectl get -o json` shows them, without what the server sets, ready to apply again. */
function saved(cluster: E2ECluster, args: readonly string[]): KubeObject[] {
  const { items } = JSON.parse(cluster.kubectl(['get', ...args, '-o', 'json'])) as { items: KubeObject[] };
  return items.map(({ status: _status, metadata, ...rest }) => {
    const { 'kubectl.kubernetes.io/last-applied-configuration': _last, ...annotations } = metadata.annotations ?? {};
    return {
      ...rest,
      metadata: { name: metadata.name, ...(metadata.labels ? { labels: metadata.labels } : {}), annotations },
    };
  });
}

/** The ids of Cloud Map namespace `namespace` and its service `service`, looked up once (ListNamespaces is 0.5/s per account). */
async function cloudMapIds(
  cloudMap: ServiceDiscoveryClient,
  namespace: string,
  service: string,
): Promise<{ namespaceId: string; serviceId: string }> {
  const namespaceId = (
    await retried('ListNamespaces', () => cloudMap.send(new ListNamespacesCommand({})))
  ).Namespaces!.find((n) => n.Name === namespace)!.Id!;
  const listed = await retried('ListServices', () =>
    cloudMap.send(
      new ListServicesCommand({ Filters: [{ Name: 'NAMESPACE_ID', Values: [namespaceId], Condition: 'EQ' }] }),
    ),
  );
  return { namespaceId, serviceId: listed.Services!.find((s) => s.Name === service)!.Id! };
}

/** The ids of `clusterId`'s instances of the service, read with ListInstances (not through any cache). */
async function instancesOf(cloudMap: ServiceDiscoveryClient, serviceId: string, clusterId: string): Promise<string[]> {
  const listed =
    (await retried('ListInstances', () => cloudMap.send(new ListInstancesCommand({ ServiceId: serviceId }))))
      .Instances ?? [];
  return listed
    .filter((i) => i.Attributes?.CLUSTER_ID === clusterId)
    .map((i) => i.Id!)
    .sort();
}

/** Every listed id is in v0.3.1's format (`tcp-10_244_2_0-8080`), or every one in ours. */
function allIn(ids: readonly string[], format: 'legacy' | 'mcs-cloudmap', count: number): boolean {
  return ids.length === count && ids.every((id) => parseInstanceId(id)?.format === format);
}

interface Sample {
  at: number;
  ok: boolean;
  ready: number;
}

/**
 * Samples, every `everyMs`, whether `cluster` imports every one of the `expected` endpoints of `name` (from
 * `source`'s slices, or from any slice of the import when undefined) as ready, and lists `source` in the ServiceImport's
 * status.clusters (read as v1alpha1, the version both controllers serve); stop() returns the samples.
 */
function sampleImport(
  cluster: E2ECluster,
  name: string,
  expected: readonly string[],
  source?: string,
  everyMs = 100,
): { stop: () => Promise<Sample[]> } {
  const samples: Sample[] = [];
  let running = true;
  const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      const [slices, serviceImport] = await Promise.all([
        cluster.endpointSlices(
          NS,
          `${LABEL_SERVICE_NAME}=${name}${source === undefined ? '' : `,${LABEL_SOURCE_CLUSTER}=${source}`}`,
        ),
        custom
          .getNamespacedCustomObject({
            group: MCS_GROUP,
            version: 'v1alpha1',
            plural: SERVICE_IMPORT_PLURAL,
            namespace: NS,
            name,
          })
          .catch(() => undefined) as Promise<{ status?: { clusters?: Array<{ cluster: string }> } } | undefined>,
      ]);
      const ready = new Set(
        slices.flatMap((s) =>
          (s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).map((e) => e.addresses[0]!),
        ),
      );
      const listed =
        serviceImport !== undefined &&
        (source === undefined || (serviceImport.status?.clusters ?? []).some((c) => c.cluster === source));
      samples.push({ at: started, ok: listed && expected.every((ip) => ready.has(ip)), ready: ready.size });
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (Date.now() - started))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** The longest time cls2 may have lacked one of cls1's endpoints: from the last good sample before a bad run to the first good one after. */
interface Gap {
  bad: number;
  gapMs: number;
  meanIntervalMs: number;
}

function longestGap(samples: readonly Sample[]): Gap {
  let gapMs = 0;
  let lastGood: number | undefined;
  let inBad = false;
  for (const s of samples) {
    if (!s.ok) inBad = true;
    else {
      if (inBad) gapMs = Math.max(gapMs, s.at - (lastGood ?? samples[0]!.at));
      inBad = false;
      lastGood = s.at;
    }
  }
  if (inBad) gapMs = Math.max(gapMs, samples.at(-1)!.at - (lastGood ?? samples[0]!.at));
  const meanIntervalMs = samples.length > 1 ? (samples.at(-1)!.at - samples[0]!.at) / (samples.length - 1) : 0;
  return { bad: samples.filter((s) => !s.ok).length, gapMs, meanIntervalMs };
}

/** A JSON patch removing `finalizer` from cls1's ServiceExport, as the runbook's loop does. */
function removeFinalizer(cluster: E2ECluster, finalizer: string): void {
  const finalizers = JSON.parse(
    cluster.kubectl([
      'get',
      'serviceexports.v1alpha1.multicluster.x-k8s.io',
      APP,
      '-n',
      NS,
      '-o',
      'jsonpath={.metadata.finalizers}',
    ]) || '[]',
  ) as string[];
  const index = finalizers.indexOf(finalizer);
  if (index >= 0)
    cluster.kubectl([
      'patch',
      'serviceexport',
      APP,
      '-n',
      NS,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'remove', path: `/metadata/finalizers/${index}` }]),
    ]);
}

function finalizersOf(cluster: E2ECluster): string[] {
  return JSON.parse(
    cluster.kubectl([
      'get',
      'serviceexports.v1alpha1.multicluster.x-k8s.io',
      APP,
      '-n',
      NS,
      '-o',
      'jsonpath={.metadata.finalizers}',
    ]) || '[]',
  ) as string[];
}

describe('e2e: a cluster on the AWS controller v0.3.1 migrated to mcs-cloudmap and back, one step at a time (M3)', function () {
  this.timeout(900_000);
  let standIn: V031StandIn | undefined;
  let env: E2E | undefined;
  // Registered before the suite's own clean-up, so it runs first: the stand-in stops, and a ServiceExport it would have
  // released (a failed test) does not hold the namespace's deletion.
  after(async function () {
    this.timeout(60_000);
    await standIn?.stop();
    standIn?.destroy();
    const distinct = [...new Set(errors.map((e) => e.slice(0, 300)))];
    if (failed) console.log(`      the stand-in's last steps:\n        ${standIn?.trace.join('\n        ')}`);
    if (distinct.length > 0)
      console.log(
        `      the stand-in's failed reconciles (${errors.length}, retried), distinct:\n        ${distinct.join('\n        ')}`,
      );
    if (env) {
      try {
        removeFinalizer(env.cls1, V031_FINALIZER);
      } catch {
        // no export left
      }
    }
  });
  let failed = false;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });
  const e2e = withE2E({ namespaces: [NS, NS_OURS, NS_NEW], clusterSet: {} });
  let ours: KubeObject[] = [];
  let webhooks: KubeObject[] = [];
  let pods: string[] = [];
  let peerPods: string[] = [];
  let web: { namespaceId: string; serviceId: string } | undefined;
  /** What the stand-in's reconciles failed with (retried, as v0.3.1 retries): reported, not judged. */
  const errors: string[] = [];

  /**
   * Samples cls2's import of cls1's service and cls1's own import of cls2's, from 2 s before the switch until stop();
   * returns the longest gaps.
   */
  async function sampleBoth(
    cls1: E2ECluster,
    cls2: E2ECluster,
  ): Promise<{ stop: () => Promise<{ samples: Sample[]; gap: Gap; ownGap: Gap }> }> {
    const other = sampleImport(cls2, APP, pods, 'cls1');
    const own = sampleImport(cls1, PEER, peerPods);
    await new Promise((r) => setTimeout(r, 2000));
    return {
      async stop() {
        const samples = await other.stop();
        return { samples, gap: longestGap(samples), ownGap: longestGap(await own.stop()) };
      },
    };
  }

  it('M3: cls1 runs v0.3.1 (its CRDs at v1alpha1 only, its finalizer and instances) and cls2 imports from it', async () => {
    env = e2e();
    const { cs, cls1, cls2, clusters, cloudMap, stopWorker, startWorker, stopWebhook } = env;
    // cls1 as a v0.3.1 cluster: no mcs-cloudmap, v0.3.1's CRDs. What was installed is kept to be applied again in step 3.
    ours = saved(cls1, ['crd', ...CRDS]);
    webhooks = saved(cls1, WEBHOOKS);
    await stopWorker(cls1);
    await stopWebhook(cls1);
    // A v0.3.1 cluster never wrote a heartbeat or marker: the ones of the worker the suite started go.
    await leaveChangeMarker(
      cloudMap,
      (await cloudMapIds(cloudMap, markerNamespaceName(cs.clustersetId), MARKER_SERVICE)).serviceId,
      'cls1',
    );
    cls1.kubectl(['delete', ...WEBHOOKS]);
    cls1.kubectl(['delete', 'crd', ...CRDS, '--wait=true', '--timeout=120s']);
    cls1.apply(v031Crds(ours as unknown as Parameters<typeof v031Crds>[0]));
    cls1.kubectl(['wait', '--for=condition=Established', ...CRDS.map((c) => `crd/${c}`), '--timeout=60s']);
    cls1.apply(clusterProperties('cls1', cs.clustersetId).replaceAll('about.k8s.io/v1beta1', 'about.k8s.io/v1alpha1'));
    standIn = new V031StandIn({
      kubeConfig: cls1.kubeConfig,
      clusterId: 'cls1',
      clustersetId: cs.clustersetId,
      cloudMap: { region: cs.region, endpoint: cs.cloudMapEndpoint },
      onError: (err) => errors.push(String(err)),
      importNamespaces: [NS],
    });
    standIn.start();

    await createNamespaces(clusters, NS);
    pods = await runApp(cls1, NS, APP, REPLICAS);
    cls1.apply([
      { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: APP, namespace: NS } },
    ]);
    await eventually(
      "v0.3.1's service in Cloud Map",
      async () => (web = await cloudMapIds(cloudMap, NS, APP).catch(() => undefined)) !== undefined,
      60_000,
    );
    await eventually(
      "v0.3.1's instances of cls1 in Cloud Map",
      async () => allIn(await instancesOf(cloudMap, web!.serviceId, 'cls1'), 'legacy', REPLICAS),
      60_000,
    );
    expect(finalizersOf(cls1)).to.deep.equal([V031_FINALIZER]);
    // Both controllers ran before the migration: cls2's worker, restarted, reads the service v0.3.1 created.
    await stopWorker(cls2);
    await startWorker(cls2, { MCS_DEAD_CLUSTER_TTL: `${TTL_S}s` });
    await eventually(
      "cls2 to import cls1's endpoints",
      async () => {
        const slices = await cls2.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${APP},${LABEL_SOURCE_CLUSTER}=cls1`);
        return slices.flatMap((s) => s.endpoints ?? []).length === REPLICAS;
      },
      60_000,
    );
    // And cls1 imports what cls2 exports, as v0.3.1 does: its ServiceImport, derived Service and slice.
    peerPods = await runApp(cls2, NS, PEER, 2);
    await exportReady(cls2, NS, PEER);
    await eventually(
      "cls1 (v0.3.1) to import cls2's service",
      async () => {
        const slices = await cls1.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${PEER}`);
        return slices.flatMap((s) => s.endpoints ?? []).length === peerPods.length;
      },
      60_000,
    );
    expect(
      (
        JSON.parse(
          cls1.kubectl(['get', 'serviceimports.v1alpha1.multicluster.x-k8s.io', PEER, '-n', NS, '-o', 'json']),
        ) as KubeObject
      ).metadata.annotations,
    ).to.deep.equal({ [V031_DERIVED_SERVICE_ANNOTATION]: v031DerivedName(NS, PEER) });
  });

  it("M3: v0.3.1's exports into a namespace where it has no instance, and into a namespace new to Cloud Map, reach mcs-cloudmap within 10 s", async () => {
    const { cs, cls1, cls2, clusters, cloudMap } = e2e();
    for (const namespace of [NS_OURS, NS_NEW]) await createNamespaces(clusters, namespace);
    // Only mcs-cloudmap has instances in NS_OURS; NS_NEW is in neither Cloud Map nor any cache.
    await runApp(cls2, NS_OURS, 'mine', 1);
    await exportReady(cls2, NS_OURS, 'mine');
    const timings: string[] = [];
    for (const namespace of [NS_OURS, NS_NEW]) {
      const [ip] = await runApp(cls1, namespace, 'api', 1);
      const exported = Date.now();
      cls1.apply([
        { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'api', namespace } },
      ]);
      // From the moment the stand-in's instance is in Cloud Map (its registration's operation done) to cls2's import.
      await eventually(
        `v0.3.1's instance of ${namespace}/api in Cloud Map`,
        async () => {
          const found = await cloudMap
            .send(
              new DiscoverInstancesCommand({
                NamespaceName: namespace,
                ServiceName: 'api',
                QueryParameters: { CLUSTERSET_ID: cs.clustersetId },
              }),
            )
            .catch(() => undefined);
          return (found?.Instances ?? []).some((i) => i.Attributes?.CLUSTER_ID === 'cls1');
        },
        60_000,
      );
      const landed = Date.now();
      await eventually(
        `cls2 to import ${namespace}/api from v0.3.1 within ${SEEN_WITHIN_MS} ms`,
        async () => (await importedBySource(cls2, 'api', namespace)).cls1?.join() === ip,
        SEEN_WITHIN_MS,
      );
      timings.push(
        `${namespace}: in Cloud Map ${landed - exported} ms after the ServiceExport, imported by cls2 ${Date.now() - landed} ms after that`,
      );
    }
    console.log(`      v0.3.1's exports, at the default --operations-poll-interval: ${timings.join('; ')}`);
    // Unexported under v0.3.1 (it releases its finalizer), before the switch below, which is about NS alone.
    for (const namespace of [NS_OURS, NS_NEW])
      cls1.kubectl(['delete', 'serviceexports.v1alpha1.multicluster.x-k8s.io', 'api', '-n', namespace, '--wait=false']);
    await eventually(
      'v0.3.1 to release both ServiceExports',
      () =>
        [NS_OURS, NS_NEW].every(
          (namespace) =>
            !cls1
              .kubectl(['get', 'serviceexports.v1alpha1.multicluster.x-k8s.io', '-n', namespace, '-o', 'name'])
              .includes('api'),
        ),
      120_000,
    );
  });

  it("M3: switched to mcs-cloudmap by the runbook, cls1's endpoints never leave cls2's import; v0.3.1's instances go, its export is kept", async () => {
    const { cls1, cls2, cloudMap, startWorker, startWebhook } = e2e();
    const sampling = await sampleBoth(cls1, cls2);
    const t0 = Date.now();
    // Step 2: the old controller scaled to zero.
    await standIn!.stop();
    // Step 3: our CRDs (v1beta1 stored, v1alpha1 served, conversion), the webhook server, then the worker.
    cls1.kubectl(
      ['apply', '--server-side', '--force-conflicts', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: ours }),
    );
    cls1.kubectl(['wait', '--for=condition=Established', ...CRDS.map((c) => `crd/${c}`), '--timeout=60s']);
    await startWebhook(cls1);
    cls1.apply(webhooks);
    await startWorker(cls1, { MCS_HEARTBEAT_INTERVAL: `${HEARTBEAT_S}s` });
    const workerUp = Date.now() - t0;
    await eventually(
      "cls1's ServiceExport Ready under mcs-cloudmap",
      async () => condition(await cls1.serviceExport(NS, APP), 'Ready')?.status === 'True',
      120_000,
    );
    await eventually(
      "cls1's instances all under mcs-cloudmap ids",
      async () => allIn(await instancesOf(cloudMap, web!.serviceId, 'cls1'), 'mcs-cloudmap', REPLICAS),
      60_000,
    );
    const takenOver = Date.now() - t0;
    // cls1's own import of cls2's service, taken over from v0.3.1 (same object, now ours; its IP changes once).
    await eventually(
      "cls1's ServiceImport taken over",
      async () =>
        ((await cls1.serviceImport(NS, PEER)) as { metadata: { labels?: Record<string, string> } } | undefined)
          ?.metadata.labels?.[LABEL_CREATED_BY] === CONTROLLER_NAME,
      60_000,
    );
    // Step 5: v0.3.1's derived Services (owned by a ServiceImport, without our label), and with them its slices.
    const oldDerived = derivedServicesOf(cls1, 'v0.3.1');
    // v0.3.1 imports its own cluster's export too.
    expect(oldDerived, "v0.3.1's derived Services").to.deep.equal(
      [v031DerivedName(NS, APP), v031DerivedName(NS, PEER)].sort(),
    );
    cls1.kubectl(['delete', 'service', '-n', NS, ...oldDerived]);
    await eventually(
      "v0.3.1's slices gone with its derived Service",
      async () =>
        (await cls1.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${PEER}`)).every(
          (s) =>
            s.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'] !== 'aws-cloud-map-mcs-controller-for-k8s',
        ),
      60_000,
    );
    const ourDerived = derivedServicesOf(cls1, 'ours');
    const ips = (await cls1.serviceImport(NS, PEER))?.spec.ips ?? [];
    expect(ips, "the ServiceImport's IP is our derived Service's").to.deep.equal([
      cls1.kubectl(['get', 'service', '-n', NS, ourDerived[0]!, '-o', 'jsonpath={.spec.clusterIP}']),
    ]);
    await new Promise((r) => setTimeout(r, 5000)); // a late loss would show here
    const { samples, gap, ownGap } = await sampling.stop();
    console.log(
      `      cls1's own import of cls2's service during the switch and step 5: ${ownGap.bad} samples without all of cls2's endpoints, longest gap ${ownGap.gapMs} ms`,
    );
    expect(ownGap.bad, "samples of cls1 missing one of cls2's endpoints").to.equal(0);
    console.log(
      `      switch: worker ready ${workerUp} ms, v0.3.1's instances replaced ${takenOver} ms after v0.3.1 stopped; cls2 sampled ${samples.length} times (every ${gap.meanIntervalMs.toFixed(0)} ms): ${gap.bad} without all of cls1's endpoints, longest gap ${gap.gapMs} ms`,
    );
    expect(gap.bad, "samples of cls2 missing one of cls1's endpoints").to.equal(0);

    // The v1alpha1 object v0.3.1 created is kept: read in both versions, with both finalizers until step 5.
    expect((await cls1.serviceExport(NS, APP))?.metadata.finalizers?.sort()).to.deep.equal(
      [V031_FINALIZER, SERVICE_EXPORT_FINALIZER].sort(),
    );
    // Step 5: v0.3.1's finalizer, which nothing removes any more.
    removeFinalizer(cls1, V031_FINALIZER);
    expect(finalizersOf(cls1)).to.deep.equal([SERVICE_EXPORT_FINALIZER]);
    expect(
      JSON.parse(cls1.kubectl(['get', 'crd', CRDS[0]!, '-o', 'jsonpath={.status.storedVersions}'])) as string[],
    ).to.include('v1alpha1');
    console.log(
      `      the stand-in's reconciles that failed and were retried so far: ${errors.length} (${[...new Set(errors.map((e) => e.split('\n')[0]))].join('; ')})`,
    );
  });

  it("M3: rolled back to v0.3.1 by the runbook, cls1's endpoints never leave cls2's import; mcs-cloudmap's instances go; an unexport leaves nothing", async () => {
    const { cs, cls1, cls2, cloudMap, stopWorker } = e2e();
    const sampling = await sampleBoth(cls1, cls2);
    const t0 = Date.now();
    // Going back: the worker stopped, the admission webhooks removed (the server stays for conversion), our finalizer
    // removed, v0.3.1 started.
    await stopWorker(cls1);
    cls1.kubectl(['delete', ...WEBHOOKS]);
    removeFinalizer(cls1, SERVICE_EXPORT_FINALIZER);
    standIn!.start();
    await eventually(
      "cls1's instances all under v0.3.1 ids",
      async () => allIn(await instancesOf(cloudMap, web!.serviceId, 'cls1'), 'legacy', REPLICAS),
      60_000,
    );
    const takenBack = Date.now() - t0;
    // cls1's import of cls2's service: v0.3.1 writes its derived Service and slice again; then ours are deleted.
    await eventually(
      "v0.3.1's slice of cls2's service again",
      async () =>
        (await cls1.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${PEER}`)).some(
          (s) =>
            s.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'] === 'aws-cloud-map-mcs-controller-for-k8s' &&
            (s.endpoints ?? []).length === peerPods.length,
        ),
      60_000,
    );
    cls1.kubectl(['delete', 'service', '-n', NS, ...derivedServicesOf(cls1, 'ours')]);
    // Then cls1 leaves the change marker: its heartbeat and markers deregistered, so cls2 neither judges it silent nor
    // misses v0.3.1's writes (the markers' disappearance makes it re-read the namespace and watch it closely).
    const markers = await cloudMapIds(cloudMap, markerNamespaceName(cs.clustersetId), MARKER_SERVICE);
    const markerIds = await leaveChangeMarker(cloudMap, markers.serviceId, 'cls1');
    // Past cls2's --dead-cluster-ttl since the worker's last beat: cls1 is not judged silent (it has no heartbeat now).
    await new Promise((r) => setTimeout(r, Math.max(5000, t0 + (TTL_S + 2 * HEARTBEAT_S) * 1000 - Date.now())));
    const { samples, gap, ownGap } = await sampling.stop();
    console.log(
      `      cls1's own import of cls2's service during the roll back: ${ownGap.bad} samples without all of cls2's endpoints, longest gap ${ownGap.gapMs} ms`,
    );
    expect(ownGap.bad, "samples of cls1 missing one of cls2's endpoints").to.equal(0);
    console.log(
      `      roll back: mcs-cloudmap's instances replaced ${takenBack} ms after its worker stopped; marker instances removed: ${markerIds.join(' ')}; cls2 sampled ${samples.length} times (every ${gap.meanIntervalMs.toFixed(0)} ms): ${gap.bad} without all of cls1's endpoints, longest gap ${gap.gapMs} ms`,
    );
    expect(gap.bad, "samples of cls2 missing one of cls1's endpoints").to.equal(0);
    expect(finalizersOf(cls1)).to.deep.equal([V031_FINALIZER]);

    // Unexported under v0.3.1: cls2 drops the import within seconds (the namespace is watched closely again), and
    // nothing of cls1 is left in Cloud Map: no instance, no marker, and the empty service (v0.3.1's, so never deleted
    // by mcs-cloudmap) is deleted by hand as in the runbook's step 7.
    const since = Date.now();
    cls1.kubectl(['delete', 'serviceexport', APP, '-n', NS, '--wait=false']);
    await eventually(
      'v0.3.1 to release the ServiceExport',
      () => !cls1.kubectl(['get', 'serviceexports', '-n', NS, '-o', 'name']).includes(APP),
      180_000,
    );
    console.log(`      unexport under v0.3.1: the ServiceExport gone after ${Date.now() - since} ms`);
    await eventually('cls2 to drop the import', async () => (await cls2.serviceImport(NS, APP)) === undefined, 60_000);
    console.log(`      unexport under v0.3.1 reached cls2 ${Date.now() - since} ms after the delete`);
    expect(await instancesOf(cloudMap, web!.serviceId, 'cls1')).to.deep.equal([]);
    expect(await instancesOf(cloudMap, markers.serviceId, 'cls1')).to.deep.equal([]);
    const service = await retried('GetService', () => cloudMap.send(new GetServiceCommand({ Id: web!.serviceId })));
    expect(service.Service?.Description, 'v0.3.1 writes no description').to.equal(undefined);
    await retried('DeleteService', () => cloudMap.send(new DeleteServiceCommand({ Id: web!.serviceId })));
  });
});

/** Names of the derived Services in NS: owned by a ServiceImport, with our created-by label (`ours`) or without. */
function derivedServicesOf(cluster: E2ECluster, whose: 'ours' | 'v0.3.1'): string[] {
  const { items } = JSON.parse(cluster.kubectl(['get', 'service', '-n', NS, '-o', 'json'])) as {
    items: Array<{
      metadata: { name: string; labels?: Record<string, string>; ownerReferences?: Array<{ kind: string }> };
    }>;
  };
  return items
    .filter((s) => s.metadata.ownerReferences?.some((o) => o.kind === 'ServiceImport'))
    .filter((s) => (s.metadata.labels?.[LABEL_CREATED_BY] === CONTROLLER_NAME) === (whose === 'ours'))
    .map((s) => s.metadata.name)
    .sort();
}

/** The runbook's "leave the change marker" step: every instance of `clusterId` in the marker service, deregistered. */
async function leaveChangeMarker(
  cloudMap: ServiceDiscoveryClient,
  serviceId: string,
  clusterId: string,
): Promise<string[]> {
  const ids = await instancesOf(cloudMap, serviceId, clusterId);
  for (const id of ids)
    await retried('DeregisterInstance', () =>
      cloudMap.send(new DeregisterInstanceCommand({ ServiceId: serviceId, InstanceId: id })),
    );
  return ids;
}
