// `npm run build && npm run bench:runtime [-- --services=300 --configs=...]`: the compiled worker under runtimes to
// compare (a build directory and the Node.js flags it runs under), on a 1-cluster testbed ClusterSet with N
// selector-less Services × 3 endpoints and their ServiceExports (bench/load.ts), as bench/memory.ts sets it up.
//   For each count N and each configuration named by --sync-configs: a fresh ClusterSet; the worker starts under that
//   configuration and syncs (every ServiceImport Ready with every endpoint): its CPU seconds until then, its peak RSS
//   (VmHWM) and its RSS over --steady after. Then, --rounds times, the worker is stopped and started again under each
//   configuration in turn (a warm start, from the checkpoints the first one saved): the time and CPU seconds from its
//   start to ready (Cloud Map read, informers synced) and to its work queues drained, its peak RSS, and its RSS over
//   --steady after.
// --worker-env sets worker settings over the ConfigMap's, e.g. client limits lifted so that a large sync is bound by
// CPU rather than paced by Cloud Map's quotas (the default's 4 CreateService calls a second take 42 minutes for 10,000).
// A configuration is `label:dist:flags`: a label in words, the build directory, and Node.js flags (empty: those of the
// Deployment's command in kustomize/base). Prints a Markdown table and writes
// bench/results/runtime-<label>-<N>-services.json per configuration and count, the rows of docs/benchmarks.md.
import { mkdirSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { configMapEnv, deploymentNodeFlags, kustomizeBase } from '../hack/local/manifests.ts';
import { startWorkerProcess, type HostProcess } from '../hack/local/processes.ts';
import { startClusterSet, type TestCluster, type TestClusterSet } from '../hack/testbed/index.ts';
import { freePorts } from '../hack/testbed/ports.ts';
import { Supervisor } from '../hack/testbed/supervisor.ts';
import { durationOption, formatHelp, intOption, parseOptions, stringOption } from '../src/config/options.ts';
import { SYSTEM_NAMESPACE } from '../src/core/names.ts';
import { kubeClientFor } from '../src/kube/client.ts';
import { createLogger } from '../src/observability/log.ts';
import { resultOfThisRun, resultsOption, writeResult, type Figure } from '../hack/results/result-file.ts';
import { cpuSeconds, createServices, mib, name, ns, prepare, processMemory } from './load.ts';
import { ImportWatch } from './sync-imports.ts';
import { workerEnv } from './worker-env.ts';
import { isReady, queuesIdle, reconciled, stopWorkers, until } from './worker-probes.ts';

const specs = {
  services: stringOption(
    'services',
    'BENCH_SERVICES',
    '300',
    'Comma-separated counts of exported services; each runs on fresh ClusterSets.',
  ),
  configs: stringOption(
    'configs',
    'BENCH_CONFIGS',
    'as deployed:dist:',
    "Configurations to compare, `;` between them, each `label:dist:flags` (flags empty: the Deployment's).",
  ),
  syncConfigs: stringOption(
    'sync-configs',
    'BENCH_SYNC_CONFIGS',
    '',
    'Labels of the configurations that sync a fresh ClusterSet each, `;` between them; empty: the first only.',
  ),
  rounds: intOption('rounds', 'BENCH_ROUNDS', 1, 'Warm starts of every configuration on each ClusterSet.', 0, 10),
  namespaces: intOption('namespaces', 'BENCH_NAMESPACES', 10, 'Namespaces the services are spread over.', 1),
  endpoints: intOption('endpoints', 'BENCH_ENDPOINTS', 3, 'Endpoints per exported service.', 1, 250),
  steady: durationOption(
    'steady',
    'BENCH_STEADY',
    30_000,
    'How long RSS is sampled after the sync and after each warm start.',
  ),
  workerEnv: stringOption(
    'worker-env',
    'BENCH_WORKER_ENV',
    '',
    "Worker settings over kustomize/base's ConfigMap, `;` between them: e.g. `MCS_RATE_LIMITS=CreateService=500,RegisterInstance=500` lifts the client limits that pace a large sync (4 CreateService calls a second by default).",
  ),
  cloudMap: stringOption(
    'cloudmap',
    'BENCH_CLOUDMAP',
    'realistic',
    'Cloud Map emulator mode: realistic (operations take 1 s, quotas throttle) or fast (both off: the sync is bound by CPU).',
  ),
  timeout: durationOption(
    'timeout',
    'BENCH_TIMEOUT',
    3_600_000,
    'Longest wait for the initial sync, and for a warm start to drain.',
  ),
  results: resultsOption,
};

/** The worker's RSS goals (MiB) of docs/benchmarks.md, by count. */
const RSS_GOALS: Record<number, number> = { 300: 100, 5000: 200, 10000: 250 };

const log = createLogger('bench-runtime', process.env.MCS_LOG_LEVEL ?? 'warn');
const say = (line: string) => process.stdout.write(`${line}\n`);

/** The 1-minute load average every 5 s while the benchmark runs: the machine is shared, and the load moves figures. */
const loads: number[] = [];
setInterval(() => loads.push(loadavg()[0]!), 5000).unref();

interface Config {
  label: string;
  dist: string;
  nodeArgs: string[];
}

interface Sync {
  seconds: number;
  cpu: number;
  hwm: number;
  steadyMax: number;
}

interface WarmStart {
  ready: number;
  cpuReady: number;
  drained: number;
  cpuDrained: number;
  hwm: number;
  steadyMax: number;
}

interface Runs {
  syncs: Sync[];
  starts: WarmStart[];
}

function parseConfigs(text: string): Config[] {
  return text
    .split(';')
    .map((c) => c.trim())
    .filter(Boolean)
    .map((c) => {
      const [label, dist, ...flags] = c.split(':');
      if (!label || !dist) throw new Error(`--configs: "${c}" is not label:dist:flags`);
      const given = flags.join(':').split(/\s+/).filter(Boolean);
      return {
        label,
        dist,
        nodeArgs: given.length > 0 ? given : deploymentNodeFlags(kustomizeBase(), 'mcs-cloudmap-worker'),
      };
    });
}

const slug = (label: string) =>
  label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** The highest RSS over `ms`, sampled every second. */
async function steadyMax(pid: number, ms: number): Promise<number> {
  let max = 0;
  for (const end = performance.now() + ms; performance.now() < end; await sleep(1000))
    max = Math.max(max, processMemory(pid).rss);
  return max;
}

async function startWorker(
  cs: TestClusterSet,
  cluster: TestCluster,
  sup: Supervisor,
  config: Config,
  logsDir: string,
  settings: Record<string, string>,
): Promise<HostProcess> {
  const [metricsPort, healthPort] = (await freePorts(2)) as [number, number];
  mkdirSync(logsDir, { recursive: true });
  return startWorkerProcess(sup, {
    dist: config.dist,
    nodeArgs: config.nodeArgs,
    clusterId: cluster.id,
    configEnv: { ...configMapEnv(kustomizeBase()), ...settings },
    kubeconfig: cluster.kubeconfigPath,
    namespace: SYSTEM_NAMESPACE,
    metricsPort,
    healthPort,
    logsDir,
    cloudMapEndpoint: cs.cloudMapEndpoint,
    region: cs.region,
  });
}

type Options = ReturnType<typeof parseOptions<typeof specs>>;

/** One ClusterSet of `services`: synced under `first`, then every configuration's warm starts, --rounds times. */
async function clusterSetRun(
  o: Options,
  services: number,
  first: Config,
  configs: readonly Config[],
  runs: Map<string, Runs>,
): Promise<void> {
  const mode = o.cloudMap === 'fast' ? 'fast' : 'realistic';
  const cs = await startClusterSet({ clusters: 1, cloudMap: { mode }, log: (line) => log.info(line) });
  const benchDir = join(cs.dir, 'bench');
  mkdirSync(benchDir);
  const sup = new Supervisor(benchDir);
  const cluster = cs.clusters[0]!;
  const settings = workerEnv(o.workerEnv);
  let failed = true;
  try {
    await prepare(cs, o.namespaces);
    const t = performance.now();
    await createServices(kubeClientFor(cluster.kubeConfig()), 0, services, o.namespaces, o.endpoints, true);
    say(
      `${services} services × ${o.endpoints} endpoints with ServiceExports created in ${((performance.now() - t) / 1000).toFixed(1)} s (load ${loadavg()[0]!.toFixed(1)})`,
    );
    const watch = new ImportWatch(cluster.kubeConfig(), log);
    await watch.start();
    let worker: HostProcess;
    try {
      const startedAt = performance.now();
      worker = await startWorker(cs, cluster, sup, first, join(benchDir, 'sync'), settings);
      const all = Array.from({ length: services }, (_, i) => i);
      await watch.when(
        () => all.every((i) => watch.imported(ns(i, o.namespaces), name(i), o.endpoints)),
        o.timeout,
        `all ${services} imports`,
      );
      const seconds = (performance.now() - startedAt) / 1000;
      const { pid } = worker.proc;
      const cpu = cpuSeconds(pid);
      const sync: Sync = { seconds, cpu, hwm: processMemory(pid).hwm, steadyMax: await steadyMax(pid, o.steady) };
      runs.get(first.label)!.syncs.push(sync);
      say(
        `${first.label}, ${services} services: synced in ${seconds.toFixed(1)} s (${cpu.toFixed(1)} s CPU), peak RSS ${mib(sync.hwm)} MiB, steady ≤ ${mib(sync.steadyMax)} MiB (load ${loadavg()[0]!.toFixed(1)})`,
      );
    } finally {
      await watch.stop();
    }
    for (let round = 1; round <= o.rounds; round++) {
      for (const config of configs) {
        await stopWorkers([worker]);
        const startedAt = performance.now();
        worker = await startWorker(
          cs,
          cluster,
          sup,
          config,
          join(benchDir, `${slug(config.label)}-${round}`),
          settings,
        );
        const { pid } = worker.proc;
        const w = worker;
        const ready = (await until(() => isReady(w), o.timeout, 'ready')) - startedAt;
        const cpuReady = cpuSeconds(pid);
        const drained =
          (await until(async () => (await reconciled(w)) > 0 && (await queuesIdle(w)), o.timeout, 'queues drained')) -
          startedAt;
        const cpuDrained = cpuSeconds(pid);
        const start: WarmStart = {
          ready: ready / 1000,
          cpuReady,
          drained: drained / 1000,
          cpuDrained,
          hwm: 0,
          steadyMax: await steadyMax(pid, o.steady),
        };
        start.hwm = processMemory(pid).hwm;
        runs.get(config.label)!.starts.push(start);
        say(
          `${config.label}, ${services} services, warm start ${round}: ready in ${start.ready.toFixed(1)} s (${cpuReady.toFixed(1)} s CPU), drained in ` +
            `${start.drained.toFixed(1)} s (${cpuDrained.toFixed(1)} s CPU), peak RSS ${mib(start.hwm)} MiB, steady ≤ ${mib(start.steadyMax)} MiB (load ${loadavg()[0]!.toFixed(1)})`,
        );
      }
    }
    failed = false;
  } finally {
    await sup.stopAll();
    await cs.stop({ keepLogs: failed });
    if (failed) say(`logs kept in ${cs.dir}`);
  }
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};
const list = (values: readonly number[], digits: number, unit: string) =>
  values.map((v) => v.toFixed(digits)).join(', ') + ` ${unit}`;
const mibs = (values: readonly number[]) => values.map((v) => Number(mib(v)));

/** The figures of one configuration at one count: medians, every run's value in the detail. */
function figures(r: Runs, goal: number | undefined): Figure[] {
  const out: Figure[] = [];
  const s = r.syncs;
  if (s.length > 0) {
    out.push(
      {
        name: 'initial sync, CPU',
        value: Number(median(s.map((x) => x.cpu)).toFixed(1)),
        unit: 's',
        detail: `${list(
          s.map((x) => x.cpu),
          1,
          's',
        )}; in ${list(
          s.map((x) => x.seconds),
          0,
          's',
        )}`,
      },
      {
        name: 'initial sync, peak RSS (VmHWM)',
        value: median(mibs(s.map((x) => x.hwm))),
        unit: 'MiB',
        atMost: goal,
        detail: `${list(mibs(s.map((x) => x.hwm)), 0, 'MiB')}`,
      },
      {
        name: 'after the sync, RSS steady, highest',
        value: median(mibs(s.map((x) => x.steadyMax))),
        unit: 'MiB',
        atMost: goal,
        detail: `${list(mibs(s.map((x) => x.steadyMax)), 0, 'MiB')}`,
      },
    );
  }
  const w = r.starts;
  if (w.length > 0) {
    out.push(
      {
        name: 'warm start to ready',
        value: Number(median(w.map((x) => x.ready)).toFixed(1)),
        unit: 's',
        detail: `${list(
          w.map((x) => x.ready),
          1,
          's',
        )}; CPU ${list(
          w.map((x) => x.cpuReady),
          1,
          's',
        )}`,
      },
      {
        name: 'warm start to queues drained, CPU',
        value: Number(median(w.map((x) => x.cpuDrained)).toFixed(1)),
        unit: 's',
        detail: `${list(
          w.map((x) => x.cpuDrained),
          1,
          's',
        )}; in ${list(
          w.map((x) => x.drained),
          1,
          's',
        )}`,
      },
      {
        name: 'warm start, peak RSS (VmHWM)',
        value: median(mibs(w.map((x) => x.hwm))),
        unit: 'MiB',
        atMost: goal,
        detail: `${list(mibs(w.map((x) => x.hwm)), 0, 'MiB')}`,
      },
      {
        name: 'after a warm start, RSS steady, highest',
        value: median(mibs(w.map((x) => x.steadyMax))),
        unit: 'MiB',
        atMost: goal,
        detail: `${list(mibs(w.map((x) => x.steadyMax)), 0, 'MiB')}`,
      },
    );
  }
  return out;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    say(
      formatHelp(
        'npm run bench:runtime -- [flags]: sync CPU, warm start and RSS of the compiled worker under runtimes to compare (run `npm run build` first)',
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
  const configs = parseConfigs(o.configs);
  const syncLabels = o.syncConfigs
    .split(';')
    .map((c) => c.trim())
    .filter(Boolean);
  const syncing =
    syncLabels.length === 0
      ? [configs[0]!]
      : syncLabels.map(
          (l) =>
            configs.find((c) => c.label === l) ??
            (() => {
              throw new Error(`--sync-configs: no configuration "${l}"`);
            })(),
        );
  for (const n of counts) {
    const loadAtStart = loadavg()[0]!.toFixed(1);
    loads.length = 0;
    const runs = new Map(configs.map((c) => [c.label, { syncs: [], starts: [] }]));
    for (const first of syncing) await clusterSetRun(o, n, first, configs, runs);
    const load = `${loadAtStart} at the start, ${loadavg()[0]!.toFixed(1)} at the end, ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)} during`;
    say('');
    say(
      `bench:runtime — ${n} services, ${new Date().toISOString().slice(0, 16)}Z, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${load}; Cloud Map emulator ${o.cloudMap}`,
    );
    say('');
    say('| configuration | figure | median | runs |');
    say('| --- | --- | --- | --- |');
    for (const config of configs) {
      const fs = figures(runs.get(config.label)!, RSS_GOALS[n]);
      for (const f of fs) say(`| ${config.label} | ${f.name} | ${f.value} ${f.unit} | ${f.detail ?? ''} |`);
      if (fs.length === 0) continue;
      const saved = writeResult(
        resultOfThisRun({
          benchmark: 'runtime',
          scenario: `${slug(config.label)}-${n}-services`,
          size: `worker, ${n.toLocaleString('en-US')} services, 1 cluster: ${config.label}`,
          load,
          note: `build ${config.dist}, Node.js flags \`${config.nodeArgs.join(' ')}\`; Cloud Map emulator ${o.cloudMap}${o.workerEnv === '' ? '' : `; worker settings ${o.workerEnv}`}`,
          figures: fs,
        }),
        o.results,
      );
      if (saved) say(`result written to ${saved}`);
    }
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:runtime failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
