// `npm run bench:webhook [-- --soak=5m]`: latency and throughput of /validate, /mutate and /convert over HTTPS on
// loopback, against a server process whose caches hold 10,000 Services, ServiceExports and ServiceImports.
//   1. closed loop at concurrency 1, 16 and 64 (a bounded number of requests each): p50, p99, requests/s;
//   2. open loop at a fixed rate (default 1,000 requests/s, the rate of the goal in docs/benchmarks.md): p50, p99,
//      achieved rate;
//   3. RSS stability: mixed traffic at the fixed rate for --soak (short by default; 5m for the recorded figure),
//      sampling the server's RSS.
// Prints Markdown tables, and writes bench/results/webhook-<N>-objects.json, the row of docs/benchmarks.md
// (`npm run docs:results`).

import { cpus, totalmem } from 'node:os';
import { deploymentNodeFlags, kustomizeBase } from '../hack/local/manifests.ts';
import { resultOfThisRun, resultsOption, writeResult, type Figure } from '../hack/results/result-file.ts';
import { durationOption, formatHelp, intOption, parseOptions, stringOption } from '../src/config/options.ts';
import {
  allBodies,
  closedLoop,
  fmt,
  mib,
  mixed,
  openLoop,
  ROUTES,
  startServerProcess,
  warmClient,
} from '../test/support/webhook-client.ts';
import { SERVICES } from '../test/support/webhook-server.ts';

const specs = {
  requests: intOption(
    'requests',
    'BENCH_REQUESTS',
    4_000,
    'Requests per route and concurrency in the closed-loop runs.',
    100,
  ),
  rate: intOption('rate', 'BENCH_RATE', 1_000, 'Requests per second of the open-loop runs and the soak.', 1),
  fixedDuration: durationOption('fixed-duration', 'BENCH_FIXED_DURATION', 10_000, 'Length of each open-loop run.'),
  soak: durationOption('soak', 'BENCH_SOAK', 20_000, 'Length of the RSS-stability run (5m for the recorded figure).'),
  nodeArgs: stringOption(
    'node-args',
    'BENCH_NODE_ARGS',
    '',
    "Node.js flags of the server process, space-separated, instead of those of the webhook Deployment's command in kustomize/base.",
  ),
  results: resultsOption,
};

