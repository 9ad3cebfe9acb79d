// `npm run bench:traffic [-- --scenario=rollout-prestop] [--durations-percent=30]`: failed requests at the data path
// while things change. A 2-cluster testbed ClusterSet with a real node per cluster runs the tutorial's nginx in both
// clusters; cls1 exports it. Continuous clients in pods (curl, on new connections and over kept-alive ones) ask cls1's
// nginx across clusters from cls2 by clusterset name and by ClusterSet IP, and from cls1 itself by cluster.local name
// (the in-cluster baseline), while each scenario (bench/traffic/scenarios.ts) changes something: a rollout, a drain,
// a worker killed, Cloud Map unreachable, ... Every failed request is counted with its time, its cause and, where the
// client knows it, the pod that failed. Prints a table and the failures, and writes bench/results/traffic-<scenario>.json
// per scenario: the one table of docs/benchmarks.md "Requests while things change". A benchmark: nothing asserts.
import { resultOfThisRun, resultsOption, writeResult, loadNow, type Figure } from '../hack/results/result-file.ts';
import { LABEL_SERVICE_NAME } from '../src/core/names.ts';
import {
  boolOption,
  durationOption,
  formatHelp,
  intOption,
  parseOptions,
  stringOption,
} from '../src/config/options.ts';
import { eventually } from '../test/support/eventually.ts';
import { createNamespaces } from '../test/support/workloads.ts';
import {
  describeSide,
  failureLines,
  scenarioFigures,
  summarizeSide,
  type Stream,
} from '../test/support/traffic-result.ts';
import { startStreams, type ClientRates, type StreamSpec } from './traffic/clients.ts';
import { importConverged, readyPods, SCENARIOS, type Scenario, type ScenarioContext } from './traffic/scenarios.ts';
import { apply, kubectl } from './traffic/kubectl.ts';
import { startTrafficTestbed } from './traffic/testbed.ts';
import { publishLags, startTimeline, withdrawalLags } from './traffic/timeline.ts';
import {
  CLIENT_POD,
  disruptionBudget,
  nginx,
  nginxExport,
  NS,
  PAIR_SERVICE,
  SERVICE,
  services,
  spare,
} from './traffic/workload.ts';

const specs = {
  scenario: stringOption(
    'scenario',
    'TRAFFIC_SCENARIO',
    'all',
    `Scenarios to run, separated by commas: ${SCENARIOS.map((s) => s.name).join(', ')}; or all.`,
  ),
  durationsPercent: intOption(
    'durations-percent',
    'TRAFFIC_DURATIONS_PERCENT',
    100,
    'Scales every outage, wait and tail of the scenarios (30: a quick run while iterating).',
    1,
    1000,
  ),
  replicas: intOption(
    'replicas',
    'TRAFFIC_REPLICAS',
    3,
    'Pods of the exporting Deployment (the tutorial has 3).',
    1,
    20,
  ),
  intervalMs: intOption(
    'interval-ms',
    'TRAFFIC_INTERVAL_MS',
    50,
    'Pause between requests of a client on new connections.',
    1,
    10_000,
  ),
  perSecond: intOption(
    'keep-alive-rate',
    'TRAFFIC_KEEP_ALIVE_RATE',
    20,
    'Requests a second of a client over kept-alive connections.',
    1,
    1000,
  ),
  timeoutS: intOption(
    'request-timeout',
    'TRAFFIC_REQUEST_TIMEOUT',
    2,
    'Seconds after which a request counts as failed.',
    1,
    60,
  ),
  lead: durationOption('lead', 'TRAFFIC_LEAD', 5_000, 'Clients run this long before the change.'),
  tail: durationOption('tail', 'TRAFFIC_TAIL', 15_000, 'Clients run this long after the change is over.'),
  heartbeat: durationOption(
    'heartbeat-interval',
    'TRAFFIC_HEARTBEAT_INTERVAL',
    10_000,
    "The workers' --heartbeat-interval.",
  ),
  ttl: durationOption(
    'dead-cluster-ttl',
    'TRAFFIC_DEAD_CLUSTER_TTL',
    60_000,
    "The workers' --dead-cluster-ttl (the default 3 min makes the past-TTL scenarios long).",
  ),
  keepLogs: boolOption(
    'keep-logs',
    'TRAFFIC_KEEP_LOGS',
    false,
    "Keep the ClusterSet's directory (every component's log) after the run; a failed run always keeps it.",
  ),
  results: resultsOption,
};

const WITHDRAWAL_FIGURE = "terminating pod → gone from cls2's slices, slowest";
const PUBLISH_FIGURE = "ready pod → in cls2's slices, slowest";

