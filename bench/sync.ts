// `npm run build && npm run bench:sync [-- --services=5000]`: the compiled reconcile workers of a 3-cluster testbed
// ClusterSet under the Cloud Map emulator in its realistic mode (operations take 1 s, the documented request quotas
// throttle), with N exported services × 3 endpoints (M6, M7).
//   layout (bench/sync-layout.ts): cls1 exports the first three quarters of the services, cls2 the last three
//     quarters (half of them overlap: both clusters' endpoints in one import), cls3 only imports (with
//     --exporting-clusters=1, cls1 exports every service and cls2 and cls3 only import). Services are
//     selector-less with EndpointSlices written by the benchmark (endpoints cost no pods), created with their
//     ServiceExports before the workers start;
//   1. initial sync: workers start → every import present (ServiceImport Ready with every exporting cluster's
//      endpoints) in all three clusters, next to its lower bound from the account's quotas (the writes no controller
//      can avoid, at the documented rates: the testbed's clusters share one account and Region); a progress line
//      each minute gives each cluster's imports present and its workers' queued keys, to show which cluster trails;
//   2. export-to-import latency of a new service: ServiceExport created in cls1 → imported in cls3, one at a time;
//   3. endpoint-change latency: an endpoint in cls1 turning unready (or ready) → shown so in cls3, one at a time;
//   4. idle Cloud Map calls per minute per cluster, counted at the emulator (each worker has its own access key); a
//      window in which a worker started leading again (its member re-reads Cloud Map) is reported and counted again;
//   5. worker RSS, peak over the run (with the step it came in) and at the end (split into file pages, anonymous
//      memory and V8 heap), read from /proc;
//   6. restart in sync: every worker stopped and started again, then cls1's alone (a rollout in one cluster); Cloud
//      Map writes (at the emulator) and Kubernetes writes to imports (resourceVersions of ServiceImports and
//      EndpointSlices) during the restart, and the time from start to ready (Cloud Map read once) and to every work
//      queue drained.
// --cross-region puts cls3 in another Region (eu-west-1; every worker reads both Regions, --regions): cls1 and cls2
// register in us-east-1 and cls3 imports from there through its second Region's watcher, so 2. and 3. are cross-Region.
// Workers run as host processes with the production settings of kustomize/base (ConfigMap and Node.js flags) and
// --clusters=3. Prints a Markdown table, and writes bench/results/sync-<scenario>.json, the row of docs/benchmarks.md
// (bench/sync-result.ts; `--results=` for an A/B run, which must not replace the current figures).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { configMapEnv, deploymentNodeFlags, kustomizeBase } from '../hack/local/manifests.ts';
import { LOCAL_AWS_SECRET_ACCESS_KEY, startWorkerProcess, type HostProcess } from '../hack/local/processes.ts';
import { startClusterSet, type TestCluster, type TestClusterSet } from '../hack/testbed/index.ts';
import { STATE_FILE, type ClusterSetState } from '../hack/testbed/clusterset.ts';
import { freePorts } from '../hack/testbed/ports.ts';
import { Supervisor } from '../hack/testbed/supervisor.ts';
import { CLOUD_MAP_QUOTAS, quotaLowerBoundSeconds } from '../src/cloudmap/quotas.ts';
import {
  boolOption,
  ConfigError,
  durationOption,
  formatHelp,
  intOption,
  parseOptions,
  stringOption,
} from '../src/config/options.ts';
import { CONTROLLER_NAME, LABEL_MANAGED_BY, SYSTEM_NAMESPACE } from '../src/core/names.ts';
import { CONTENT_MERGE_PATCH, kubeClientFor, type KubeClient } from '../src/kube/client.ts';
import { ENDPOINT_SLICES, resourcePath, SERVICE_EXPORTS, SERVICE_IMPORTS } from '../src/kube/resources.ts';
import { createLogger } from '../src/observability/log.ts';
import {
  addresses,
  cpuSeconds,
  createExported,
  createServices,
  heapAccount,
  mib,
  name,
  ns,
  percentile,
  prepare,
  processMemory,
  residentByKind,
  serviceExportBody,
  sliceBody,
  stolenSeconds,
  type HeapAccount,
} from './load.ts';
import { describeLayout, exportRanges, expectedEndpoints, unavoidableWrites } from './sync-layout.ts';
import { workerEnv } from './worker-env.ts';
import { ImportWatch } from './sync-imports.ts';
import {
  isReady,
  metrics,
  metricSeries,
  metricValue,
  queuesIdle,
  reconciled,
  stopWorkers,
  until,
} from './worker-probes.ts';
import { syncResult } from './sync-result.ts';
import { resultOfThisRun, resultsOption, writeResult } from '../hack/results/result-file.ts';

