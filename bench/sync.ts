// `npm run bench:sync [-- --services=1000 --idle-window=6m]`: the reconcile workers of a 2-cluster testbed ClusterSet
// and the Cloud Map emulator under 1,000 exported services × 3 endpoints over 10 namespaces (issue 4 item 8).
//   1. cls1 holds the Services (selector-less, with EndpointSlices written by the benchmark, so 3,000 endpoints cost
//      no pods) and their ServiceExports before the workers start; measured: worker start → every import present
//      (ServiceImport Ready with 3 endpoints) in both clusters;
//   2. export-to-import latency of a new service: ServiceExport created in cls1 → imported in cls2, one at a time;
//   3. endpoint-change latency: an endpoint of cls1 turning unready (or ready) → shown so in cls2, one at a time;
//   4. Cloud Map calls per minute per cluster while nothing changes, over --idle-window (the paced resync spends the same every minute);
//   5. worker RSS (peak over the run and at the end).
// --cross-region puts cls2 in another Region (eu-west-1; both workers read both Regions, --regions): cls1 registers in
// us-east-1 and cls2 imports from there through its second Region's watcher, so 2. and 3. are cross-Region latencies.
// Workers run as host processes with the production settings of kustomize/base's ConfigMap. Prints a Markdown table.
import { mkdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { configMapEnv, kustomizeBase } from '../hack/local/manifests.ts';
import { startWorkerProcess, type HostProcess } from '../hack/local/processes.ts';
import { startClusterSet, type TestCluster } from '../hack/testbed/index.ts';
import { freePorts } from '../hack/testbed/ports.ts';
import { Supervisor } from '../hack/testbed/supervisor.ts';
import { forEachLimited } from '../src/cloudmap/for-each-limited.ts';
import { clientLimits, CLOUD_MAP_QUOTAS, quotaLowerBoundSeconds } from '../src/cloudmap/quotas.ts';
import { workerOptionSpecs } from '../src/worker/options.ts';
import { boolOption, durationOption, formatHelp, intOption, parseOptions } from '../src/config/options.ts';
import { SYSTEM_NAMESPACE } from '../src/core/names.ts';
import { CONTENT_MERGE_PATCH, kubeClientFor } from '../src/kube/client.ts';
import { ENDPOINT_SLICES, resourcePath, SERVICE_EXPORTS } from '../src/kube/resources.ts';
import { createLogger } from '../src/observability/log.ts';
import { addresses as addressesOf, createExported, createServices, mib, name, ns, prepare, processMemory, serviceExportBody, sliceBody } from './load.ts';
import { ImportWatch } from './sync-imports.ts';
import { kubectlBinary } from '../hack/testbed/paths.ts';

const specs = {
  services: intOption('services', 'BENCH_SERVICES', 1000, 'Exported services created before the workers start.', 1),
  namespaces: intOption('namespaces', 'BENCH_NAMESPACES', 10, 'Namespaces the services are spread over.', 1),
  endpoints: intOption('endpoints', 'BENCH_ENDPOINTS', 3, 'Endpoints per service.', 1, 250),
  samples: intOption('samples', 'BENCH_SAMPLES', 50, 'Samples of each latency (new service, endpoint change).', 1),
  idleWindow: durationOption('idle-window', 'BENCH_IDLE_WINDOW', 360_000, 'How long Cloud Map calls are counted with nothing changing (the paced resync spends the same every minute; a pass lists services once).'),
  crossRegion: boolOption('cross-region', 'BENCH_CROSS_REGION', false, 'cls2 in eu-west-1, both workers reading both Regions: the latencies are cross-Region.'),
  keepLogs: boolOption('keep-logs', 'BENCH_KEEP_LOGS', false, 'Keep the ClusterSet\'s directory (component and worker logs) after a successful run.'),
  timeout: durationOption('timeout', 'BENCH_TIMEOUT', 900_000, 'Longest wait for the initial sync.'),
};

/** cls2's Region with --cross-region. */
const OTHER_REGION = 'eu-west-1';
const log = createLogger('bench-sync', process.env.LOG_LEVEL ?? 'warn');
const say = (line: string) => process.stdout.write(`${line}\n`);
/**
 * A random pause before each sample. Samples run one after another, each starting right after cls2 saw the previous
 * one, i.e. just after cls2's marker poll: without it every sample would start at the same phase of the 1 s poll and
 * measure the worst case only, instead of changes arriving at any time.
 */
function dephase(): Promise<void> {
  return sleep(100 + Math.random() * 1000);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summary(samples: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1)! };
}

async function cloudMapCalls(worker: HostProcess): Promise<Record<string, number>> {
  const text = await (await fetch(worker.metricsUrl)).text();
  const calls: Record<string, number> = {};
  for (const m of text.matchAll(/^mcs_cloudmap_cloudmap_calls_total\{api="([^"]+)",outcome="[^"]+"\} (\d+)$/gm)) calls[m[1]!] = (calls[m[1]!] ?? 0) + Number(m[2]);
  return calls;
}

