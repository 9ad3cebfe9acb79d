// The AWS Cloud Map MCS Controller's public two-cluster tutorial end to end, with both workers (and webhooks) running
// as in production: nginx-hello (3 replicas) in namespace demo of both clusters, exported from cls1.
import { DiscoverInstancesCommand } from '@aws-sdk/client-servicediscovery';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import {
  CONTROLLER_NAME,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
  SERVICE_EXPORT_FINALIZER,
} from '../../src/core/names.ts';
import { ipInCidr } from '../../hack/testbed/index.ts';
import { condition, withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, deployment, runningPodIps, service, serviceExport } from '../support/workloads.ts';

const NS = 'demo';
const APP = 'nginx-hello';
const SELECTOR = `${LABEL_SERVICE_NAME}=${APP}`;

/** Endpoint addresses the cluster imports for nginx-hello, and their readiness. */
async function importedEndpoints(cluster: E2ECluster): Promise<Map<string, boolean>> {
  const out = new Map<string, boolean>();
  for (const slice of await cluster.endpointSlices(NS, SELECTOR)) {
    for (const e of slice.endpoints ?? []) out.set(e.addresses[0]!, e.conditions?.ready ?? true);
  }
  return out;
}

async function importedAddresses(cluster: E2ECluster): Promise<string[]> {
  return [...(await importedEndpoints(cluster)).keys()].sort();
}

/** Cloud Map writes: anything but reads and operation polling. */
const WRITE_APIS = [
  'RegisterInstance',
  'DeregisterInstance',
  'CreateHttpNamespace',
  'CreateService',
  'DeleteService',
  'DeleteNamespace',
  'UpdateService',
];