const started = Date.now();
const log = (line: string) =>
  console.error(`[traffic ${((Date.now() - started) / 1000).toFixed(0).padStart(5)}s] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function streamSpecs(ctx: ScenarioContext, scenario: Scenario, clusterSetIp: string): StreamSpec[] {
  const modes = ['new-connection', 'keep-alive'] as const;
  const cross = [
    ['clusterset name', `http://${SERVICE}.${NS}.svc.clusterset.local/`],
    ['ClusterSet IP', `http://${clusterSetIp}/`],
  ] as const;
  return [
    ...cross.flatMap(([via, url]) =>
      modes.map((mode): StreamSpec => ({ side: 'cross-cluster', cluster: ctx.cls2, via, url, mode })),
    ),
    ...(scenario.baseline === undefined
      ? []
      : modes.map(
          (mode): StreamSpec => ({
            side: 'in-cluster',
            cluster: ctx.cls1,
            via: `${scenario.baseline} cluster.local name`,
            url: `http://${scenario.baseline}.${NS}.svc.cluster.local/`,
            mode,
          }),
        )),
  ];
}

/** The slowest withdrawal of a terminating pod from cls2's slices and the slowest arrival of a new one, when there were any. */
function lagFigures(withdrawn: number[], published: number[]): Figure[] {
  const figure = (name: string, lags: number[]): Figure[] =>
    lags.length === 0
      ? []
      : [
          {
            name,
            value: Math.max(...lags),
            unit: 's',
            detail: `each: ${lags.map((l) => l.toFixed(1)).join(', ')} s`,
          },
        ];
  return [...figure(WITHDRAWAL_FIGURE, withdrawn), ...figure(PUBLISH_FIGURE, published)];
}

/** The exporting Deployment as the scenario wants it, and cls2's export and the spare pods when it needs them. */
async function prepare(ctx: ScenarioContext, scenario: Scenario): Promise<void> {
  const settings = { replicas: ctx.replicas, preStopS: scenario.preStopS };
  await apply(ctx.cls1, [nginx(settings)]);
  await kubectl(ctx.cls1, ['rollout', 'status', '-n', NS, 'deployment/nginx', '--timeout=300s']);
  await readyPods(ctx.cls1, 'nginx', ctx.replicas);
  if (scenario.baseline === PAIR_SERVICE) {
    await apply(ctx.cls1, [spare(settings)]);
    await readyPods(ctx.cls1, 'spare', ctx.replicas);
  }
  if (scenario.bothExport) await apply(ctx.cls2, [nginxExport()]);
  await importConverged(ctx, scenario.bothExport === true);
}

async function cleanUp(ctx: ScenarioContext, scenario: Scenario): Promise<void> {
  await scenario.restore?.(ctx);
  if (scenario.baseline === PAIR_SERVICE)
    await kubectl(ctx.cls1, ['delete', 'deployment', '-n', NS, 'spare', '--ignore-not-found']);
  if (scenario.bothExport)
    await kubectl(ctx.cls2, ['delete', 'serviceexport', '-n', NS, SERVICE, '--ignore-not-found', '--timeout=120s']);
  await importConverged(ctx, false);
}

/** Runs one scenario, prints its failures and writes its result file; returns its row of the final table. */
async function runScenario(
  ctx: ScenarioContext,
  scenario: Scenario,
  clusterSetIp: string,
  rates: ClientRates,
  opts: { lead: number; tail: number; results: string },
): Promise<string> {
  log(`${scenario.name}: preparing`);
  await prepare(ctx, scenario);
  const loadBefore = loadNow();
  const streams = startStreams(streamSpecs(ctx, scenario, clusterSetIp), rates);
  const timeline = startTimeline(ctx.cls1, ctx.cls2);
  await sleep(opts.lead * ctx.scale);
  const actionAt = Date.now();
  log(`${scenario.name}: change begins`);
  let records: Stream[];
  try {
    await scenario.act(ctx);
    log(`${scenario.name}: change over after ${((Date.now() - actionAt) / 1000).toFixed(1)} s`);
    await sleep(opts.tail * ctx.scale);
  } finally {
    records = await streams.stop();
  }
  const pods = await timeline.stop();
  const loadAfter = loadNow();
  const figures = [...scenarioFigures(records, actionAt), ...lagFigures(withdrawalLags(pods), publishLags(pods))];
  console.log(`\n## ${scenario.name}: ${scenario.size(ctx)} (load ${loadBefore} → ${loadAfter})\n`);
  for (const f of figures.filter((x) => x.unit === 's')) console.log(`${f.name}: ${f.value} s (${f.detail})`);
  for (const side of ['cross-cluster', 'in-cluster'] as const) {
    const s = summarizeSide(records, side, actionAt);
    if (s === undefined) {
      console.log(`${side}: no equivalent`);
      continue;
    }
    console.log(`${side}: **${s.failed} failed** ${describeSide(s)}`);
    for (const line of failureLines(s)) console.log(`  ${line}`);
  }
  writeResult(
    resultOfThisRun({
      benchmark: 'traffic',
      scenario: scenario.name,
      size: scenario.size(ctx),
      figures,
      load: `${loadBefore} before, ${loadAfter} after`,
      command: `npm run bench:traffic -- --scenario=${scenario.name}`,
      note: `clients: new connections every ${rates.intervalMs} ms and ${rates.perSecond} requests/s kept alive, each by clusterset name and ClusterSet IP from cls2 and by cluster.local name in cls1, ${rates.timeoutS} s timeout; times from the change's start; workers' dead-cluster TTL ${ctx.ttlMs / 1000} s`,
    }),
    opts.results,
  );
  log(`${scenario.name}: restoring`);
  await cleanUp(ctx, scenario);
  const cell = (side: 'cross-cluster' | 'in-cluster') => {
    const s = summarizeSide(records, side, actionAt);
    return s === undefined ? 'no equivalent' : `**${s.failed}** ${describeSide(s)}`;
  };
  return `| ${scenario.name} | ${cell('cross-cluster')} | ${cell('in-cluster')} | ${loadBefore} → ${loadAfter} |`;
}