const specs = {
  services: intOption(
    'services',
    'BENCH_SERVICES',
    1000,
    'Distinct exported services (cls1 and cls2 each export three quarters of them).',
    4,
  ),
  namespaces: intOption(
    'namespaces',
    'BENCH_NAMESPACES',
    0,
    'Namespaces the services are spread over; 0: one per 200 services, at least 10 (Cloud Map allows 2,000 instances per namespace).',
    0,
  ),
  endpoints: intOption('endpoints', 'BENCH_ENDPOINTS', 3, 'Endpoints per service and exporting cluster.', 1, 250),
  samples: intOption('samples', 'BENCH_SAMPLES', 50, 'Samples of each latency (new service, endpoint change).', 1),
  idleWindow: durationOption(
    'idle-window',
    'BENCH_IDLE_WINDOW',
    360_000,
    'How long Cloud Map calls are counted with nothing changing (the paced resync spends the same every minute).',
  ),
  idleRetries: intOption(
    'idle-retries',
    'BENCH_IDLE_RETRIES',
    2,
    'Idle windows counted again when a worker started leading again in one (each reported).',
    0,
  ),
  restartWindow: durationOption(
    'restart-window',
    'BENCH_RESTART_WINDOW',
    60_000,
    'How long writes are counted after the workers restart.',
  ),
  coldRestart: boolOption(
    'cold-restart',
    'BENCH_COLD_RESTART',
    true,
    'After the restarts (warm: from the checkpoints, M9), the same two restarts again with --warm-start=false, for comparison.',
  ),
  restartTimeout: durationOption(
    'restart-timeout',
    'BENCH_RESTART_TIMEOUT',
    300_000,
    'Longest wait for the restarted workers to be ready and drained (reported, not a failure).',
  ),
  dist: stringOption(
    'dist',
    'BENCH_DIST',
    'dist',
    'Directory of the compiled build (`npm run build`), relative to the repository.',
  ),
  exportingClusters: intOption(
    'exporting-clusters',
    'BENCH_EXPORTING_CLUSTERS',
    2,
    'Clusters exporting: 2 (cls1 and cls2, overlapping by half) or 1 (cls1 exports every service; cls2 and cls3 import).',
    1,
    2,
  ),
  crossRegion: boolOption(
    'cross-region',
    'BENCH_CROSS_REGION',
    false,
    'cls3 in eu-west-1, every worker reading both Regions: the latencies are cross-Region.',
  ),
  requestLog: stringOption(
    'request-log',
    'BENCH_REQUEST_LOG',
    '',
    "Write the emulator's log of every Cloud Map request of the initial sync to this file (JSON lines), to see where its time went.",
  ),
  workerEnv: stringOption(
    'worker-env',
    'BENCH_WORKER_ENV',
    '',
    "Worker settings that replace those of kustomize/base's ConfigMap, `;` between them (e.g. `MCS_KUBE_RESYNC_INTERVAL=20s`), for an A/B of one setting.",
  ),
  sampleLog: stringOption(
    'sample-log',
    'BENCH_SAMPLE_LOG',
    '',
    "Write each latency sample (which service, when, how long) and the emulator's log of every Cloud Map request while they were taken to this file (JSON lines), to see where a slow sample's time went.",
  ),
  nodeFlags: stringOption(
    'node-flags',
    'BENCH_NODE_FLAGS',
    '',
    "Node.js flags the workers run the whole benchmark under, replacing the Deployment's (e.g. `--max-old-space-size=384 --max-semi-space-size=1 --optimize-for-size` to let V8 compile), for an A/B of the runtime; the restarts use them too unless --restart-node-flags names others.",
  ),
  restartNodeFlags: stringOption(
    'restart-node-flags',
    'BENCH_RESTART_NODE_FLAGS',
    '',
    "Other Node.js flags to compare the warm restarts under, `;` between sets (each replaces the Deployment's flags, e.g. `--max-semi-space-size=1 --optimize-for-size;--max-semi-space-size=8`): the two restarts run under the Deployment's flags, then under each set, --restart-rounds times, each with its start time and peak RSS.",
  ),
  restartRounds: intOption(
    'restart-rounds',
    'BENCH_RESTART_ROUNDS',
    1,
    'Rounds of the warm restarts (with --restart-node-flags, each round runs every set of flags in turn).',
    1,
    10,
  ),
  profileRestarts: stringOption(
    'profile-restarts',
    'BENCH_PROFILE_RESTARTS',
    '',
    "Start the restarted workers with --cpu-prof, writing their CPU profiles (start to stop) under this directory, to see where a restart's time goes (sampling slows them a little).",
  ),
  keepLogs: boolOption(
    'keep-logs',
    'BENCH_KEEP_LOGS',
    false,
    "Keep the ClusterSet's directory (component and worker logs) after a successful run.",
  ),
  timeout: durationOption('timeout', 'BENCH_TIMEOUT', 3_600_000, 'Longest wait for the initial sync.'),
  results: resultsOption,
};

const CLUSTERS = 3;
/** cls3's Region with --cross-region. */
const OTHER_REGION = 'eu-west-1';
/** Cloud Map APIs that change state: none may be called by a restart with everything in sync. */
const WRITE_APIS = new Set([
  'CreateHttpNamespace',
  'CreateService',
  'DeleteService',
  'DeleteNamespace',
  'RegisterInstance',
  'DeregisterInstance',
  'UpdateService',
  'UpdateInstanceCustomHealthStatus',
]);

const log = createLogger('bench-sync', process.env.MCS_LOG_LEVEL ?? 'warn');
const say = (line: string) => process.stdout.write(`${line}\n`);
const accessKey = (cluster: TestCluster) => `bench-${cluster.id}`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * A random pause before each sample. Samples run one after another, each starting right after cls3 saw the previous
 * one, i.e. just after cls3's marker poll: without it every sample would start at the same phase of the 1 s poll and
 * measure the worst case only, instead of changes arriving at any time.
 */
function dephase(): Promise<void> {
  return sleep(100 + Math.random() * 1000);
}

/**
 * Longest wait for one latency sample. A sample slowed by a worker that lost its Lease and read Cloud Map again is a
 * figure (the p99 shows it), not a failed run.
 */
const SAMPLE_TIMEOUT_MS = 120_000;

function latency(samples: number[]): { p50: number; p99: number; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), n: samples.length };
}

function summary(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const ms = (n: number) => `${Math.round(n)} ms`;
  return `p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))} (max ${ms(sorted.at(-1)!)})`;
}