/** The p99 goal at the fixed rate and in the soak (docs/benchmarks.md). */
const P99_GOAL_MS = 5;

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(formatHelp('npm run bench:webhook: webhook latency, throughput and RSS stability.', specs));
    return;
  }
  const opts = parseOptions(specs, process.argv.slice(2));
  const given = opts.nodeArgs.split(' ').filter((a) => a !== '');
  const nodeFlags = given.length > 0 ? given : deploymentNodeFlags(kustomizeBase(), 'mcs-cloudmap-webhook');
  const server = await startServerProcess(undefined, nodeFlags);
  const { port, ca, rss } = server;
  const pools = allBodies();

  console.log(
    `# webhook benchmark — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  );
  console.log(
    `server: separate process (one event loop), caches with ${SERVICES} Services, ServiceExports and ServiceImports; HTTPS keep-alive on loopback; Node.js flags ${nodeFlags.join(' ') || 'none'}`,
  );
  const filled = await rss();
  console.log(`server RSS after filling the caches: ${mib(filled)} MiB\n`);
  const figures: Figure[] = [];

  // Warm-up: JIT.
  const warm = await warmClient(port, ca, 16, pools.get('/mutate')!);
  for (const route of ROUTES) await closedLoop(warm, route, pools.get(route)!, 16, 2_000);
  warm.destroy();

  console.log('| route | concurrency | requests | p50 ms | p99 ms | requests/s |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  const at16 = new Map<string, number>();
  for (const route of ROUTES) {
    for (const concurrency of [1, 16, 64]) {
      const c = await warmClient(port, ca, concurrency, pools.get('/mutate')!);
      const r = await closedLoop(c, route, pools.get(route)!, concurrency, opts.requests);
      c.destroy();
      console.log(`| ${route} | ${concurrency} | ${r.n} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.rps)} |`);
      if (concurrency === 16) at16.set(route, Math.round(r.rps));
    }
  }

  console.log(`\n| route | offered rate | duration s | p50 ms | p99 ms | achieved requests/s |`);
  console.log('| --- | --- | --- | --- | --- | --- |');
  const open = await warmClient(port, ca, 64, pools.get('/mutate')!);
  for (const route of ROUTES) {
    const pool = pools.get(route)!;
    const r = await openLoop(opts.rate, opts.fixedDuration, (i) => open.send(route, pool[i % pool.length]!));
    console.log(
      `| ${route} | ${opts.rate}/s | ${opts.fixedDuration / 1000} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.rps)} |`,
    );
    figures.push({
      name: `p99 at ${opts.rate.toLocaleString('en-US')}/s, ${route}`,
      value: round(r.p99),
      unit: 'ms',
      atMost: P99_GOAL_MS,
      detail: `p50 ${fmt(r.p50)} ms`,
    });
  }

  // Soak: all three routes in turn at the fixed rate; RSS sampled every tenth of the run (at least every 5 s).
  const samples: Array<[number, number]> = [];
  const sampleEvery = Math.max(5_000, opts.soak / 10);
  const soakStart = performance.now();
  let lastSample = -Infinity;
  let sampling = false;
  const soak = await openLoop(opts.rate, opts.soak, mixed(open, pools), () => {
    const t = performance.now() - soakStart;
    if (t - lastSample < sampleEvery || sampling) return;
    lastSample = t;
    sampling = true;
    void rss().then((b) => {
      samples.push([t / 1000, b]);
      sampling = false;
    });
  });
  open.destroy();
  samples.push([(performance.now() - soakStart) / 1000, await rss()]);
  const values = samples.map(([, b]) => b);
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const slope = (last[1] - first[1]) / 2 ** 20 / ((last[0] - first[0]) / 60);
  console.log(
    `\nsoak: ${fmt(soak.n)} requests over ${(opts.soak / 1000).toFixed(0)} s at ${opts.rate}/s (mixed), p50 ${fmt(soak.p50)} ms, p99 ${fmt(soak.p99)} ms, ${soak.errors.length} failed${soak.errors.length ? ` (first: ${soak.errors[0]})` : ''}`,
  );
  console.log(`server RSS MiB: ${samples.map(([t, b]) => `${t.toFixed(0)}s=${mib(b)}`).join(' ')}`);
  console.log(
    `server RSS first ${mib(first[1])} MiB, last ${mib(last[1])} MiB, max ${mib(Math.max(...values))} MiB, trend ${slope.toFixed(2)} MiB/min`,
  );

  figures.push(
    {
      name: `p99 of the ${(opts.soak / 1000).toFixed(0)} s mixed soak at ${opts.rate.toLocaleString('en-US')}/s`,
      value: round(soak.p99),
      unit: 'ms',
      atMost: P99_GOAL_MS,
      detail: `p50 ${fmt(soak.p50)} ms`,
    },
    {
      name: 'soak requests failed',
      value: soak.errors.length,
      unit: '',
      atMost: 0,
      detail: `of ${soak.n.toLocaleString('en-US')}`,
    },
    {
      name: `requests/s at concurrency 16, ${ROUTES[0]!}`,
      value: at16.get(ROUTES[0]!)!,
      unit: '',
      detail: [...at16]
        .slice(1)
        .map(([route, n]) => `${route} ${n.toLocaleString('en-US')}`)
        .join(', '),
    },
    { name: 'server RSS after filling the caches', value: Number(mib(filled)), unit: 'MiB' },
    {
      name: 'server RSS while serving, highest',
      value: Number(mib(Math.max(...values))),
      unit: 'MiB',
      detail: `trend ${slope.toFixed(2)} MiB/min`,
    },
  );
  const saved = writeResult(
    resultOfThisRun({
      benchmark: 'webhook',
      scenario: `${SERVICES}-objects`,
      size: `${SERVICES.toLocaleString('en-US')} Services, ServiceExports and ServiceImports cached`,
      figures,
      note: given.length > 0 ? `the server under \`${given.join(' ')}\`` : undefined,
    }),
    opts.results,
  );
  if (saved) console.log(`\nresult written to ${saved}`);
  await server.stop();
}

/** Two decimals: what the tables show. */
function round(n: number): number {
  return Math.round(n * 100) / 100;
}

await main();