async function main(): Promise<number> {
  if (process.argv.includes('--help')) {
    console.log(
      formatHelp('npm run bench:traffic: failed requests across clusters and in-cluster while things change.', specs),
    );
    return 0;
  }
  const opts = parseOptions(specs, process.argv.slice(2));
  const names = opts.scenario === 'all' ? SCENARIOS.map((s) => s.name) : opts.scenario.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !SCENARIOS.some((s) => s.name === n));
  if (unknown.length > 0)
    throw new Error(`--scenario: unknown ${unknown.join(', ')}; use ${SCENARIOS.map((s) => s.name).join(', ')} or all`);
  const scale = opts.durationsPercent / 100;
  const bed = await startTrafficTestbed(
    { MCS_HEARTBEAT_INTERVAL: `${opts.heartbeat}ms`, MCS_DEAD_CLUSTER_TTL: `${opts.ttl}ms` },
    log,
  );
  let failed = false;
  try {
    const [cls1, cls2] = bed.clusters as [(typeof bed.clusters)[0], (typeof bed.clusters)[0]];
    const ctx: ScenarioContext = { bed, cls1, cls2, replicas: opts.replicas, scale, ttlMs: opts.ttl, log };
    await createNamespaces(bed.clusters, NS);
    await apply(cls1, [
      nginx({ replicas: opts.replicas, preStopS: 0 }),
      ...services(true),
      disruptionBudget(),
      CLIENT_POD,
      nginxExport(),
    ]);
    await apply(cls2, [nginx({ replicas: opts.replicas, preStopS: 0 }), ...services(false), CLIENT_POD]);
    for (const c of bed.clusters) {
      await readyPods(c, 'nginx', opts.replicas);
      await kubectl(c, ['wait', '-n', NS, '--for=condition=Ready', 'pod/client', '--timeout=180s']);
    }
    let clusterSetIp = '';
    await eventually(
      'cls2 imports nginx-hello with a ClusterSet IP',
      async () => (clusterSetIp = (await cls2.serviceImport(NS, SERVICE))?.spec.ips?.[0] ?? '') !== '',
      120_000,
    );
    await importConverged(ctx, false);
    await eventually(
      'a cls2 pod is answered by clusterset name',
      async () =>
        (
          await kubectl(cls2, [
            'exec',
            '-n',
            NS,
            'client',
            '--',
            'curl',
            '-sS',
            '--max-time',
            '2',
            `http://${SERVICE}.${NS}.svc.clusterset.local/`,
          ]).catch(() => '')
        ).includes('Server name:'),
      60_000,
    );
    log(
      `ready: ClusterSet IP ${clusterSetIp}, derived slices ${(await cls2.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${SERVICE}`)).length}`,
    );
    const rates = { intervalMs: opts.intervalMs, perSecond: opts.perSecond, timeoutS: opts.timeoutS };
    const rows: string[] = [];
    for (const name of names)
      rows.push(await runScenario(ctx, SCENARIOS.find((s) => s.name === name)!, clusterSetIp, rates, opts));
    console.log('\n| scenario | failed across clusters | failed in-cluster | load |\n| --- | --- | --- | --- |');
    for (const row of rows) console.log(row);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    if (failed || opts.keepLogs) log(`logs kept in ${bed.cs.dir}`);
    await bed.stop({ keepLogs: failed || opts.keepLogs });
  }
  return 0;
}

process.exitCode = await main();