/** Each work queue's waiting keys, as `name n (low m)`, for the initial sync's progress lines. */
async function queueDepths(worker: HostProcess): Promise<string> {
  const lanes = new Map<string, Record<string, number>>();
  for (const { labels, value } of metricSeries(await metrics(worker), 'mcs_cloudmap_workqueue_depth')) {
    lanes.set(labels.name!, { ...lanes.get(labels.name!), [labels.lane!]: value });
  }
  return [...lanes].map(([queue, n]) => `${queue} ${n.normal ?? 0} (low ${n.low ?? 0})`).join(', ');
}

/** resourceVersion of every ServiceImport and of every EndpointSlice the controller manages, by kind/namespace/name. */
async function importVersions(client: KubeClient): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [kind, path] of [
    ['ServiceImport', resourcePath(SERVICE_IMPORTS)],
    [
      'EndpointSlice',
      `${resourcePath(ENDPOINT_SLICES)}?labelSelector=${encodeURIComponent(`${LABEL_MANAGED_BY}=${CONTROLLER_NAME}`)}`,
    ],
  ] as const) {
    const list = await client.request<{
      items: Array<{ metadata: { namespace: string; name: string; resourceVersion: string } }>;
    }>({ method: 'GET', path });
    for (const item of list.items)
      out.set(`${kind} ${item.metadata.namespace}/${item.metadata.name}`, item.metadata.resourceVersion);
  }
  return out;
}

function writesIn(byApi: Record<string, number> | undefined): number {
  return Object.entries(byApi ?? {})
    .filter(([api]) => WRITE_APIS.has(api))
    .reduce((n, [, c]) => n + c, 0);
}

interface IdleWindow {
  readonly minutes: number;
  /** Per cluster: calls per minute, in all and by API. */
  readonly total: number[];
  readonly byApi: (readonly (readonly [string, number])[])[];
  /** Per cluster: times its worker started leading during the window. */
  readonly leaderStarts: number[];
  /** Per cluster: the longest event-loop delay its worker saw during the window (prom-client resets it per scrape). */
  readonly loopLagMaxS: number[];
  readonly heapUsed: number[];
}

/** Counts Cloud Map calls at the emulator over `windowMs` once every work queue is empty. */
async function countIdle(cs: TestClusterSet, workers: readonly HostProcess[], windowMs: number): Promise<IdleWindow> {
  await sleep(2000);
  while (!(await Promise.all(workers.map(queuesIdle))).every(Boolean)) await sleep(500);
  const startsBefore = (await Promise.all(workers.map(metrics))).map((text) =>
    metricValue(text, 'mcs_cloudmap_leader_starts_total'),
  );
  const before = await cs.cloudMapControl.calls();
  const idleStart = performance.now();
  say(`counting Cloud Map calls for ${windowMs / 1000} s with nothing changing`);
  await sleep(windowMs);
  const after = await cs.cloudMapControl.calls();
  const minutes = (performance.now() - idleStart) / 60_000;
  const texts = await Promise.all(workers.map(metrics));
  const byApi = cs.clusters.map((cluster) => {
    const [b, a] = [before.byAccessKey[accessKey(cluster)] ?? {}, after.byAccessKey[accessKey(cluster)] ?? {}];
    return Object.entries(a)
      .filter(([api, n]) => n > (b[api] ?? 0))
      .map(([api, n]) => [api, (n - (b[api] ?? 0)) / minutes] as const);
  });
  return {
    minutes,
    byApi,
    total: byApi.map((apis) => apis.reduce((n, [, v]) => n + v, 0)),
    leaderStarts: texts.map((text, c) => metricValue(text, 'mcs_cloudmap_leader_starts_total') - startsBefore[c]!),
    loopLagMaxS: texts.map((text) => metricValue(text, 'mcs_cloudmap_nodejs_eventloop_lag_max_seconds')),
    heapUsed: texts.map((text) => metricValue(text, 'mcs_cloudmap_nodejs_heap_size_used_bytes')),
  };
}

/** The worker Deployment's Node.js flags, as the image runs them, or `instead` (--node-flags) when given. */
const deploymentFlags = (instead = '') =>
  instead.trim() === '' ? deploymentNodeFlags(kustomizeBase(), 'mcs-cloudmap-worker') : instead.trim().split(/\s+/);

/**
 * Starts the workers of `clusters` (logs under bench/<round>/<cluster>) with `nodeFlags`; with `profileDir`, each with
 * --cpu-prof writing to <profileDir>/<round>/<cluster>.
 */
function startWorkers(
  cs: TestClusterSet,
  clusters: readonly TestCluster[],
  sup: Supervisor,
  configEnv: Record<string, string>,
  regionOf: (cluster: TestCluster) => string,
  dist: string,
  round: string,
  profileDir: string,
  nodeFlags: string[],
): Promise<HostProcess[]> {
  return Promise.all(
    clusters.map(async (cluster) => {
      const [metricsPort, healthPort] = (await freePorts(2)) as [number, number];
      const logsDir = join(cs.dir, 'bench', round, cluster.id);
      mkdirSync(logsDir, { recursive: true });
      const nodeArgs =
        profileDir === ''
          ? nodeFlags
          : [...nodeFlags, '--cpu-prof', `--cpu-prof-dir=${resolve(profileDir, round, cluster.id)}`];
      return startWorkerProcess(sup, {
        nodeArgs,
        clusterId: cluster.id,
        configEnv,
        kubeconfig: cluster.kubeconfigPath,
        namespace: SYSTEM_NAMESPACE,
        metricsPort,
        healthPort,
        logsDir,
        cloudMapEndpoint: cs.cloudMapEndpoint,
        region: regionOf(cluster),
        credentials: { accessKeyId: accessKey(cluster), secretAccessKey: LOCAL_AWS_SECRET_ACCESS_KEY },
        dist,
      });
    }),
  );
}