describe('e2e: the two-cluster tutorial, nginx-hello exported from cls1', function () {
  this.timeout(180_000);
  const e2e = withE2E({ namespaces: [NS] });
  let podIps: string[] = [];

  before(async function () {
    this.timeout(120_000);
    const { cls1, clusters } = e2e();
    await createNamespaces(clusters, NS);
    cls1.apply([deployment(NS, APP, 3), service(NS, APP)]);
    await eventually(
      '3 running nginx-hello pods in cls1',
      async () => (podIps = await runningPodIps(cls1, NS, APP)).length === 3,
    );
    cls1.apply([serviceExport(NS, APP)]);
  });

  it("E1, E6, I1, I3, I4, S1, S2: both clusters import a ClusterSetIP ServiceImport on port 80 whose IP is its derived Service's ClusterIP and whose slices hold cls1's pod IPs", async () => {
    const { clusters } = e2e();
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: Ready ServiceImport demo/nginx-hello`,
        async () => condition(await cluster.serviceImport(NS, APP), 'Ready')?.status === 'True',
      );
      const si = (await cluster.serviceImport(NS, APP))!;
      expect(si.spec.type).to.equal('ClusterSetIP');
      expect(si.spec.ports).to.deep.equal([{ port: 80, protocol: 'TCP' }]);
      expect(si.status?.clusters).to.deep.equal([{ cluster: 'cls1' }]);

      await eventually(
        `${cluster.id}: slices with cls1's 3 pod IPs`,
        async () => JSON.stringify(await importedAddresses(cluster)) === JSON.stringify(podIps),
      );
      const slices = await cluster.endpointSlices(NS, SELECTOR);
      const derivedName = slices[0]!.metadata!.labels![LABEL_KUBE_SERVICE_NAME]!;
      for (const slice of slices) {
        expect(slice.metadata!.labels).to.include({
          [LABEL_SOURCE_CLUSTER]: 'cls1',
          [LABEL_MANAGED_BY]: CONTROLLER_NAME,
          [LABEL_KUBE_SERVICE_NAME]: derivedName,
        });
        expect(slice.ports?.map((p) => [p.port, p.protocol])).to.deep.equal([[80, 'TCP']]);
      }
      const derived = await cluster.kubeConfig
        .makeApiClient(CoreV1Api)
        .readNamespacedService({ namespace: NS, name: derivedName });
      expect(derived.spec!.selector ?? {}).to.deep.equal({});
      expect(si.spec.ips).to.deep.equal([derived.spec!.clusterIP]);
      expect(
        ipInCidr(derived.spec!.clusterIP!, cluster.cluster.serviceCidr),
        `${derived.spec!.clusterIP} in ${cluster.cluster.serviceCidr}`,
      ).to.equal(true);
    }
  });

  it('X4: the ServiceExport in cls1 is Valid, Ready (Exported) and free of conflicts, for its generation, with the clean-up finalizer', async () => {
    const { cls1 } = e2e();
    await eventually(
      'Ready=True on ServiceExport demo/nginx-hello',
      async () => condition(await cls1.serviceExport(NS, APP), 'Ready')?.status === 'True',
    );
    const se = (await cls1.serviceExport(NS, APP))!;
    expect(se.metadata.finalizers).to.include(SERVICE_EXPORT_FINALIZER);
    for (const [type, status, reason] of [
      ['Valid', 'True', 'Valid'],
      ['Ready', 'True', 'Exported'],
      ['Conflict', 'False', 'NoConflicts'],
    ] as const) {
      expect(condition(se, type), type).to.include({ status, reason, observedGeneration: se.metadata.generation });
    }
  });

  it("E8: scaling to 4 and back to 3 replicas is mirrored in cls2's slices", async () => {
    const { cls1, cls2 } = e2e();
    for (const replicas of [4, 3]) {
      cls1.kubectl(['scale', 'deployment', APP, '-n', NS, `--replicas=${replicas}`]);
      await eventually(
        `${replicas} running pods in cls1`,
        async () => (podIps = await runningPodIps(cls1, NS, APP)).length === replicas,
      );
      await eventually(
        `cls2 imports ${replicas} endpoints`,
        async () => JSON.stringify(await importedAddresses(cls2)) === JSON.stringify(podIps),
      );
    }
  });

  it('E8: a pod turning unready shows as ready: false in cls2, and ready again when it recovers', async () => {
    const { cls1, cls2 } = e2e();
    const pods = await cls1.kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: NS, labelSelector: `app=${APP}` });
    const pod = pods.items.find((p) => p.status?.podIP === podIps[0])!;
    const setReady = (status: 'True' | 'False') =>
      cls1.kubectl([
        'patch',
        'pod',
        pod.metadata!.name!,
        '-n',
        NS,
        '--subresource=status',
        '--type=strategic',
        '-p',
        JSON.stringify({
          status: {
            conditions: [
              { type: 'Ready', status },
              { type: 'ContainersReady', status },
            ],
          },
        }),
      ]);
    setReady('False');
    await eventually(
      `cls2 sees ${podIps[0]} as not ready`,
      async () => (await importedEndpoints(cls2)).get(podIps[0]!) === false,
    );
    expect([...(await importedEndpoints(cls2)).values()].filter((ready) => ready)).to.have.length(podIps.length - 1);
    setReady('True');
    await eventually(
      `cls2 sees ${podIps[0]} as ready again`,
      async () => (await importedEndpoints(cls2)).get(podIps[0]!) === true,
    );
  });

  it('M6: a worker restarted with nothing changed makes no Cloud Map writes', async () => {
    const { cls1, stopWorker, startWorker } = e2e();
    const exports = JSON.parse(cls1.kubectl(['get', 'serviceexports', '-A', '-o', 'json'])) as { items: unknown[] };
    await stopWorker(cls1);
    await startWorker(cls1);
    await eventually(
      'the restarted worker to read Cloud Map and reconcile every ServiceExport and import',
      async () =>
        (await fetch(`${cls1.worker.healthUrl}/readyz`)).ok &&
        (await cls1.metric('mcs_cloudmap_reconcile_total', 'controller="export",result="success"')) >=
          exports.items.length &&
        (await cls1.metric('mcs_cloudmap_reconcile_total', 'controller="import",result="success"')) >= 1 &&
        (await cls1.metric('mcs_cloudmap_workqueue_depth')) === 0,
    );
    const calls = await cls1.cloudMapCalls();
    // Its liveness heartbeat is the one write it makes (counted as it begins, so read after the calls).
    const heartbeats = await cls1.metric('mcs_cloudmap_heartbeats_total');
    expect(calls.RegisterInstance ?? 0, 'RegisterInstance calls beyond the heartbeats').to.be.at.most(heartbeats);
    const others = WRITE_APIS.filter((api) => api !== 'RegisterInstance');
    expect(Object.fromEntries(others.map((api) => [api, calls[api] ?? 0]))).to.deep.equal(
      Object.fromEntries(others.map((api) => [api, 0])),
    );
    expect(calls.DiscoverInstances ?? 0, 'the first full read of Cloud Map').to.be.greaterThan(0);
  });

  it("E3, I2, S3: unexporting removes the ServiceImport, derived Service and slices everywhere and cls1's Cloud Map instances", async () => {
    const { cls1, clusters, cloudMap } = e2e();
    cls1.kubectl(['delete', 'serviceexport', APP, '-n', NS, '--timeout=60s']);
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: ServiceImport gone`,
        async () => (await cluster.serviceImport(NS, APP)) === undefined,
      );
      await eventually(
        `${cluster.id}: imported slices gone`,
        async () => (await cluster.endpointSlices(NS, SELECTOR)).length === 0,
      );
      const services = await cluster.kubeConfig
        .makeApiClient(CoreV1Api)
        .listNamespacedService({ namespace: NS, labelSelector: SELECTOR });
      expect(
        services.items.map((s) => s.metadata!.name),
        `${cluster.id}: derived Services`,
      ).to.deep.equal([]);
    }
    const left = await cloudMap
      .send(new DiscoverInstancesCommand({ NamespaceName: NS, ServiceName: APP, HealthStatus: 'ALL' }))
      .then(
        (out) => out.Instances ?? [],
        (err: { name?: string }) => {
          if (err.name === 'ServiceNotFound' || err.name === 'NamespaceNotFound') return [];
          throw err;
        },
      );
    expect(left).to.deep.equal([]);
  });
});
