// `npm run bench:memory [-- --services=300,1000,5000 --webhook-services=10000]`: resident memory of the compiled
// processes (`npm run build` → dist/, as the image runs them), read from outside each process (/proc/<pid>/status).
//   worker, for each count N: a fresh 1-cluster testbed ClusterSet (real kube-apiserver, the Cloud Map emulator) with
//     N selector-less Services × --endpoints endpoints (EndpointSlices written by the benchmark) and their
//     ServiceExports; the worker starts with the production settings of kustomize/base (the ConfigMap, and the Node.js
//     flags of the Deployment's command), exports them to
//     Cloud Map and imports them back (ServiceImport Ready with every endpoint). Measured: RSS and its peak (VmHWM) once
//     every import is present, then RSS over --steady with nothing changing (a kube resync and marker polls run).
//   webhook: a fresh ClusterSet with --webhook-services Services and their ServiceExports in its informer caches;
//     measured: RSS once its caches are synced (ready), and after --steady.
// Does not depend on the emulator's timing beyond the initial sync taking longer. Prints Markdown tables, and writes
// bench/results/memory-<process>-<N>-services.json per process and count, the rows of docs/benchmarks.md.
import { mkdirSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { configMapEnv, deploymentNodeFlags, kustomizeBase } from '../hack/local/manifests.ts';
import {
  startWebhookProcess,
  startWorkerProcess,
  type HostProcess,
  type ProcessBuild,
} from '../hack/local/processes.ts';
import { startClusterSet, type TestCluster, type TestClusterSet } from '../hack/testbed/index.ts';
import { freePorts } from '../hack/testbed/ports.ts';
import { Supervisor } from '../hack/testbed/supervisor.ts';
import { durationOption, formatHelp, intOption, parseOptions, stringOption } from '../src/config/options.ts';
import { SYSTEM_NAMESPACE } from '../src/core/names.ts';
import { kubeClientFor } from '../src/kube/client.ts';
import { createLogger } from '../src/observability/log.ts';
import { makeDevCertificates } from '../hack/local/dev-certificates.ts';
import { resultOfThisRun, resultsOption, writeResult } from '../hack/results/result-file.ts';
import {
  cpuSeconds,
  createServices,
  heapAccount,
  mib,
  name,
  ns,
  prepare,
  processMemory,
  type HeapAccount,
} from './load.ts';
import { ImportWatch } from './sync-imports.ts';

const specs = {
  services: stringOption(
    'services',
    'BENCH_SERVICES',
    '300,1000,5000',
    'Comma-separated counts of exported services; each runs on a fresh ClusterSet. Empty: skip the worker.',
  ),
  webhookServices: intOption(
    'webhook-services',
    'BENCH_WEBHOOK_SERVICES',
    10_000,
    "Services (each with a ServiceExport) in the webhook server's caches; 0 skips the webhook.",
  ),
  namespaces: intOption('namespaces', 'BENCH_NAMESPACES', 10, 'Namespaces the services are spread over.', 1),
  endpoints: intOption('endpoints', 'BENCH_ENDPOINTS', 3, 'Endpoints per exported service.', 1, 250),
  steady: durationOption(
    'steady',
    'BENCH_STEADY',
    120_000,
    'How long RSS is sampled with nothing changing after the initial sync.',
  ),
  dist: stringOption(
    'dist',
    'BENCH_DIST',
    'dist',
    'Directory of the compiled build (`npm run build`), relative to the repository.',
  ),
  nodeArgs: stringOption(
    'node-args',
    'BENCH_NODE_ARGS',
    '',
    "Node.js flags for the measured processes, space-separated, instead of those of the Deployments' commands in kustomize/base.",
  ),
  timeout: durationOption('timeout', 'BENCH_TIMEOUT', 3_600_000, "Longest wait for the worker's initial sync."),
  results: resultsOption,
};

/** The RSS goals (MiB) of docs/benchmarks.md, by process and count. */
const RSS_GOALS: Record<Sample['process'], Record<number, number>> = {
  worker: { 300: 100, 5000: 200, 10000: 250 },
  webhook: { 10000: 120 },
};

const log = createLogger('bench-memory', process.env.MCS_LOG_LEVEL ?? 'warn');
const say = (line: string) => process.stdout.write(`${line}\n`);

interface Sample {
  label: string;
  process: 'worker' | 'webhook';
  /** Services exported (worker) or cached (webhook). */
  count: number;
  /** RSS once synced, its peak so far (VmHWM), RSS at the end of the steady window and its range in it. */
  synced: number;
  hwmSynced: number;
  steadyMin: number;
  steadyMax: number;
  end: number;
  hwmEnd: number;
  syncSeconds: number;
  /** CPU time used until synced, and over the steady window. */
  cpuSync: number;
  cpuSteady: number;
  /** The process's own account at the end (its Prometheus default metrics): where the RSS goes. */
  heap: HeapAccount;
}

/** RSS over `ms`, sampled every second. */
async function steady(pid: number, ms: number): Promise<{ min: number; max: number }> {
  let min = Infinity;
  let max = 0;
  for (const end = performance.now() + ms; performance.now() < end; ) {
    const { rss } = processMemory(pid);
    min = Math.min(min, rss);
    max = Math.max(max, rss);
    await sleep(1000);
  }
  return { min, max };
}

async function measure(
  kind: Sample['process'],
  count: number,
  p: HostProcess,
  startedAt: number,
  steadyMs: number,
): Promise<Sample> {
  const label = `${kind}, ${count} services`;
  const syncSeconds = (performance.now() - startedAt) / 1000;
  const atSync = processMemory(p.proc.pid);
  const cpuSync = cpuSeconds(p.proc.pid);
  say(
    `${label}: synced in ${syncSeconds.toFixed(1)} s, RSS ${mib(atSync.rss)} MiB (peak ${mib(atSync.hwm)}); sampling for ${steadyMs / 1000} s`,
  );
  const range = await steady(p.proc.pid, steadyMs);
  const atEnd = processMemory(p.proc.pid);
  const cpuSteady = cpuSeconds(p.proc.pid) - cpuSync;
  return {
    label,
    process: kind,
    count,
    synced: atSync.rss,
    hwmSynced: atSync.hwm,
    steadyMin: range.min,
    steadyMax: range.max,
    end: atEnd.rss,
    hwmEnd: atEnd.hwm,
    heap: await heapAccount(p.metricsUrl),
    syncSeconds,
    cpuSync,
    cpuSteady,
  };
}

/** Runs `body` on a fresh 1-cluster ClusterSet with the bench namespaces; keeps the logs when it fails. */
async function onClusterSet<T>(
  namespaces: number,
  body: (cs: TestClusterSet, cluster: TestCluster, sup: Supervisor) => Promise<T>,
): Promise<T> {
  const cs = await startClusterSet({ clusters: 1, log: (line) => log.info(line) });
  mkdirSync(join(cs.dir, 'bench'));
  const sup = new Supervisor(join(cs.dir, 'bench'));
  let failed = true;
  try {
    await prepare(cs, namespaces);
    const result = await body(cs, cs.clusters[0]!, sup);
    failed = false;
    return result;
  } finally {
    await sup.stopAll();
    await cs.stop({ keepLogs: failed });
    if (failed) say(`logs kept in ${cs.dir}`);
  }
}

type Options = ReturnType<typeof parseOptions<typeof specs>>;

/** The compiled build with the flags given, or else those of the Deployment `deployment` (as in the image). */
function buildFor(o: Options, deployment: string): ProcessBuild {
  const given = o.nodeArgs.split(/\s+/).filter(Boolean);
  return { dist: o.dist, nodeArgs: given.length > 0 ? given : deploymentNodeFlags(kustomizeBase(), deployment) };
}

async function workerRun(o: Options, services: number): Promise<Sample> {
  const build = buildFor(o, 'mcs-cloudmap-worker');
  return onClusterSet(o.namespaces, async (cs, cluster, sup) => {
    const t = performance.now();
    await createServices(kubeClientFor(cluster.kubeConfig()), 0, services, o.namespaces, o.endpoints, true);
    say(
      `${services} services × ${o.endpoints} endpoints with ServiceExports created in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const watch = new ImportWatch(cluster.kubeConfig(), log);
    await watch.start();
    try {
      const [metricsPort, healthPort] = (await freePorts(2)) as [number, number];
      const startedAt = performance.now();
      const worker = await startWorkerProcess(sup, {
        ...build,
        clusterId: cluster.id,
        configEnv: configMapEnv(kustomizeBase()),
        kubeconfig: cluster.kubeconfigPath,
        namespace: SYSTEM_NAMESPACE,
        metricsPort,
        healthPort,
        logsDir: join(cs.dir, 'bench'),
        cloudMapEndpoint: cs.cloudMapEndpoint,
        region: cs.region,
      });
      const all = Array.from({ length: services }, (_, i) => i);
      await watch.when(
        () => all.every((i) => watch.imported(ns(i, o.namespaces), name(i), o.endpoints)),
        o.timeout,
        `all ${services} imports`,
      );
      return await measure('worker', services, worker, startedAt, o.steady);
    } finally {
      await watch.stop();
    }
  });
}

async function webhookRun(o: Options): Promise<Sample> {
  const build = buildFor(o, 'mcs-cloudmap-webhook');
  return onClusterSet(o.namespaces, async (cs, cluster, sup) => {
    const t = performance.now();
    await createServices(kubeClientFor(cluster.kubeConfig()), 0, o.webhookServices, o.namespaces, 0, true);
    say(
      `${o.webhookServices} services with ServiceExports created in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    const certs = makeDevCertificates(join(cs.dir, 'bench'));
    const [port, metricsPort] = (await freePorts(2)) as [number, number];
    const startedAt = performance.now();
    const webhook = await startWebhookProcess(sup, {
      ...build,
      clusterId: cluster.id,
      configEnv: configMapEnv(kustomizeBase()),
      kubeconfig: cluster.kubeconfigPath,
      certFile: certs.certFile,
      keyFile: certs.keyFile,
      port,
      metricsPort,
      logsDir: join(cs.dir, 'bench'),
    });
    return measure('webhook', o.webhookServices, webhook, startedAt, o.steady);
  });
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    say(
      formatHelp(
        'npm run bench:memory -- [flags]: RSS of the compiled worker and webhook server on the testbed (run `npm run build` first)',
        specs,
      ),
    );
    return;
  }
  const o = parseOptions(specs, argv);
  const counts = o.services
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  if (counts.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`--services must list whole numbers, got "${o.services}"`);
  const load = loadavg()[0]!.toFixed(1);
  const results: Sample[] = [];
  for (const n of counts) results.push(await workerRun(o, n));
  if (o.webhookServices > 0) results.push(await webhookRun(o));

  say('');
  say(
    `bench:memory — ${new Date().toISOString().slice(0, 16)}Z, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ` +
      `load average ${load} → ${loadavg()[0]!.toFixed(1)}; build ${o.dist}, Node.js flags ${['worker', 'webhook'].map((p) => `${p}: ${buildFor(o, `mcs-cloudmap-${p}`).nodeArgs!.join(' ') || 'none'}`).join(', ')}; ${o.endpoints} endpoints per service, ${o.namespaces} namespaces`,
  );
  say('');
  say(
    `| process | synced after (CPU) | RSS synced (MiB) | peak to sync, VmHWM | RSS steady min–max (${o.steady / 1000} s; CPU) | RSS end | VmHWM end |`,
  );
  say('| --- | --- | --- | --- | --- | --- | --- |');
  for (const r of results) {
    say(
      `| ${r.label} | ${r.syncSeconds.toFixed(0)} s (${r.cpuSync.toFixed(1)} s) | ${mib(r.synced)} | ${mib(r.hwmSynced)} | ${mib(r.steadyMin)}–${mib(r.steadyMax)} (${r.cpuSteady.toFixed(1)} s) | ${mib(r.end)} | ${mib(r.hwmEnd)} |`,
    );
  }
  say('');
  say(
    'Where the RSS goes at the end (MiB; V8 heap committed by space, external buffers, and the rest: Node.js itself, malloc, stacks):',
  );
  say('');
  say('| process | RSS end | JS heap used | V8 heap committed (new / old / code / other) | external | rest |');
  say('| --- | --- | --- | --- | --- | --- |');
  for (const r of results) {
    const h = r.heap;
    say(
      `| ${r.label} | ${mib(r.end)} | ${mib(h.used)} | ${mib(h.total)} (${mib(h.new)} / ${mib(h.old)} / ${mib(h.code)} / ${mib(h.total - h.new - h.old - h.code)}) | ${mib(h.external)} | ${mib(r.end - h.total - h.external)} |`,
    );
  }
  const given = o.nodeArgs.trim();
  for (const r of results) {
    const goal = RSS_GOALS[r.process][r.count];
    const saved = writeResult(
      resultOfThisRun({
        benchmark: 'memory',
        scenario: `${r.process}-${r.count}-services`,
        size:
          r.process === 'worker'
            ? `worker, ${r.count.toLocaleString('en-US')} services, 1 cluster`
            : `webhook server, ${r.count.toLocaleString('en-US')} Services and ServiceExports cached`,
        load: `${load} at the start, ${loadavg()[0]!.toFixed(1)} at the end`,
        note: given === '' ? undefined : `under \`${given}\` instead of the Deployment's flags`,
        figures: [
          { name: 'RSS at the end', value: Number(mib(r.end)), unit: 'MiB', atMost: goal },
          {
            name: 'RSS over the steady window, highest',
            value: Number(mib(r.steadyMax)),
            unit: 'MiB',
            atMost: goal,
            detail: `${mib(r.steadyMin)}–${mib(r.steadyMax)} MiB over ${o.steady / 1000} s`,
          },
          { name: 'peak RSS (VmHWM)', value: Number(mib(r.hwmEnd)), unit: 'MiB', atMost: goal },
          { name: 'RSS once synced', value: Number(mib(r.synced)), unit: 'MiB' },
          {
            name: 'initial sync',
            value: Math.round(r.syncSeconds),
            unit: 's',
            detail: `${r.cpuSync.toFixed(1)} s of CPU`,
          },
        ],
      }),
      o.results,
    );
    if (saved) say(`result written to ${saved}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:memory failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