/**
 * CPU seconds used so far by the testbed's processes, summed by kind (kube-apiserver, etcd, the emulator, the rest),
 * and the seconds the host stole from the machine's CPUs.
 */
function testbedCpu(cs: TestClusterSet): Record<string, number> {
  const { pids } = JSON.parse(readFileSync(join(cs.dir, STATE_FILE), 'utf8')) as ClusterSetState;
  const kindOf = (name: string) =>
    name.startsWith('kube-apiserver')
      ? 'kube-apiservers'
      : name.startsWith('etcd')
        ? 'etcd'
        : name === 'moto_server'
          ? 'Cloud Map emulator'
          : 'other';
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const kind = kindOf(name);
    try {
      out[kind] = (out[kind] ?? 0) + cpuSeconds(pid);
    } catch {
      // a component restarted (new pid) or gone: not counted
    }
  }
  out['stolen by the host'] = stolenSeconds();
  return out;
}

/** SIGTERM, as a rolling update does: the Lease is released and in-flight work finishes. */
/** What a restart in sync of some clusters' workers did, per restarted cluster. */
interface Restart {
  readonly clusters: readonly TestCluster[];
  /** Cloud Map writes at the emulator during the restart window, and the heartbeats among them. */
  readonly writes: number[];
  /** Cloud Map reads at the emulator during the restart window, by API. */
  readonly reads: Record<string, number>[];
  /** With --warm-start=false. */
  readonly cold: boolean;
  /** The Node.js flags the workers restarted with, if not the Deployment's (--restart-node-flags). */
  readonly nodeFlags: string;
  /** Peak RSS of each restarted worker, from its start to the end of the restart window. */
  readonly peakRss: number[];
  /** Where each restarted worker's peak RSS went, read at the sample that set it. */
  readonly peakAccount: (PeakAccount | undefined)[];
  /** CPU seconds each restarted worker used until it was ready. */
  readonly cpuToReady: (number | undefined)[];
  /** CPU seconds the testbed's processes used (by kind) from the start until the last worker was ready. */
  readonly testbedCpu: Record<string, number>;
  readonly heartbeats: number[];
  /** ServiceImports and EndpointSlices rewritten, of how many. */
  readonly rewritten: number[];
  readonly objects: number[];
  /** ms from the start to ready (Cloud Map read) and to every work queue drained; undefined: not within the timeout. */
  readonly ready: (number | undefined)[];
  readonly drained: (number | undefined)[];
}

/**
 * A worker's memory at the RSS sample that set its peak since it started: /proc's split at that sample, and the
 * process's own heap account fetched right after it (absent when its /metrics did not answer yet).
 */
interface PeakAccount extends MemoryAccount {
  /** ms from the worker's start. */
  readonly atMs: number;
}

/** A worker's resident memory by kind (/proc) and its own account of V8's heap (its /metrics), once both are read. */
interface MemoryAccount {
  readonly file: number;
  readonly anonymous: number;
  heap?: HeapAccount;
}

/** In MiB: file pages; anonymous, and of it V8's heap committed by space, in use, and external buffers. */
function describeMemory(m: MemoryAccount): string {
  const heap =
    m.heap === undefined
      ? 'heap account not read'
      : `V8 heap committed ${mib(m.heap.total)} (new ${mib(m.heap.new)} / old ${mib(m.heap.old)} / code ${mib(m.heap.code)}), used ${mib(m.heap.used)}, external ${mib(m.heap.external)}`;
  return `file ${mib(m.file)}, anonymous ${mib(m.anonymous)}; ${heap}`;
}

