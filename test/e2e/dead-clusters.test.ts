// Dead clusters: cls2's worker is killed for good (SIGKILL, nothing unexported). cls1 withdraws cls2's endpoints once
// cls2's heartbeat is older than --dead-cluster-ttl, names cls2 in its ServiceImport's Ready message, leaves cls2's
// instances in Cloud Map, and imports them again when cls2's worker comes back. With --reap-dead-clusters-after, cls1
// deregisters cls2's instances (never its own). Short heartbeat and TTL keep the wall time bounded; the figures are
// printed, and with BENCH_RESULTS=bench/results a run of both cases replaces
// bench/results/dead-clusters-heartbeat-2s-ttl-12s.json (docs/reliability.md).
import { DiscoverInstancesCommand } from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { markerNamespaceName, MARKER_SERVICE } from '../../src/change-detection/change-marker.ts';
import { heartbeatInstanceId } from '../../src/change-detection/heartbeat.ts';
import { condition, withE2E, type E2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { suiteResult } from '../support/suite-result.ts';
import {
  createNamespaces,
  deployment,
  importedBySource,
  runningPodIps,
  service,
  serviceExport,
} from '../support/workloads.ts';

const NS = 'e2e-dead';
const APP = 'hello';
const HEARTBEAT_S = 2;
const TTL_S = 12;
const REAP_AFTER_S = 20;
const LIVENESS = { MCS_HEARTBEAT_INTERVAL: `${HEARTBEAT_S}s`, MCS_DEAD_CLUSTER_TTL: `${TTL_S}s` };

/** Ids of `clusterId`'s instances of namespace/service in Cloud Map. */
async function instanceIds(e2e: E2E, namespace: string, serviceName: string, clusterId: string): Promise<string[]> {
  const out = await e2e.cloudMap.send(
    new DiscoverInstancesCommand({
      NamespaceName: namespace,
      ServiceName: serviceName,
      HealthStatus: 'ALL',
      MaxResults: 1000,
      QueryParameters: { CLUSTERSET_ID: e2e.cs.clustersetId, CLUSTER_ID: clusterId },
    }),
  );
  return (out.Instances ?? []).map((i) => i.InstanceId!).sort();
}

async function importClusters(cluster: E2ECluster): Promise<string[]> {
  return ((await cluster.serviceImport(NS, APP))?.status?.clusters ?? []).map((c) => c.cluster);
}

function seconds(since: number): string {
  return ((Date.now() - since) / 1000).toFixed(1);
}

describe('e2e: dead clusters (a worker gone for good)', function () {
  this.timeout(300_000);
  const e2e = withE2E({ namespaces: [NS] });
  const ips: Record<string, string[]> = {};
  /** cls2's worker killed and not started again: restarted after a failed test, so the suite's clean-up can unexport. */
  let cls2Down = false;
  const killCls2 = async () => {
    cls2Down = true;
    await e2e().killWorker(e2e().cls2);
  };
  const startCls2 = async () => {
    await e2e().startWorker(e2e().cls2, LIVENESS);
    cls2Down = false;
  };
  afterEach(async function () {
    this.timeout(60_000);
    if (cls2Down) await startCls2();
  });
  const figures = suiteResult({
    benchmark: 'dead-clusters',
    scenario: `heartbeat-${HEARTBEAT_S}s-ttl-${TTL_S}s`,
    size: `heartbeat ${HEARTBEAT_S} s, TTL ${TTL_S} s, reap after ${REAP_AFTER_S} s; Services of 2 pods exported from both clusters`,
    command: 'BENCH_RESULTS=bench/results npx mocha --timeout 120000 test/e2e/dead-clusters.test.ts',
  });

  before(async function () {
    this.timeout(180_000);
    const { cls1, cls2, clusters, stopWorker, startWorker } = e2e();
    for (const cluster of clusters) {
      await stopWorker(cluster);
      await startWorker(cluster, LIVENESS);
    }
    await createNamespaces(clusters, NS);
    for (const cluster of clusters) cluster.apply([deployment(NS, APP, 2), service(NS, APP), serviceExport(NS, APP)]);
    for (const cluster of clusters) {
      await eventually(
        `2 running pods in ${cluster.id}`,
        async () => (ips[cluster.id] = await runningPodIps(cluster, NS, APP)).length === 2,
        90_000,
      );
    }
    await eventually(
      "cls1 imports both clusters' endpoints",
      async () =>
        JSON.stringify(await importedBySource(cls1, APP, NS)) ===
        JSON.stringify({ [cls1.id]: ips[cls1.id], [cls2.id]: ips[cls2.id] }),
      90_000,
    );
  });

  it(`cls1 withdraws cls2's endpoints ${TTL_S} s after its heartbeat stops, keeps its instances, and imports them again when it returns`, async () => {
    const all = e2e();
    const { cls1, cls2 } = all;
    // The instance of a Service port no endpoint serves yet (M2) goes once the endpoints' instances are in.
    let cls2Instances: string[] = [];
    await eventually(
      "cls2's two endpoint instances, and nothing else of cls2, in Cloud Map",
      async () =>
        (cls2Instances = await instanceIds(all, NS, APP, cls2.id)).length === 2 &&
        cls2Instances.every((id) => !id.startsWith('svc-')),
      30_000,
    );

    await killCls2();
    const killed = Date.now();
    await eventually(
      "cls1 to withdraw cls2's endpoints and list only cls1",
      async () =>
        JSON.stringify(await importedBySource(cls1, APP, NS)) === JSON.stringify({ [cls1.id]: ips[cls1.id] }) &&
        JSON.stringify(await importClusters(cls1)) === JSON.stringify([cls1.id]),
      (TTL_S + 30) * 1000,
    );
    const withdrawn = seconds(killed);
    const ready = condition(await cls1.serviceImport(NS, APP), 'Ready');
    expect(ready).to.include({ status: 'True', reason: 'Ready' });
    expect(ready?.message).to.match(new RegExp(`endpoints of silent cluster ${cls2.id} \\(last heard .*\\) withdrawn`));
    expect(await cls1.metric('mcs_cloudmap_silent_clusters')).to.equal(1);
    // Ports and conflicts still count cls2's export: nothing else of the import moved.
    expect(condition(await cls1.serviceExport(NS, APP), 'Conflict')).to.include({
      status: 'False',
      reason: 'NoConflicts',
    });
    expect(
      await instanceIds(all, NS, APP, cls2.id),
      "cls2's instances are never deregistered without --reap-dead-clusters-after",
    ).to.deep.equal(cls2Instances);

    await startCls2();
    const restarted = Date.now();
    await eventually(
      "cls1 to import cls2's endpoints again",
      async () =>
        JSON.stringify(await importedBySource(cls1, APP, NS)) ===
          JSON.stringify({ [cls1.id]: ips[cls1.id], [cls2.id]: ips[cls2.id] }) &&
        JSON.stringify(await importClusters(cls1)) === JSON.stringify([cls1.id, cls2.id]),
      60_000,
    );
    const restored = seconds(restarted);
    expect(condition(await cls1.serviceImport(NS, APP), 'Ready')?.message).to.equal(
      `Imported from clusters ${cls1.id}, ${cls2.id}.`,
    );
    const beats = await cls1.metric('mcs_cloudmap_heartbeats_total');
    console.log(
      `      heartbeat ${HEARTBEAT_S} s, TTL ${TTL_S} s: cls2's endpoints withdrawn ${withdrawn} s after its worker was killed; ` +
        `imported again ${restored} s after its worker was started (process start included); cls1 wrote ${beats} heartbeats`,
    );
    figures.push(
      {
        name: "cls2's endpoints withdrawn after its worker was killed",
        value: Number(withdrawn),
        unit: 's',
        atMost: TTL_S + 3,
        detail: `TTL ${TTL_S} s plus about 3 s`,
      },
      {
        name: 'imported again after its worker was started',
        value: Number(restored),
        unit: 's',
        detail: 'start, Lease, first read and first beat included',
      },
    );
  });

  it(`with --reap-dead-clusters-after=${REAP_AFTER_S}s cls1 deregisters a dead cls2's instances, never its own`, async () => {
    const all = e2e();
    const { cls1, cls2, stopWorker, startWorker } = all;
    await stopWorker(cls1);
    await startWorker(cls1, { ...LIVENESS, MCS_REAP_DEAD_CLUSTERS_AFTER: `${REAP_AFTER_S}s` });
    const own = await instanceIds(all, NS, APP, cls1.id);
    expect(own).to.have.length(2);
    // Alive, cls2 is never reaped: longer than the reap period with both workers running. Meanwhile nothing changes,
    // so once cls1's start is over (its background listing of Cloud Map), its calls are its idle cost with heartbeats
    // (printed per minute for docs/reliability.md).
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const before = {
      calls: await cls1.cloudMapCalls(),
      beats: await cls1.metric('mcs_cloudmap_heartbeats_total'),
      at: Date.now(),
    };
    await new Promise((resolve) => setTimeout(resolve, REAP_AFTER_S * 1000));
    const after = {
      calls: await cls1.cloudMapCalls(),
      beats: await cls1.metric('mcs_cloudmap_heartbeats_total'),
      at: Date.now(),
    };
    const perMinute = (n: number) => ((n * 60_000) / (after.at - before.at)).toFixed(1);
    const idle = Object.keys(after.calls)
      .filter((api) => after.calls[api]! > (before.calls[api] ?? 0))
      .map((api) => `${api} ${perMinute(after.calls[api]! - (before.calls[api] ?? 0))}`);
    console.log(
      `      cls1 idle with a ${HEARTBEAT_S} s heartbeat, per minute: ${perMinute(after.beats - before.beats)} heartbeats; calls: ${idle.join(', ')}`,
    );
    expect(await instanceIds(all, NS, APP, cls2.id), "a live cluster's instances").to.have.length(2);
    expect(await cls1.metric('mcs_cloudmap_reaped_instances_total')).to.equal(0);

    await killCls2();
    const killed = Date.now();
    await eventually(
      "cls1 to reap cls2's instances",
      async () => (await instanceIds(all, NS, APP, cls2.id)).length === 0,
      (REAP_AFTER_S + 40) * 1000,
    );
    const reaped = seconds(killed);
    expect(await instanceIds(all, NS, APP, cls1.id), "cls1's own instances").to.deep.equal(own);
    // Its markers and heartbeat go last, then the reap is counted.
    await eventually(
      "cls1 to reap cls2's change markers and heartbeat",
      async () =>
        (await instanceIds(all, markerNamespaceName(all.cs.clustersetId), MARKER_SERVICE, cls2.id)).length === 0 &&
        (await cls1.metric('mcs_cloudmap_reaped_instances_total')) === 2,
      30_000,
    );
    expect(await importClusters(cls1)).to.deep.equal([cls1.id]);
    console.log(
      `      reap after ${REAP_AFTER_S} s: cls2's instances, markers and heartbeat (${heartbeatInstanceId(cls2.id)}) deregistered ${reaped} s after its worker was killed`,
    );
    figures.push({
      name: 'instances, markers and heartbeat reaped after the kill',
      value: Number(reaped),
      unit: 's',
      detail: `reap after ${REAP_AFTER_S} s`,
    });

    // cls2 comes back: it exports again, since its ServiceExport never went away.
    await startCls2();
    await eventually(
      'cls2 to register its instances again and cls1 to import them',
      async () =>
        (await instanceIds(all, NS, APP, cls2.id)).length === 2 &&
        JSON.stringify(await importedBySource(cls1, APP, NS)) ===
          JSON.stringify({ [cls1.id]: ips[cls1.id], [cls2.id]: ips[cls2.id] }),
      60_000,
    );
  });
});
