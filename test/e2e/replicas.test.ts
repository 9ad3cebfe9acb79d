// Two replicas of cls1's worker: only the holder of the Lease reconciles (the other keeps warm caches and makes no
// Cloud Map calls); when the leader shuts down it releases the Lease and the standby takes over.
// A leader paused past its Lease (SIGSTOP) loses it to the standby and, resumed, sends Cloud Map nothing more: the
// emulator's request log shows no write of the old leader after the new one's first (M4), and neither does the
// apiserver's audit log for Kubernetes writes (the worker's User-Agent names its replica). With
// BENCH_RESULTS=bench/results the paused leader's figures replace bench/results/faults-leader-paused.json.
import { expect } from 'chai';
import { resultOfThisRun, writeTestResult } from '../../hack/results/result-file.ts';
import type { HostProcess } from '../../hack/local/processes.ts';
import { auditedWrites, type AuditedWrite } from '../support/audit.ts';
import { condition, withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, deployment, service, serviceExport } from '../support/workloads.ts';

const WRITES = [
  'RegisterInstance',
  'DeregisterInstance',
  'CreateService',
  'DeleteService',
  'CreateHttpNamespace',
  'DeleteNamespace',
];

/** A Service without selector whose one endpoint's address is `10.252.0.<n>`, and its ServiceExport. */
function movingService(namespace: string, name: string, n: number): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-local`, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: '', port: 80, protocol: 'TCP' }],
      endpoints: [{ addresses: [`10.252.0.${n}`], conditions: { ready: true } }],
    },
    serviceExport(namespace, name),
  ];
}

const NS = 'e2e-replicas';

async function metric(worker: HostProcess, name: string): Promise<number> {
  const m = new RegExp(`^${name} (\\d+)`, 'm').exec(await (await fetch(worker.metricsUrl)).text());
  return m ? Number(m[1]) : 0;
}

async function cloudMapCallCount(worker: HostProcess): Promise<number> {
  const text = await (await fetch(worker.metricsUrl)).text();
  return [...text.matchAll(/^mcs_cloudmap_cloudmap_calls_total\{[^}]*\} (\d+)$/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
}

describe('e2e: two worker replicas in one cluster (leader election)', function () {
  this.timeout(180_000);
  const e2e = withE2E({ namespaces: [NS] });
  /** Lease identity of cls1's current worker (the user agent app id of its Cloud Map calls). */
  let leaderIdentity = 'cls1-worker-on-host';

  it('the standby reconciles nothing until the leader shuts down, then takes over at once', async () => {
    const { cls1, cls2, clusters, startReplica, stopWorker } = e2e();
    await createNamespaces(clusters, NS);
    const standby = await startReplica(cls1, 'cls1-standby');
    await eventually(
      'the standby to be ready (caches synced)',
      async () => (await fetch(`${standby.healthUrl}/readyz`)).ok,
    );
    expect(await metric(cls1.worker, 'mcs_cloudmap_leader')).to.equal(1);
    expect(await metric(standby, 'mcs_cloudmap_leader')).to.equal(0);
    expect(await metric(standby, 'mcs_cloudmap_leader_starts_total')).to.equal(0);

    cls1.apply([deployment(NS, 'before', 1), service(NS, 'before'), serviceExport(NS, 'before')]);
    await eventually(
      'cls2 imports "before"',
      async () => condition(await cls2.serviceImport(NS, 'before'), 'Ready')?.status === 'True',
    );
    expect(await cloudMapCallCount(standby), 'Cloud Map calls of the standby').to.equal(0);

    await stopWorker(cls1);
    await eventually('the standby to lead', async () => (await metric(standby, 'mcs_cloudmap_leader')) === 1, 15_000);
    expect(await metric(standby, 'mcs_cloudmap_leader_starts_total')).to.equal(1);
    cls1.apply([deployment(NS, 'after', 1), service(NS, 'after'), serviceExport(NS, 'after')]);
    await eventually(
      'cls2 imports "after", exported by the new leader',
      async () => condition(await cls2.serviceImport(NS, 'after'), 'Ready')?.status === 'True',
    );
    // The export's status write and cls2's import race each other; both must happen.
    await eventually(
      'cls1\'s export of "after" to be Ready (Exported) by the new leader',
      async () => condition(await cls1.serviceExport(NS, 'after'), 'Ready')?.reason === 'Exported',
    );
    // The namespace is cleaned up by the harness through cls1's worker: the standby is now that worker.
    cls1.worker = standby;
    leaderIdentity = 'cls1-standby';
  });

  it('a leader paused past its Lease makes no Cloud Map or Kubernetes write once the standby has started writing (M4)', async () => {
    const { cs, cls1, cls2, startReplica, stopWorker } = e2e();
    await createNamespaces([cls1, cls2], NS);
    const testStart = Date.now();
    const paused = cls1.worker;
    const pausedIdentity = leaderIdentity;
    const standby = await startReplica(cls1, 'cls1-second-standby');
    await eventually('the second standby to be ready', async () => (await fetch(`${standby.healthUrl}/readyz`)).ok);
    expect(await metric(paused, 'mcs_cloudmap_leader')).to.equal(1);
    let n = 1;
    cls1.apply(movingService(NS, 'moving', n));
    await eventually(
      'cls2 imports "moving"',
      async () => condition(await cls2.serviceImport(NS, 'moving'), 'Ready')?.status === 'True',
    );

    // The export's endpoint moves every second, so the leader always has writes in flight when it is paused.
    let moveError: Error | undefined;
    const mover = setInterval(() => {
      try {
        cls1.apply(movingService(NS, 'moving', n + 1));
        n++;
      } catch (err) {
        moveError ??= err instanceof Error ? err : new Error(String(err));
      }
    }, 1000);
    const since = Date.now();
    let writes: Awaited<ReturnType<typeof cs.cloudMapControl.requests>>;
    let kubeWrites: AuditedWrite[];
    let takeoverMs: number;
    const byReplica = (w: AuditedWrite, identity: string) => w.userAgent.endsWith(`(${identity})`);
    try {
      await new Promise((r) => setTimeout(r, 3000));
      expect(paused.proc.signalGroup('SIGSTOP')).to.equal(true);
      const pausedAt = Date.now();
      try {
        await eventually(
          'the second standby to lead',
          async () => (await metric(standby, 'mcs_cloudmap_leader')) === 1,
          60_000,
        );
        await eventually(
          'the new leader to write to Cloud Map',
          async () => (await cs.cloudMapControl.requests(since, WRITES)).some((r) => r.app === 'cls1-second-standby'),
          30_000,
        );
        await eventually(
          'the new leader to write to Kubernetes',
          async () => auditedWrites(cls1.cluster, since).some((w) => byReplica(w, 'cls1-second-standby')),
          30_000,
        );
        takeoverMs = Date.now() - pausedAt;
        console.log(`      standby led and wrote ${(takeoverMs / 1000).toFixed(1)} s after the leader was paused`);
      } finally {
        paused.proc.signalGroup('SIGCONT');
      }
      await eventually(
        'the resumed replica to step down',
        async () => (await metric(paused, 'mcs_cloudmap_leader')) === 0,
        30_000,
      );
      // The resumed replica's reconciles in flight had their chance to write.
      await new Promise((r) => setTimeout(r, 5000));
    } finally {
      clearInterval(mover);
      writes = await cs.cloudMapControl.requests(since, WRITES);
      kubeWrites = auditedWrites(cls1.cluster, testStart);
    }
    if (moveError !== undefined) throw moveError;
    const firstNew = Math.min(...writes.filter((r) => r.app === 'cls1-second-standby').map((r) => r.start));
    const oldAfter = writes.filter((r) => r.app === pausedIdentity && r.start >= firstNew);
    const oldBefore = writes.filter((r) => r.app === pausedIdentity && r.start < firstNew);
    console.log(
      `      Cloud Map writes: paused leader ${oldBefore.length} before the new leader's first, ${oldAfter.length} after; new leader ${writes.length - oldBefore.length - oldAfter.length}`,
    );
    expect(oldBefore.length, 'writes of the leader before it was paused').to.be.greaterThan(0);
    expect(
      oldAfter.map((r) => `${r.api} ${r.instanceId} ${r.outcome} at ${new Date(r.start * 1000).toISOString()}`),
      "writes of the old leader after the new leader's first",
    ).to.deep.equal([]);
    const firstNewKube = Math.min(...kubeWrites.filter((w) => byReplica(w, 'cls1-second-standby')).map((w) => w.at));
    const oldKube = kubeWrites.filter((w) => byReplica(w, pausedIdentity));
    const oldKubeAfter = oldKube.filter((w) => w.at >= firstNewKube);
    console.log(
      `      Kubernetes writes (apiserver audit log) since "moving" was exported: paused leader ${oldKube.length - oldKubeAfter.length} before the new leader's first, ${oldKubeAfter.length} after`,
    );
    // Its export of "moving" (finalizer, status) at least: the audit log names the replicas.
    expect(
      oldKube.length - oldKubeAfter.length,
      'Kubernetes writes of the leader before it was paused',
    ).to.be.greaterThan(0);
    expect(
      oldKubeAfter.map(
        (w) => `${w.verb} ${w.resource} ${w.namespace}/${w.name} ${w.code} at ${new Date(w.at).toISOString()}`,
      ),
      "Kubernetes writes of the old leader after the new leader's first",
    ).to.deep.equal([]);
    await eventually(
      'cls2 imports the last address of "moving"',
      async () => {
        const slices = await cls2.endpointSlices(NS, 'multicluster.kubernetes.io/service-name=moving');
        return slices.flatMap((s) => (s.endpoints ?? []).map((e) => e.addresses[0])).join() === `10.252.0.${n}`;
      },
      60_000,
    );
    writeTestResult(
      resultOfThisRun({
        benchmark: 'faults',
        scenario: 'leader-paused',
        size: 'the leading worker stopped with SIGSTOP past its Lease while its export changes',
        command: 'BENCH_RESULTS=bench/results npx mocha --timeout 120000 test/e2e/replicas.test.ts',
        figures: [
          { name: 'the standby led and wrote after the pause', value: Math.round(takeoverMs / 100) / 10, unit: 's' },
          {
            name: "Cloud Map writes of the paused leader after the new leader's first",
            value: oldAfter.length,
            unit: '',
            atMost: 0,
            detail: `${oldBefore.length} before it`,
          },
          {
            name: "Kubernetes writes of the paused leader after the new leader's first",
            value: oldKubeAfter.length,
            unit: '',
            atMost: 0,
            detail: `${oldKube.length - oldKubeAfter.length} before it`,
          },
        ],
      }),
    );
    await stopWorker(cls1);
    cls1.worker = standby;
    leaderIdentity = 'cls1-second-standby';
  });
});