function describePeak(p: PeakAccount | undefined): string {
  return p === undefined ? 'not sampled' : `at ${seconds(p.atMs)}: ${describeMemory(p)}`;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    say(
      formatHelp(
        'npm run bench:sync -- [flags]: reconcile worker sync benchmark on a 3-cluster testbed ClusterSet',
        specs,
      ),
    );
    return;
  }
  const o = parseOptions(specs, argv);
  if (!existsSync(resolve(import.meta.dirname, '..', o.dist, 'src', 'worker', 'main.js'))) {
    throw new Error(
      `no compiled worker in ${o.dist}/: run \`npm run build\` first (the benchmark measures the build the image runs)`,
    );
  }
  const settings = workerEnv(o.workerEnv);
  const namespaces = o.namespaces > 0 ? o.namespaces : Math.max(10, Math.ceil(o.services / 200));
  const started = Date.now();
  const loadBefore = loadavg()[0]!;
  const cs = await startClusterSet({ clusters: CLUSTERS, log: (line) => log.info(line) });
  mkdirSync(join(cs.dir, 'bench'));
  const sup = new Supervisor(join(cs.dir, 'bench'));
  let failed = true;
  const watches: ImportWatch[] = [];
  try {
    const clients = cs.clusters.map((c) => kubeClientFor(c.kubeConfig()));
    const [client1] = clients as [KubeClient];
    const ranges = exportRanges(o.services, o.exportingClusters === 1 ? 1 : 2);
    const layout = describeLayout(
      ranges,
      cs.clusters.map((c) => c.id),
    );
    if (o.workerEnv !== '')
      say(
        `workers run with ${Object.entries(settings)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')} over kustomize/base's ConfigMap`,
      );
    say(
      `ClusterSet of ${CLUSTERS} up in ${seconds(cs.startupMs)}; creating ${o.services} Services × ${o.endpoints} endpoints in ${namespaces} namespaces: ${layout}`,
    );
    await prepare(cs, namespaces);
    const t = performance.now();
    await Promise.all(
      ranges.map((r) => createServices(clients[r.cluster]!, r.from, r.to, namespaces, o.endpoints, true, r.cluster)),
    );
    say(`objects created in ${seconds(performance.now() - t)}`);

    watches.push(...cs.clusters.map((c) => new ImportWatch(c.kubeConfig(), log)));
    await Promise.all(watches.map((w) => w.start()));
    const watch3 = watches[2]!;

    // 1. Workers start → every import present in every cluster.
    const configEnv: Record<string, string> = {
      ...configMapEnv(kustomizeBase()),
      MCS_CLUSTERS: String(CLUSTERS),
      ...(o.crossRegion ? { MCS_REGIONS: `${cs.region},${OTHER_REGION}` } : {}),
      ...settings,
    };
    const regionOf = (cluster: TestCluster) => (o.crossRegion && cluster === cs.clusters[2] ? OTHER_REGION : cs.region);
    const testbedAtStart = testbedCpu(cs);
    const workerStart = performance.now();
    const workers = await startWorkers(
      cs,
      cs.clusters,
      sup,
      configEnv,
      regionOf,
      o.dist,
      'run',
      '',
      deploymentFlags(o.nodeFlags),
    );
    let peakRss = 0;
    // Which step of the run each worker's peak came in, to see what the memory is spent on.
    let phase = 'initial sync';
    let peakWhere = '';
    // The peak of any worker in each step before the restarts (the restarts report their own).
    const peakInStep = new Map<string, number>();
    // Each worker's peak since it last started (a restart resets it).
    const peakSinceStart = workers.map(() => 0);
    // In the restarts, what each worker's peak since its start was made of, and when its start was.
    const peakAccount: (PeakAccount | undefined)[] = workers.map(() => undefined);
    const startedAt = workers.map(() => performance.now());
    const sampler = setInterval(() => {
      for (const [c, w] of workers.entries()) {
        try {
          const rss = processMemory(w.proc.pid).rss;
          if (phase.startsWith('restart') && rss > peakSinceStart[c]!) {
            const account: PeakAccount = { atMs: performance.now() - startedAt[c]!, ...residentByKind(w.proc.pid) };
            peakAccount[c] = account;
            heapAccount(w.metricsUrl).then(
              (heap) => {
                account.heap = heap;
              },
              () => {},
            );
          }
          peakSinceStart[c] = Math.max(peakSinceStart[c]!, rss);
          peakInStep.set(phase, Math.max(peakInStep.get(phase) ?? 0, rss));
          if (rss > peakRss) {
            peakRss = rss;
            peakWhere = `${cs.clusters[c]!.id}, ${phase}, ${seconds(performance.now() - workerStart)} after the first start`;
          }
        } catch {
          // between a stop and the next start
        }
      }
    }, 1000);
    try {
      const indexes = Array.from({ length: o.services }, (_, i) => i);
      const present = (w: ImportWatch, i: number) =>
        w.imported(ns(i, namespaces), name(i), expectedEndpoints(ranges, i, o.endpoints));
      const importedIn = (w: ImportWatch) => indexes.filter((i) => present(w, i)).length;
      const allImported = () => watches.every((w) => indexes.every((i) => present(w, i)));
      const deadline = performance.now() + o.timeout;
      let lastReport = performance.now();
      while (!allImported()) {
        if (performance.now() > deadline) throw new Error(`not every import present after ${o.timeout} ms`);
        if (performance.now() - lastReport > 60_000) {
          lastReport = performance.now();
          const calls = await cs.cloudMapControl.calls();
          say(
            `  ${seconds(performance.now() - workerStart)}: ${calls.byApi.CreateService?.ok ?? 0} services and ${calls.byApi.RegisterInstance?.ok ?? 0} instances created, ` +
              `${calls.byApi.CreateService?.throttled ?? 0} CreateService throttled; load ${loadavg()[0]!.toFixed(1)}`,
          );
          // Which cluster's imports trail, and whether its worker still has the keys queued or has done them.
          const depths = await Promise.all(workers.map(queueDepths));
          say(
            `    imported: ${watches.map((w, c) => `${cs.clusters[c]!.id} ${importedIn(w)}`).join(', ')}; ` +
              `queued: ${depths.map((d, c) => `${cs.clusters[c]!.id} (${d})`).join(', ')}`,
          );
        }
        await sleep(200);
      }
      const initialSync = performance.now() - workerStart;
      say(
        `all ${o.services} imports present in all ${CLUSTERS} clusters ${seconds(initialSync)} after the workers started`,
      );
      // Where the sync's CPU went: on a machine this small the sync is bound by it, and the split says which part to cut.
      const testbedAtSync = testbedCpu(cs);
      const syncCpu = {
        workers: workers.map((w) => cpuSeconds(w.proc.pid)),
        testbed: Object.fromEntries(
          Object.entries(testbedAtSync).map(([kind, s]) => [kind, s - (testbedAtStart[kind] ?? 0)]),
        ),
      };
      const syncCalls = await cs.cloudMapControl.calls();
      if (o.requestLog !== '') {
        writeFileSync(
          o.requestLog,
          (await cs.cloudMapControl.requests()).map((r) => JSON.stringify(r)).join('\n') + '\n',
        );
        say(`the initial sync's Cloud Map requests written to ${o.requestLog}`);
      }

      // 2. New service: ServiceExport created in cls1 → imported in cls3.
      phase = 'latency samples';
      const samplesFrom = Date.now();
      const sampleRecords: object[] = [];
      const exportLatency: number[] = [];
      for (let s = 0; s < o.samples; s++) {
        const i = o.services + s;
        const namespace = ns(i, namespaces);
        await createExported(client1, namespace, name(i), addresses(i, o.endpoints), false);
        await dephase();
        const [t0, at] = [performance.now(), Date.now()];
        await client1.request({
          method: 'POST',
          path: resourcePath(SERVICE_EXPORTS, namespace),
          body: serviceExportBody(namespace, name(i)),
        });
        exportLatency.push(
          (await watch3.when(
            () => watch3.imported(namespace, name(i), o.endpoints),
            SAMPLE_TIMEOUT_MS,
            `import of ${namespace}/${name(i)}`,
          )) - t0,
        );
        sampleRecords.push({ sample: 'export-to-import', namespace, name: name(i), at, ms: exportLatency.at(-1) });
      }

      // 3. Endpoint change: the first endpoint of a service cls1 exports turns unready (or ready again) in cls1.
      const changeLatency: number[] = [];
      for (let s = 0; s < o.samples; s++) {
        const i = (s * 37) % ranges[0]!.to;
        const namespace = ns(i, namespaces);
        const own = addresses(i, o.endpoints);
        const first = own[0]!;
        const ready = !(watch3.endpoints(namespace, name(i)).get(first) ?? true);
        await dephase();
        const [t0, at] = [performance.now(), Date.now()];
        await client1.request({
          method: 'PATCH',
          path: resourcePath(ENDPOINT_SLICES, namespace, `${name(i)}-bench`),
          contentType: CONTENT_MERGE_PATCH,
          body: { endpoints: sliceBody(namespace, name(i), own, ready ? new Set() : new Set([first])).endpoints },
        });
        changeLatency.push(
          (await watch3.when(
            () => watch3.endpoints(namespace, name(i)).get(first) === ready,
            SAMPLE_TIMEOUT_MS,
            `readiness of ${first}`,
          )) - t0,
        );
        sampleRecords.push({ sample: 'endpoint-change', namespace, name: name(i), at, ms: changeLatency.at(-1) });
      }
      if (o.sampleLog !== '') {
        const requests = await cs.cloudMapControl.requests(samplesFrom);
        writeFileSync(o.sampleLog, [...sampleRecords, ...requests].map((r) => JSON.stringify(r)).join('\n') + '\n');
        say(`the latency samples and their ${requests.length} Cloud Map requests written to ${o.sampleLog}`);
      }

      // 4. Nothing changing: Cloud Map calls per minute per cluster, at the emulator. A window in which a worker
      // started leading again (a lost Lease: its member reads Cloud Map in full again) does not show the idle cost:
      // it is reported with what the workers said of their event loops, and counted again.
      phase = 'idle';
      const idleNotes: string[] = [];
      let idle: IdleWindow;
      for (let attempt = 1; ; attempt++) {
        idle = await countIdle(cs, workers, o.idleWindow);
        const restarted = idle.leaderStarts.flatMap((n, c) => (n > 0 ? [cs.clusters[c]!.id] : []));
        if (restarted.length === 0 || attempt > o.idleRetries) break;
        idleNotes.push(
          `window ${attempt} not counted: ${restarted.join(', ')} started leading again in it (${idle.total.map((n, c) => `${cs.clusters[c]!.id} ${n.toFixed(1)} calls/min`).join(', ')}; ` +
            `longest event-loop stall ${idle.loopLagMaxS.map((s) => `${s.toFixed(2)} s`).join(', ')}; JS heap used ${idle.heapUsed.map((b) => `${mib(b)} MiB`).join(', ')})`,
        );
      }
      for (const note of idleNotes) say(`  ${note}`);
      const endRss = workers.map((w) => processMemory(w.proc.pid).rss);
      const endResident: MemoryAccount[] = await Promise.all(
        workers.map(async (w) => ({ ...residentByKind(w.proc.pid), heap: await heapAccount(w.metricsUrl) })),
      );

      // 6. Restart with everything in sync: every cluster's worker at once, then one cluster's alone (a rollout there).
      const restart = async (
        round: string,
        which: readonly number[],
        cold = false,
        nodeFlags = '',
      ): Promise<Restart> => {
        phase = round;
        const clusters = which.map((c) => cs.clusters[c]!);
        const versionsBefore = await Promise.all(which.map((c) => importVersions(clients[c]!)));
        await stopWorkers(which.map((c) => workers[c]!));
        const callsBefore = await cs.cloudMapControl.calls();
        const testbedBefore = testbedCpu(cs);
        const restartAt = performance.now();
        const started = await startWorkers(
          cs,
          clusters,
          sup,
          cold ? { ...configEnv, MCS_WARM_START: 'false' } : configEnv,
          regionOf,
          o.dist,
          round,
          o.profileRestarts,
          deploymentFlags(nodeFlags === '' ? o.nodeFlags : nodeFlags),
        );
        which.forEach((c, i) => {
          workers[c] = started[i]!;
          peakSinceStart[c] = 0;
          peakAccount[c] = undefined;
          startedAt[c] = restartAt;
        });
        // A restart that is not ready in time is a figure too (the table says so), not a failed run.
        // `atSettled` runs the moment a worker's check first holds (to read what it used until then).
        const settled = (
          check: (w: HostProcess) => Promise<boolean>,
          atSettled: (w: HostProcess, i: number) => void = () => {},
        ) =>
          Promise.all(
            started.map((w, i) =>
              until(() => check(w), o.restartTimeout, 'the restart').then(
                (at) => (atSettled(w, i), at - restartAt),
                () => undefined,
              ),
            ),
          );
        const cpuToReady: (number | undefined)[] = started.map(() => undefined);
        const ready = await settled(isReady, (w, i) => (cpuToReady[i] = cpuSeconds(w.proc.pid)));
        const testbedAfter = testbedCpu(cs);
        const drained = await settled(async (w) => (await reconciled(w)) > 0 && (await queuesIdle(w)));
        await sleep(Math.max(0, o.restartWindow - (performance.now() - restartAt)));
        const callsAfter = await cs.cloudMapControl.calls();
        // Heartbeats are writes by design (one RegisterInstance per --heartbeat-interval): counted apart, from the workers.
        const heartbeats = await Promise.all(
          started.map(async (w) => metricValue(await metrics(w), 'mcs_cloudmap_heartbeats_total')),
        );
        const versionsAfter = await Promise.all(which.map((c) => importVersions(clients[c]!)));
        const readsOf = (c: TestCluster) => {
          const [b, a] = [callsBefore.byAccessKey[accessKey(c)] ?? {}, callsAfter.byAccessKey[accessKey(c)] ?? {}];
          return Object.fromEntries(
            Object.entries(a)
              .filter(([api, n]) => !WRITE_APIS.has(api) && n > (b[api] ?? 0))
              .map(([api, n]) => [api, n - (b[api] ?? 0)]),
          );
        };
        return {
          clusters,
          heartbeats,
          ready,
          drained,
          cold,
          nodeFlags,
          reads: clusters.map(readsOf),
          peakRss: which.map((c) => peakSinceStart[c]!),
          peakAccount: which.map((c) => peakAccount[c]),
          cpuToReady,
          testbedCpu: Object.fromEntries(
            Object.entries(testbedAfter).map(([kind, s]) => [kind, s - (testbedBefore[kind] ?? 0)]),
          ),
          writes: clusters.map(
            (c) => writesIn(callsAfter.byAccessKey[accessKey(c)]) - writesIn(callsBefore.byAccessKey[accessKey(c)]),
          ),
          rewritten: versionsBefore.map(
            (b, i) =>
              [...b].filter(([key, rv]) => versionsAfter[i]!.get(key) !== rv).length +
              [...versionsAfter[i]!.keys()].filter((key) => !b.has(key)).length,
          ),
          objects: versionsBefore.map((v) => v.size),
        };
      };
      const every = cs.clusters.map((_, c) => c);
      const flagSets = [
        '',
        ...o.restartNodeFlags
          .split(';')
          .map((f) => f.trim())
          .filter((f) => f !== ''),
      ];
      const restarts: Restart[] = [];
      for (let r = 1; r <= o.restartRounds; r++) {
        for (const [f, flags] of flagSets.entries()) {
          const round = `${r > 1 ? `-${r}` : ''}${f > 0 ? `-flags${f}` : ''}`;
          restarts.push(
            await restart(`restart${round}`, every, false, flags),
            await restart(`restart-cls1${round}`, [0], false, flags),
          );
        }
      }
      if (o.coldRestart)
        restarts.push(
          await restart(
            'restart-cold',
            cs.clusters.map((_, c) => c),
            true,
          ),
          await restart('restart-cls1-cold', [0], true),
        );

      const writes = unavoidableWrites(ranges, o.services, namespaces, o.endpoints);
      const bound = quotaLowerBoundSeconds(writes, CLOUD_MAP_QUOTAS);
      const syncWrites = Object.entries(writes)
        .map(([api]) => `${api} ${Object.values(syncCalls.byApi[api] ?? {}).reduce((a, b) => a + b, 0)}`)
        .join(', ');
      const ids = cs.clusters.map((c) => c.id);
      say('');
      say(
        `bench:sync — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ` +
          `load average ${loadBefore.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at end; build ${o.dist}; emulator realistic (1 s operations, documented quotas); ` +
          `${o.services} services × ${o.endpoints} endpoints in ${namespaces} namespaces; ${layout}; --clusters=${CLUSTERS}` +
          `${o.crossRegion ? `; cls1 and cls2 in ${cs.region}, cls3 in ${OTHER_REGION} (cross-Region)` : ''}`,
      );
      say('');
      say('| measure | result | goal |');
      say('| --- | --- | --- |');
      say(
        `| workers start → all ${o.services} imports present in ${CLUSTERS} clusters | ${seconds(initialSync)}: ${(initialSync / 1000 / bound).toFixed(2)}× the quotas' lower bound of ${bound.toFixed(0)} s ` +
          `(${Object.entries(writes)
            .map(([api, n]) => `${n} ${api}`)
            .join(', ')}); calls made during it: ${syncWrites} | ≤ 1.3× |`,
      );
      say(
        `| the sync's CPU: each worker (${ids.join(', ')}) / the testbed's processes${o.nodeFlags.trim() === '' ? '' : `; the workers under \`${o.nodeFlags.trim()}\``} | ` +
          `${syncCpu.workers.map((s) => `${s.toFixed(0)} s`).join(', ')} / ${Object.entries(syncCpu.testbed)
            .map(([kind, s]) => `${kind} ${s.toFixed(0)} s`)
            .join(
              ', ',
            )} (${cpus().length} cores: ${((cpus().length * initialSync) / 1000).toFixed(0)} CPU-seconds in the sync) | |`,
      );
      say(
        `| export-to-import latency, new service cls1 → cls3 (n=${o.samples}) | ${summary(exportLatency)} | p99 ≤ 2 s |`,
      );
      say(`| endpoint-change latency cls1 → cls3 (n=${o.samples}) | ${summary(changeLatency)} | p99 ≤ 2 s |`);
      cs.clusters.forEach((cluster, c) => {
        say(
          `| idle Cloud Map calls/min at the emulator, ${cluster.id} (${idle.minutes.toFixed(1)} min${idle.leaderStarts[c]! > 0 ? `, started leading again in it after ${o.idleRetries + 1} windows` : ''}) | ` +
            `${idle.total[c]!.toFixed(1)} (${idle.byApi[c]!.map(([api, n]) => `${api} ${n.toFixed(1)}`).join(', ')}) | ≤ 150 |`,
        );
      });
      say(
        `| worker RSS (compiled build), peak of any / at end ${ids.join(', ')} | ${mib(peakRss)} MiB (${peakWhere}) / ${endRss.map(mib).join(', ')} MiB (JS heap used ${idle.heapUsed.map(mib).join(', ')} MiB) | ≤ 200 MiB at 5,000 |`,
      );
      say(
        `| worker RSS, peak of any in each step before the restarts | ${['initial sync', 'latency samples', 'idle'].map((step) => `${step} ${mib(peakInStep.get(step) ?? 0)} MiB`).join(', ')} | ≤ 200 MiB at 5,000 |`,
      );
      say(
        `| where the RSS goes at end (MiB; ${ids.join(', ')}; file pages are mostly the node binary) | ` +
          `${endResident.map(describeMemory).join(' — ')} | |`,
      );
      for (const r of restarts) {
        const ids = r.clusters.map((c) => c.id).join(', ');
        const what =
          `${r.clusters.length === cs.clusters.length ? 'every worker at once' : `${ids} alone`}${r.cold ? ' (cold: --warm-start=false)' : ''}` +
          `${flagSets.length > 1 ? ` under ${r.nodeFlags === '' && o.nodeFlags.trim() === '' ? "the Deployment's flags" : `\`${r.nodeFlags === '' ? o.nodeFlags.trim() : r.nodeFlags}\``}` : ''}`;
        const time = (at: number | undefined) =>
          at === undefined ? `not within ${seconds(o.restartTimeout)}` : seconds(at);
        say(
          `| restart in sync, ${what}: Cloud Map writes at the emulator (${ids}) in ${seconds(o.restartWindow)}, less the workers' heartbeats | ` +
            `${r.writes.map((n, i) => `${n - r.heartbeats[i]!} (${n} − ${r.heartbeats[i]} heartbeats)`).join(', ')} | 0 |`,
        );
        say(
          `| restart in sync, ${what}: imports rewritten (ServiceImports + EndpointSlices whose resourceVersion changed, ${ids}) | ${r.rewritten.join(', ')} of ${r.objects.join(', ')} | 0 |`,
        );
        say(
          `| restart in sync, ${what}: start → ready (Cloud Map read) / → work queues drained (${ids}) | ${r.ready.map(time).join(', ')} / ${r.drained.map(time).join(', ')} | ready ≤ 10 s |`,
        );
        const cpu = (s: number) => `${s.toFixed(1)} s`;
        say(
          `| restart in sync, ${what}: CPU until ready, each worker (${ids}) / the testbed's processes until the last was ready | ` +
            `${r.cpuToReady.map((s) => (s === undefined ? 'not ready' : cpu(s))).join(', ')} / ${Object.entries(
              r.testbedCpu,
            )
              .map(([kind, s]) => `${kind} ${cpu(s)}`)
              .join(', ')} (${cpus().length} cores) | |`,
        );
        say(
          `| restart in sync, ${what}: peak RSS from start to the end of the window (${ids}) | ${r.peakRss.map(mib).join(', ')} MiB | ≤ 200 MiB at 5,000 |`,
        );
        say(
          `| restart in sync, ${what}: where the peak RSS went, at its sample (MiB; ${ids}) | ${r.peakAccount.map(describePeak).join(' — ')} | |`,
        );
        say(
          `| restart in sync, ${what}: Cloud Map reads at the emulator in ${seconds(o.restartWindow)} (${ids}) | ${r.reads
            .map((byApi) =>
              Object.entries(byApi)
                .sort()
                .map(([api, n]) => `${api} ${n}`)
                .join(', '),
            )
            .join(' — ')} | |`,
        );
      }
      say('');
      for (const note of idleNotes) say(`Idle ${note}.`);
      const warm = restarts.filter((r) => !r.cold && r.nodeFlags === '');
      const saved = writeResult(
        resultOfThisRun({
          ...syncResult({
            services: o.services,
            exportingClusters: o.exportingClusters,
            crossRegion: o.crossRegion,
            settings,
            clusters: ids,
            initialSyncMs: initialSync,
            boundSeconds: bound,
            exportLatency: latency(exportLatency),
            changeLatency: latency(changeLatency),
            idlePerMinute: idle.total,
            peakRssMiB: Number(mib(peakRss)),
            endRssMiB: endRss.map((b) => Number(mib(b))),
            restartTimeoutMs: o.restartTimeout,
            restarts: warm.map((r) => ({
              all: r.clusters.length === cs.clusters.length,
              readyMs: r.ready,
              writesLessHeartbeats: r.writes.reduce((n, w, i) => n + w - r.heartbeats[i]!, 0),
              rewritten: r.rewritten.reduce((a, b) => a + b, 0),
              objects: Math.max(...r.objects),
            })),
          }),
          load: `${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end`,
          note:
            [
              o.workerEnv === '' ? '' : `workers with ${o.workerEnv}`,
              o.nodeFlags.trim() === '' ? '' : `workers under \`${o.nodeFlags.trim()}\``,
              o.dist === 'dist' ? '' : `the build in ${o.dist}`,
            ]
              .filter((n) => n !== '')
              .join('; ') || undefined,
        }),
        o.results,
      );
      if (saved) say(`result written to ${saved}`);
      say(
        `total run ${((Date.now() - started) / 1000).toFixed(0)} s${o.keepLogs ? `; worker logs in ${join(cs.dir, 'bench')}` : ''}`,
      );
      failed = false;
    } finally {
      clearInterval(sampler);
    }
  } finally {
    await Promise.all(watches.map((w) => w.stop()));
    await sup.stopAll();
    await cs.stop({ keepLogs: failed || o.keepLogs });
  }
}

main().catch((err: unknown) => {
  // A bad flag needs its message (which says what to pass), not a stack.
  const text =
    err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`bench:sync failed: ${text}\n`);
  process.exit(1);
});
