// A worker killed with SIGKILL while 500 of its registrations are still pending in Cloud Map: the restarted worker
// waits for them before its first read, so it registers none of them again and loses none; the other cluster imports
// all 500 endpoints (M6, E8, I3). The emulator's operations are slowed down to 20 s for this, so that every
// registration is submitted and still pending when the worker dies.
// A worker killed with SIGKILL while it withdraws deleted exports, and exports deleted while it is down: the restarted
// worker withdraws them all (no orphan instance), releases their finalizers and keeps the rest (E3, M4). With
// BENCH_RESULTS=bench/results the second case's figures replace bench/results/faults-worker-killed-during-deletes.json.
import {
  DiscoverInstancesCommand,
  ListOperationsCommand,
  type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { heartbeatInstanceId } from '../../src/change-detection/heartbeat.ts';
import { condition, withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { resultOfThisRun, writeTestResult } from '../../hack/results/result-file.ts';
import { createNamespaces, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-crash';
const NS_DELETES = 'e2e-crash-deletes';
const SERVICES = 12;
const APP = 'wide';
const ENDPOINTS = 500;
const OPERATION_DELAY_MS = 20_000;

/** A Service without selector and its EndpointSlices of ENDPOINTS ready addresses (100 per slice). */
function wideService(): object[] {
  const slices = Array.from({ length: ENDPOINTS / 100 }, (_, s) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${APP}-${s}`, namespace: NS, labels: { 'kubernetes.io/service-name': APP } },
    addressType: 'IPv4',
    ports: [{ name: '', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: 100 }, (_, e) => ({
      addresses: [`10.250.${s}.${e + 1}`],
      conditions: { ready: true },
    })),
  }));
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: APP, namespace: NS },
      spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    },
    ...slices,
  ];
}

async function importedAddresses(cluster: E2ECluster): Promise<number> {
  const slices = await cluster.endpointSlices(NS, `multicluster.kubernetes.io/service-name=${APP}`);
  return slices.reduce((n, s) => n + (s.endpoints ?? []).length, 0);
}

/** Service `i` without selector and its EndpointSlice of 3 ready addresses, exported. */
function smallService(i: number): object[] {
  const name = `del-${i}`;
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: NS_DELETES },
      spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-local`, namespace: NS_DELETES, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: '', port: 8080, protocol: 'TCP' }],
      endpoints: [1, 2, 3].map((e) => ({ addresses: [`10.251.${i}.${e}`], conditions: { ready: true } })),
    },
    serviceExport(NS_DELETES, name),
  ];
}

/** cls1's instances of del-<i> in Cloud Map (none when the service is gone). */
async function instancesOf(cloudMap: ServiceDiscoveryClient, i: number): Promise<string[]> {
  try {
    const found = await cloudMap.send(
      new DiscoverInstancesCommand({
        NamespaceName: NS_DELETES,
        ServiceName: `del-${i}`,
        HealthStatus: 'ALL',
        MaxResults: 1000,
        QueryParameters: { CLUSTER_ID: 'cls1' },
      }),
    );
    return (found.Instances ?? []).map((x) => x.InstanceId ?? '');
  } catch (err) {
    if ((err as Error).name === 'ServiceNotFound' || (err as Error).name === 'NamespaceNotFound') return [];
    throw err;
  }
}

