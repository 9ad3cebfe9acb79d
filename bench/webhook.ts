// `npm run bench:webhook [-- --soak=5m]`: latency and throughput of /validate, /mutate and /convert over HTTPS on
// loopback, against a server process whose caches hold 10,000 Services, ServiceExports and ServiceImports.
//   1. closed loop at concurrency 1, 16 and 64 (a bounded number of requests each): p50, p99, requests/s;
//   2. open loop at a fixed rate (default 1,000 requests/s, the rate of the goal in docs/benchmarks.md): p50, p99,
//      achieved rate;
//   3. RSS stability: mixed traffic at the fixed rate for --soak (short by default; 5m for the recorded figure),
//      sampling the server's RSS.
// Prints a Markdown table to paste into docs/benchmarks.md.

import { cpus, totalmem } from 'node:os';
import { deploymentNodeFlags, kustomizeBase } from '../hack/local/manifests.ts';
import { durationOption, formatHelp, intOption, parseOptions, stringOption } from '../src/config/options.ts';
import { allBodies, closedLoop, fmt, mib, mixed, openLoop, ROUTES, startServerProcess, warmClient } from '../test/support/webhook-client.ts';
import { SERVICES } from '../test/support/webhook-server.ts';

const specs = {
  requests: intOption('requests', 'BENCH_REQUESTS', 4_000, 'Requests per route and concurrency in the closed-loop runs.', 100),
  rate: intOption('rate', 'BENCH_RATE', 1_000, 'Requests per second of the open-loop runs and the soak.', 1),
  fixedDuration: durationOption('fixed-duration', 'BENCH_FIXED_DURATION', 10_000, 'Length of each open-loop run.'),
  soak: durationOption('soak', 'BENCH_SOAK', 20_000, 'Length of the RSS-stability run (5m for the recorded figure).'),
  nodeArgs: stringOption('node-args', 'BENCH_NODE_ARGS', '', 'Node.js flags of the server process, space-separated, instead of those of the webhook Deployment\'s command in kustomize/base.'),
};

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

  console.log(`# webhook benchmark — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`);
  console.log(`server: separate process (one event loop), caches with ${SERVICES} Services, ServiceExports and ServiceImports; HTTPS keep-alive on loopback; Node.js flags ${nodeFlags.join(' ') || 'none'}`);
  console.log(`server RSS after filling the caches: ${mib(await rss())} MiB\n`);

  // Warm-up: JIT.
  const warm = await warmClient(port, ca, 16, pools.get('/mutate')!);
  for (const route of ROUTES) await closedLoop(warm, route, pools.get(route)!, 16, 2_000);
  warm.destroy();

  console.log('| route | concurrency | requests | p50 ms | p99 ms | requests/s |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const route of ROUTES) {
    for (const concurrency of [1, 16, 64]) {
      const c = await warmClient(port, ca, concurrency, pools.get('/mutate')!);
      const r = await closedLoop(c, route, pools.get(route)!, concurrency, opts.requests);
      c.destroy();
      console.log(`| ${route} | ${concurrency} | ${r.n} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.rps)} |`);
    }
  }

  console.log(`\n| route | offered rate | duration s | p50 ms | p99 ms | achieved requests/s |`);
  console.log('| --- | --- | --- | --- | --- | --- |');
  const open = await warmClient(port, ca, 64, pools.get('/mutate')!);
  for (const route of ROUTES) {
    const pool = pools.get(route)!;
    const r = await openLoop(opts.rate, opts.fixedDuration, (i) => open.send(route, pool[i % pool.length]!));
    console.log(`| ${route} | ${opts.rate}/s | ${opts.fixedDuration / 1000} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.rps)} |`);
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
    void rss().then((b) => { samples.push([t / 1000, b]); sampling = false; });
  });
  open.destroy();
  samples.push([(performance.now() - soakStart) / 1000, await rss()]);
  const values = samples.map(([, b]) => b);
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const slope = ((last[1] - first[1]) / 2 ** 20) / ((last[0] - first[0]) / 60);
  console.log(`\nsoak: ${fmt(soak.n)} requests over ${(opts.soak / 1000).toFixed(0)} s at ${opts.rate}/s (mixed), p50 ${fmt(soak.p50)} ms, p99 ${fmt(soak.p99)} ms, ${soak.errors.length} failed${soak.errors.length ? ` (first: ${soak.errors[0]})` : ''}`);
  console.log(`server RSS MiB: ${samples.map(([t, b]) => `${t.toFixed(0)}s=${mib(b)}`).join(' ')}`);
  console.log(`server RSS first ${mib(first[1])} MiB, last ${mib(last[1])} MiB, max ${mib(Math.max(...values))} MiB, trend ${slope.toFixed(2)} MiB/min`);

  await server.stop();
}

await main();
