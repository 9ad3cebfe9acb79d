// An "ECS service" stand-in on the data path (I9–I11): each task is a server in its own network namespace on the
// testbed's bridge (the VPC), registered in Cloud Map as ECS service discovery registers tasks
// (hack/testbed/ecs-tasks.ts), in a service the platform team tagged mcs-cloudmap/import=true. Pods of both clusters
// reach it by its clusterset name while it scales up, turns unhealthy and scales down, and the imports follow; the
// emulator's request log shows that no worker wrote anything of it.
import { ServiceDiscoveryClient, CreateHttpNamespaceCommand } from '@aws-sdk/client-servicediscovery';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { createBridgeHost, deleteBridgeHost, missingDataPathPrerequisites } from '../../hack/testbed/index.ts';
import { IMPORT_TAG } from '../../src/worker/registrants.ts';
import { cloudMapClientConfig, operationDone } from '../support/cloudmap.ts';
import { clientPod, dig, requests } from '../support/data-path-pods.ts';
import { withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { createEcsRegistry, EcsServiceRegistrant, startTaskServer } from '../../hack/testbed/ecs-tasks.ts';
import { eventually } from '../support/eventually.ts';
import { requirePrerequisite } from '../support/prerequisites.ts';
import { createNamespaces } from '../support/workloads.ts';

const NS = 'ecs-e2e';
const NAME = 'payments';
const PORT = 8080;
const HOST = `${NAME}.${NS}.svc.clusterset.local`;
const PLATFORM_KEY = 'platform-team';
/** Writes that name a service by its id; the tag calls name it by ARN. */
const SERVICE_WRITES = new Set([
  'RegisterInstance',
  'DeregisterInstance',
  'UpdateService',
  'DeleteService',
  'UpdateInstanceCustomHealthStatus',
]);
const TAG_WRITES = new Set(['TagResource', 'UntagResource']);

describe('e2e: an ECS service in the ClusterSet, on the data path (I9–I11)', function () {
  this.timeout(240_000);
  before(function () {
    const missing = missingDataPathPrerequisites();
    requirePrerequisite(this, "the testbed's data path", missing.length === 0 ? undefined : missing.join('; '));
  });
  // Scanned for opted-in services every 10 s (two workers' ListNamespaces stay under its 0.5/s quota) and each read
  // every second, so the test waits seconds, not minutes.
  const e2e = withE2E({
    clusterSet: { dataPath: true },
    namespaces: [NS],
    configEnv: { MCS_REGISTRANT_SCAN_INTERVAL: '10s', MCS_REGISTRANT_POLL_INTERVAL: '1s' },
  });
  let client: ServiceDiscoveryClient;
  let ecs: EcsServiceRegistrant;
  let registryId = '';
  const tasks = new Map<string, { index: number; ip: string; server: ChildProcess }>();

  /** Starts the task's server on a bridge host of its own and registers it as ECS would. */
  async function startTask(id: string, index: number, zone: string): Promise<void> {
    const plan = e2e().cs.dataPathPlan!;
    const host = await createBridgeHost(plan, index);
    const server = await startTaskServer(host.netns, host.ip, PORT, id);
    tasks.set(id, { index, ip: host.ip, server });
    await ecs.start({ id, ip: host.ip, port: PORT, zone });
  }

  /** Deregisters the task as ECS does when it stops, then stops its server. */
  async function stopTask(id: string): Promise<void> {
    await ecs.stop(id);
    const task = tasks.get(id)!;
    task.server.kill();
    await deleteBridgeHost(e2e().cs.dataPathPlan!, task.index);
    tasks.delete(id);
  }

  /** The tasks that answered `count` requests from the cluster's client pod by the clusterset name. */
  function answeringTasks(cluster: E2ECluster, count: number): Set<string> {
    return new Set(requests(cluster, NS, HOST, PORT, count).map((a) => /task=(\S+)/.exec(a)?.[1] ?? 'none'));
  }

  /** True once `expected` holds of the tasks that answered, else what answered (for the timeout's message). */
  function answered(cluster: E2ECluster, expected: (tasks: Set<string>) => boolean): true | string {
    const seen = answeringTasks(cluster, 12);
    if (expected(seen)) return true;
    const direct = [...tasks.values()].map(
      (t) => `${t.ip}: ${requests(cluster, NS, t.ip, PORT, 1).join('') || 'none'}`,
    );
    const resolved = dig(cluster, NS, HOST).join(', ') || 'nothing';
    return `answers from ${[...seen].sort().join(', ')}; ${HOST} resolves to ${resolved}; directly: ${direct.join('; ')}`;
  }

  async function readyAddresses(cluster: E2ECluster): Promise<string[]> {
    const slices = await cluster.endpointSlices(NS, `multicluster.kubernetes.io/service-name=${NAME}`);
    return slices
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => e.conditions?.ready === true)
      .flatMap((e) => e.addresses)
      .sort();
  }

  before(async function () {
    this.timeout(240_000);
    const { cs, clusters } = e2e();
    client = new ServiceDiscoveryClient({
      ...cloudMapClientConfig(cs),
      credentials: { accessKeyId: PLATFORM_KEY, secretAccessKey: 'x' },
    });
    await createNamespaces(clusters, NS);
    for (const c of clusters) c.apply([clientPod(NS)]);
    const namespaceId = (
      await operationDone(client, (await client.send(new CreateHttpNamespaceCommand({ Name: NS }))).OperationId)
    ).NAMESPACE!;
    const registry = await createEcsRegistry(client, namespaceId, NAME, { [IMPORT_TAG]: 'true' });
    registryId = registry.id;
    ecs = new EcsServiceRegistrant(client, registry.id, { cluster: 'prod', service: NAME, region: cs.region });
    for (const c of clusters) c.kubectl(['wait', '-n', NS, '--for=condition=Ready', 'pod/client', '--timeout=120s']);
  });

  after(async () => {
    for (const task of tasks.values()) {
      task.server.kill();
      await deleteBridgeHost(e2e().cs.dataPathPlan!, task.index);
    }
    client?.destroy();
  });

  it('I9, I10, I11: pods of both clusters reach the tasks by the clusterset name as they start, turn unhealthy and stop; nothing of theirs is written', async () => {
    const { cls1, cls2, clusters, cs } = e2e();
    const since = Date.now();
    // Tasks in two zones, one of them the real nodes': the member states no trafficDistribution, so its endpoints carry
    // their zones without zone hints (endpoint-slices.ts) and kube-proxy sends traffic to every task, as to a Service
    // without PreferClose; with hints it would keep each node's traffic in the node's zone.
    const zone = `${cs.region}a`;
    const otherZone = `${cs.region}b`;
    await startTask('task-1', 1, zone);
    await startTask('task-2', 2, otherZone);
    const ips = () => [...tasks.values()].map((t) => t.ip).sort();

    for (const c of clusters) {
      await eventually(`${c.id}: the import of ${NAME} with member ecs.prod`, async () => {
        const si = await c.serviceImport(NS, NAME);
        return JSON.stringify(si?.status?.clusters?.map((m) => m.cluster)) === '["ecs.prod"]';
      });
      await eventually(`${c.id}: both tasks answer`, () => answered(c, (t) => t.has('task-1') && t.has('task-2')));
    }
    const slices = await cls1.endpointSlices(NS, `multicluster.kubernetes.io/service-name=${NAME}`);
    expect(slices.map((s) => s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster'])).to.deep.equal([
      'ecs.prod',
    ]);
    expect((slices[0]!.endpoints ?? []).map((e) => [e.zone, e.hints])).to.deep.equal([
      [zone, undefined],
      [otherZone, undefined],
    ]);

    // Scale up.
    await startTask('task-3', 3, zone);
    for (const c of clusters)
      await eventually(`${c.id}: the new task answers`, () => answered(c, (t) => t.has('task-3')));

    // task-1 fails its health check: not ready, and no longer answers anyone.
    await ecs.setHealth('task-1', false);
    const healthy = () => ips().filter((ip) => ip !== tasks.get('task-1')!.ip);
    for (const c of clusters) {
      await eventually(
        `${c.id}: task-1 not ready`,
        async () => JSON.stringify(await readyAddresses(c)) === JSON.stringify(healthy()),
      );
      await eventually(`${c.id}: task-1 no longer answers`, () => answered(c, (t) => !t.has('task-1')));
    }

    // Scale down: task-2 stops.
    await stopTask('task-2');
    for (const c of clusters)
      await eventually(
        `${c.id}: task-2 gone from the slices`,
        async () => JSON.stringify(await readyAddresses(c)) === JSON.stringify([tasks.get('task-3')!.ip]),
      );
    expect([...answeringTasks(cls2, 12)]).to.deep.equal(['task-3']);

    // cls1's worker restarts while the opted-in service cannot be found (ListTagsForResource fails): the import, whose
    // only member is the ECS service, is kept, not deleted (a failed call never drops an import), and follows again
    // once Cloud Map answers.
    const uid = (await cls1.serviceImport(NS, NAME))?.metadata.uid;
    await cs.cloudMapControl.setFaults({ apis: ['ListTagsForResource'], errorRate: 1 });
    await e2e().stopWorker(cls1);
    await e2e().startWorker(cls1);
    await eventually('the restarted cls1 worker to reconcile the import and keep it', () =>
      readFileSync(cls1.worker.proc.logPath, 'utf8').includes('"event":"import-kept-registrants-unread"'),
    );
    expect((await cls1.serviceImport(NS, NAME))?.metadata.uid, 'the same ServiceImport').to.equal(uid);
    expect(await readyAddresses(cls1)).to.deep.equal([tasks.get('task-3')!.ip]);
    await cs.cloudMapControl.clearFaults();
    await eventually('cls1 to find the opted-in service again', () =>
      readFileSync(cls1.worker.proc.logPath, 'utf8').includes('"event":"registrant-service-opted-in"'),
    );
    expect((await cls1.serviceImport(NS, NAME))?.metadata.uid).to.equal(uid);
    await eventually('task-3 to answer cls1', () => answered(cls1, (t) => t.size === 1 && t.has('task-3')));

    // Every task stops: the import goes (I2).
    await stopTask('task-3');
    await stopTask('task-1');
    for (const c of clusters)
      await eventually(
        `${c.id}: the import of ${NAME} gone`,
        async () => (await c.serviceImport(NS, NAME)) === undefined,
      );

    const requestsSeen = await cs.cloudMapControl.requests(since);
    const written = requestsSeen.filter(
      (r) =>
        r.accessKey !== PLATFORM_KEY &&
        (TAG_WRITES.has(r.api) || (SERVICE_WRITES.has(r.api) && r.serviceId === registryId)),
    );
    expect(written, "the workers' writes to the ECS service").to.deep.equal([]);
    expect(
      requestsSeen.filter((r) => r.api === 'UpdateInstanceCustomHealthStatus' && r.serviceId === registryId),
      'the log names the service of these calls (the filter above can see a write)',
    ).to.have.length(1);
    const reads = requestsSeen.filter((r) => r.api === 'DiscoverInstances' && r.serviceName === `${NS}/${NAME}`);
    const seconds = (Date.now() - since) / 1000;
    console.log(
      `      ${reads.length} DiscoverInstances of ${NS}/${NAME} by the two workers in ${seconds.toFixed(0)} s (${(reads.length / seconds).toFixed(2)}/s)`,
    );
    expect(reads.length).to.be.greaterThan(0);
  });
});