describe('e2e: a worker killed while its registrations are pending (M6)', function () {
  this.timeout(300_000);
  const e2e = withE2E({ namespaces: [NS, NS_DELETES] });

  it('the restarted worker repeats none of the 500 pending registrations and loses none', async () => {
    const { cs, cls1, cls2, clusters, cloudMap, stopWorker, killWorker, startWorker } = e2e();
    await createNamespaces(clusters, NS);
    await cs.cloudMapControl.configure({ operationDelayMs: OPERATION_DELAY_MS, throttling: false });
    try {
      // This worker may submit its 500 registrations at once, so that all of them are pending when it dies.
      await stopWorker(cls1);
      await startWorker(cls1, { MCS_RATE_LIMITS: 'RegisterInstance=2000' });
      cls1.apply([...wideService(), serviceExport(NS, APP)]);
      await eventually(
        `cls1's worker to submit ${ENDPOINTS} registrations`,
        async () => ((await cls1.cloudMapCalls()).RegisterInstance ?? 0) >= ENDPOINTS,
        60_000,
      );
      const pending = await cloudMap.send(
        new ListOperationsCommand({
          Filters: [{ Name: 'STATUS', Condition: 'IN', Values: ['SUBMITTED', 'PENDING'] }],
          MaxResults: 100,
        }),
      );
      expect(pending.Operations ?? [], 'registrations still pending when the worker is killed').to.not.have.lengthOf(0);
      await killWorker(cls1);
    } finally {
      // Back to the realistic mode (1 s operations) once they are pending: the restart is what is tested.
      await cs.cloudMapControl.configure({ mode: 'realistic' });
    }

    const restarted = Date.now();
    await startWorker(cls1);
    await eventually(
      "cls1's ServiceExport to be Ready again",
      async () => condition(await cls1.serviceExport(NS, APP), 'Ready')?.status === 'True',
      120_000,
    );
    await eventually(
      `cls2 to import ${ENDPOINTS} endpoints`,
      async () => (await importedAddresses(cls2)) === ENDPOINTS,
      120_000,
    );

    const found = await cloudMap.send(
      new DiscoverInstancesCommand({
        NamespaceName: NS,
        ServiceName: APP,
        HealthStatus: 'ALL',
        MaxResults: 1000,
        QueryParameters: { CLUSTER_ID: cls1.id },
      }),
    );
    const ids = (found.Instances ?? []).map((i) => i.InstanceId);
    expect(ids).to.have.length(ENDPOINTS);
    expect(new Set(ids).size).to.equal(ENDPOINTS);
    const calls = await cls1.cloudMapCalls();
    console.log(`      restarted worker's Cloud Map calls: ${JSON.stringify(calls)}`);
    // Its only writes, counted at the emulator, are change-marker bumps (telling the peers about what its predecessor
    // did; how many depends on how the pending operations end, one bump per batch), its heartbeats and, since the
    // predecessor died before its first bump, the marker's namespace and service.
    const registered = (await cs.cloudMapControl.requests(restarted, ['RegisterInstance'])).filter(
      (r) => r.clusterId === cls1.id,
    );
    const endpointIds = new Set(ids);
    expect(
      registered.filter((r) => endpointIds.has(r.instanceId)).map((r) => r.instanceId),
      'endpoint instances registered again',
    ).to.deep.equal([]);
    const bumps = registered.filter((r) => r.instanceId !== heartbeatInstanceId(cls1.id));
    expect(bumps.length, 'change-marker bumps').to.be.at.least(1);
    expect(
      bumps.every((r) => r.instanceId.startsWith(`${cls1.id}/`)),
      `only marker instances besides heartbeats: ${bumps.map((r) => r.instanceId).join(', ')}`,
    ).to.equal(true);
    expect(calls.DeregisterInstance ?? 0).to.equal(0);
    expect(calls.CreateService ?? 0).to.be.at.most(1);
    expect(condition(await cls1.serviceExport(NS, APP), 'Ready')?.reason).to.equal('Exported');
  });

  it('exports deleted while the worker dies and while it is down are withdrawn after the restart, finalizers released (E3)', async () => {
    const { cs, cls1, cls2, clusters, cloudMap, killWorker, startWorker } = e2e();
    await createNamespaces(clusters, NS_DELETES);
    cls1.apply(Array.from({ length: SERVICES }, (_, i) => smallService(i)).flat());
    await eventually(
      `cls2 to import ${SERVICES} services`,
      async () => {
        const ready = await Promise.all(
          Array.from(
            { length: SERVICES },
            async (_, i) => condition(await cls2.serviceImport(NS_DELETES, `del-${i}`), 'Ready')?.status === 'True',
          ),
        );
        return ready.every(Boolean);
      },
      120_000,
    );
    const names = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => `del-${from + k}`);
    const since = Date.now();
    cls1.kubectl(['delete', 'serviceexports', '-n', NS_DELETES, '--wait=false', ...names(0, 6)]);
    await eventually(
      "cls1's worker to start withdrawing",
      async () =>
        (await cs.cloudMapControl.requests(since, ['DeregisterInstance'])).some((r) => r.app.startsWith('cls1-')),
      60_000,
    );
    await killWorker(cls1);
    cls1.kubectl(['delete', 'serviceexports', '-n', NS_DELETES, '--wait=false', ...names(6, 9)]);
    let waiting = 0;
    for (const name of names(0, 9)) {
      const held = await cls1.serviceExport(NS_DELETES, name);
      // Those the dead worker finished are gone; the rest wait on the finalizer.
      if (held)
        expect(held.metadata.finalizers, `${name}'s finalizer`).to.include(
          'multicluster.x-k8s.io/service-export-cleanup',
        );
      if (held) waiting++;
    }
    console.log(
      `      worker killed: ${waiting} of 9 deleted exports wait on its finalizer (3 of them deleted while it is down)`,
    );
    const restarting = Date.now();

    await startWorker(cls1);
    await eventually(
      'every deleted export to be gone (finalizer released)',
      async () =>
        (await Promise.all(names(0, 9).map((n) => cls1.serviceExport(NS_DELETES, n)))).every((e) => e === undefined),
      120_000,
    );
    await eventually(
      'cls2 to drop the imports of the deleted exports',
      async () =>
        (await Promise.all(names(0, 9).map((n) => cls2.serviceImport(NS_DELETES, n)))).every((e) => e === undefined),
      120_000,
    );
    const withdrawnMs = Date.now() - restarting;
    console.log(
      `      restarted worker: every deleted export withdrawn, finalizer released and import dropped in ${(withdrawnMs / 1000).toFixed(1)} s`,
    );
    let orphans = 0;
    for (let i = 0; i < SERVICES; i++) {
      const ids = await instancesOf(cloudMap, i);
      if (i < 9) orphans += ids.length;
      if (i < 9) expect(ids, `orphan instances of del-${i}`).to.deep.equal([]);
      else expect(new Set(ids).size, `instances of del-${i}`).to.equal(3);
    }
    for (const name of names(9, SERVICES)) {
      expect(condition(await cls1.serviceExport(NS_DELETES, name), 'Ready')?.reason, `${name} still exported`).to.equal(
        'Exported',
      );
      expect(condition(await cls2.serviceImport(NS_DELETES, name), 'Ready')?.status, `${name} still imported`).to.equal(
        'True',
      );
    }
    const foreign = (await cs.cloudMapControl.requests(since, ['RegisterInstance', 'DeregisterInstance'])).filter(
      (r) => r.clusterId !== '' && !r.app.startsWith(`${r.clusterId}-`),
    );
    expect(
      foreign.map((r) => `${r.app} ${r.api} ${r.instanceId} of ${r.clusterId}`),
      "writes of another cluster's instances (M4)",
    ).to.deep.equal([]);
    writeTestResult(
      resultOfThisRun({
        benchmark: 'faults',
        scenario: 'worker-killed-during-deletes',
        size: `${SERVICES} services; the worker killed as its first DeregisterInstance lands, 6 deletes pending, 3 more while it is down`,
        command: 'BENCH_RESULTS=bench/results npx mocha --timeout 120000 test/e2e/crash-restart.test.ts',
        figures: [
          {
            name: 'the 9 imports gone in cls2 after the restart began',
            value: Math.round(withdrawnMs / 100) / 10,
            unit: 's',
          },
          { name: 'instances of deleted exports left in Cloud Map', value: orphans, unit: '', atMost: 0 },
          { name: "writes of another cluster's instances", value: foreign.length, unit: '', atMost: 0 },
        ],
      }),
    );
  });
});