async function queuesIdle(worker: HostProcess): Promise<boolean> {
  const text = await (await fetch(worker.metricsUrl)).text();
  return [...text.matchAll(/^mcs_cloudmap_workqueue_depth\{[^}]*\} (\d+)$/gm)].every((m) => m[1] === '0');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    say(formatHelp('npm run bench:sync -- [flags]: reconcile worker sync benchmark on the testbed', specs));
    return;
  }
  const o = parseOptions(specs, argv);
  const started = Date.now();
  const cs = await startClusterSet({ log: (line) => log.info(line) });
  mkdirSync(join(cs.dir, 'bench'));
  const sup = new Supervisor(join(cs.dir, 'bench'));
  let failed = true;
  try {
    const [cls1, cls2] = cs.clusters as [TestCluster, TestCluster];
    say(`ClusterSet up in ${(cs.startupMs / 1000).toFixed(1)} s; creating ${o.services} Services × ${o.endpoints} endpoints with ServiceExports in ${o.namespaces} namespaces of cls1`);
    await prepare(cs, o.namespaces);
    const client1 = kubeClientFor(cls1.kubeConfig());
    const addresses = (i: number) => addressesOf(i, o.endpoints);
    const t = performance.now();
    await createServices(client1, 0, o.services, o.namespaces, o.endpoints, true);
    say(`objects created in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    const watches = [new ImportWatch(cls1.kubeConfig(), log), new ImportWatch(cls2.kubeConfig(), log)];
    await Promise.all(watches.map((w) => w.start()));
    const [watch2] = [watches[1]!];

    // 1. Worker start → every import present in both clusters.
    const configEnv: Record<string, string> = { ...configMapEnv(kustomizeBase()), ...(o.crossRegion ? { MCS_REGIONS: `${cs.region},${OTHER_REGION}` } : {}) };
    const workerStart = performance.now();
    const workers = await Promise.all(cs.clusters.map(async (cluster) => {
      const [metricsPort, healthPort] = await freePorts(2) as [number, number];
      const logsDir = join(cs.dir, 'bench', cluster.id);
      mkdirSync(logsDir, { recursive: true });
      return startWorkerProcess(sup, {
        clusterId: cluster.id, configEnv, kubeconfig: cluster.kubeconfigPath, namespace: SYSTEM_NAMESPACE, metricsPort, healthPort, logsDir,
        cloudMapEndpoint: cs.cloudMapEndpoint, region: o.crossRegion && cluster.id !== cls1.id ? OTHER_REGION : cs.region,
      });
    }));
    let peakRss = 0;
    const sampler = setInterval(() => {
      for (const w of workers) peakRss = Math.max(peakRss, processMemory(w.proc.pid).rss);
    }, 1000);
    try {
      const allImported = () => watches.every((w) => Array.from({ length: o.services }, (_, i) => i).every((i) => w.imported(ns(i, o.namespaces), name(i), o.endpoints)));
      const deadline = performance.now() + o.timeout;
      while (!allImported()) {
        if (performance.now() > deadline) throw new Error(`not every import present after ${o.timeout} ms`);
        await sleep(200);
      }
      const initialSync = performance.now() - workerStart;
      say(`all ${o.services} imports present in both clusters ${(initialSync / 1000).toFixed(1)} s after the workers started`);

      // 2. New service: ServiceExport created in cls1 → imported in cls2.
      const exportLatency: number[] = [];
      for (let s = 0; s < o.samples; s++) {
        const i = o.services + s;
        const namespace = ns(i, o.namespaces);
        await createExported(client1, namespace, name(i), addresses(i), false);
        await dephase();
        const t0 = performance.now();
        await client1.request({ method: 'POST', path: resourcePath(SERVICE_EXPORTS, namespace), body: serviceExportBody(namespace, name(i)) });
        exportLatency.push(await watch2.when(() => watch2.imported(namespace, name(i), o.endpoints), 30_000, `import of ${namespace}/${name(i)}`) - t0);
      }

      // 3. Endpoint change: the first endpoint of an existing service turns unready (or ready again) in cls1.
      const changeLatency: number[] = [];
      for (let s = 0; s < o.samples; s++) {
        const i = (s * 37) % o.services;
        const namespace = ns(i, o.namespaces);
        const first = addresses(i)[0]!;
        const ready = !(watch2.endpoints(namespace, name(i)).get(first) ?? true);
        await dephase();
        const t0 = performance.now();
        await client1.request({
          method: 'PATCH', path: resourcePath(ENDPOINT_SLICES, namespace, `${name(i)}-bench`), contentType: CONTENT_MERGE_PATCH,
          body: { endpoints: sliceBody(namespace, name(i), addresses(i), ready ? new Set() : new Set([first])).endpoints },
        });
        changeLatency.push(await watch2.when(() => watch2.endpoints(namespace, name(i)).get(first) === ready, 30_000, `readiness of ${first}`) - t0);
      }

      // 4. Nothing changing: Cloud Map calls per minute per cluster.
      await sleep(2000);
      while (!(await Promise.all(workers.map(queuesIdle))).every(Boolean)) await sleep(500);
      const before = await Promise.all(workers.map(cloudMapCalls));
      const idleStart = performance.now();
      say(`counting Cloud Map calls for ${o.idleWindow / 1000} s with nothing changing`);
      await sleep(o.idleWindow);
      const minutes = (performance.now() - idleStart) / 60_000;
      const after = await Promise.all(workers.map(cloudMapCalls));
      const idle = cs.clusters.map((cluster, c) => {
        const byApi: Record<string, number> = {};
        for (const [api, n] of Object.entries(after[c]!)) if (n > (before[c]![api] ?? 0)) byApi[api] = (n - (before[c]![api] ?? 0)) / minutes;
        const total = Object.values(byApi).reduce((a, b) => a + b, 0);
        return { cluster: cluster.id, total, byApi };
      });
      const finalRss = workers.map((w) => processMemory(w.proc.pid).rss);
      const heapUsed = await Promise.all(workers.map(async (w) => {
        const m = /^mcs_cloudmap_nodejs_heap_size_used_bytes (\d+)/m.exec(await (await fetch(w.metricsUrl)).text());
        return m ? Number(m[1]) : 0;
      }));

      const e = summary(exportLatency);
      const c = summary(changeLatency);
      const baseline = (o.services + o.samples) / 5 * 60;
      const ms = (n: number) => `${Math.round(n)} ms`;
      say('');
      say(`bench:sync — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
        `${o.services} services × ${o.endpoints} endpoints in ${o.namespaces} namespaces, exported from cls1, imported by cls1 and cls2` +
        `${o.crossRegion ? ` (cls1 in ${cs.region}, cls2 in ${OTHER_REGION}: cross-Region)` : ''}`);
      say('');
      say('| measure | result | goal |');
      say('| --- | --- | --- |');
      // The writes cls1 cannot avoid (the ClusterSet's marker namespace and service included); reads are cheaper.
      const writes = { CreateHttpNamespace: o.namespaces + 1, CreateService: o.services + 1, RegisterInstance: o.services * o.endpoints };
      const clusters = Number(configEnv.MCS_CLUSTERS ?? workerOptionSpecs.clusters.default);
      const bound = quotaLowerBoundSeconds(writes, CLOUD_MAP_QUOTAS);
      const shareBound = quotaLowerBoundSeconds(writes, clientLimits({ clusters }));
      say(`| worker start → all ${o.services} imports present (both clusters) | ${(initialSync / 1000).toFixed(1)} s (${(initialSync / 1000 / bound).toFixed(2)}× the quotas' lower bound ${bound.toFixed(0)} s; ` +
        `${shareBound.toFixed(0)} s at cls1's share with --clusters=${clusters}) | ≤ 1.5× the lower bound |`);
      say(`| export-to-import latency, new service (n=${o.samples}) | p50 ${ms(e.p50)}, p99 ${ms(e.p99)} (max ${ms(e.max)}) | p99 ≤ 2 s |`);
      say(`| endpoint-change latency (n=${o.samples}) | p50 ${ms(c.p50)}, p99 ${ms(c.p99)} (max ${ms(c.max)}) | p99 ≤ 2 s |`);
      for (const x of idle) {
        const apis = Object.entries(x.byApi).map(([api, n]) => `${api} ${n.toFixed(1)}`).join(', ');
        say(`| idle Cloud Map calls/min, ${x.cluster} (${(minutes).toFixed(1)} min window) | ${x.total.toFixed(1)} (${apis}) | ≤ ${Math.min(150, baseline / 10).toFixed(0)} (150, and 1/10 of ${baseline.toFixed(0)}) |`);
      }
      say(`| worker RSS, peak (either worker) / end (cls1, cls2) | ${mib(peakRss)} MiB / ${finalRss.map(mib).join(', ')} MiB (JS heap in use at end ${heapUsed.map(mib).join(', ')} MiB) | < 256 MiB |`);
      say('');
      say(`total run ${((Date.now() - started) / 1000).toFixed(0)} s${o.keepLogs ? `; worker logs in ${join(cs.dir, 'bench')}` : ''}`);
      failed = false;
    } finally {
      clearInterval(sampler);
      await Promise.all(watches.map((w) => w.stop()));
    }
  } finally {
    await sup.stopAll();
    await cs.stop({ keepLogs: failed || o.keepLogs });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:sync failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
