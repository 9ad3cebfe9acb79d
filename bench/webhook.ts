// `npm run bench:webhook [-- --soak=5m]`: latency and throughput of /validate, /mutate and /convert over HTTPS on
// loopback, against a server process whose caches hold 10,000 Services, ServiceExports and ServiceImports.
//   1. closed loop at concurrency 1, 16 and 64 (a bounded number of requests each): p50, p99, requests/s;
//   2. open loop at a fixed rate (default 1,000 requests/s, the goal of issue 3): p50, p99, achieved rate;
//   3. RSS stability: mixed traffic at the fixed rate for --soak (short by default; 5m for the recorded figure),
//      sampling the server's RSS.
// Prints a Markdown table to paste into docs/benchmarks.md.

import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { durationOption, formatHelp, intOption, parseOptions } from '../src/config/options.ts';
import { makeDevCertificates } from '../webhook/dev-certificates.ts';
import { SERVICES, serviceRef } from './webhook-server.ts';

const specs = {
  requests: intOption('requests', 'BENCH_REQUESTS', 4_000, 'Requests per route and concurrency in the closed-loop runs.', 100),
  rate: intOption('rate', 'BENCH_RATE', 1_000, 'Requests per second of the open-loop runs and the soak.', 1),
  fixedDuration: durationOption('fixed-duration', 'BENCH_FIXED_DURATION', 10_000, 'Length of each open-loop run.'),
  soak: durationOption('soak', 'BENCH_SOAK', 20_000, 'Length of the RSS-stability run (5m for the recorded figure).'),
};

type Route = '/validate' | '/mutate' | '/convert';
const ROUTES: Route[] = ['/validate', '/mutate', '/convert'];

/** 1,000 distinct bodies per route, prepared up front so the client spends no time building them. */
function bodies(route: Route): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < 1000; i++) {
    const { namespace, name } = serviceRef((i * 7919) % SERVICES);
    const serviceExport = { apiVersion: 'multicluster.x-k8s.io/v1beta1', kind: 'ServiceExport', metadata: { name, namespace, creationTimestamp: '2026-01-01T00:00:00Z' } };
    const body = route === '/convert'
      ? {
        apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview',
        request: { uid: `u-${i}`, desiredAPIVersion: 'multicluster.x-k8s.io/v1alpha1', objects: [serviceExport, { ...serviceExport, kind: 'ServiceExport', metadata: { ...serviceExport.metadata, name: `${name}-b` } }] },
      }
      : {
        apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
        request: {
          uid: `u-${i}`, kind: { group: 'multicluster.x-k8s.io', version: 'v1beta1', kind: 'ServiceExport' }, name, namespace,
          operation: 'CREATE', userInfo: { username: 'alice' }, object: serviceExport, oldObject: null, dryRun: false,
        },
      };
    out.push(Buffer.from(JSON.stringify(body)));
  }
  return out;
}

interface Client { send(route: Route, body: Buffer): Promise<number>; destroy(): void }

/** Sends one request; resolves with its latency in ms; rejects on anything but 200. */
function client(port: number, ca: string, maxSockets: number): Client {
  const agent = new Agent({ keepAlive: true, ca, maxSockets });
  return {
    destroy: () => agent.destroy(),
    send: (route, body) => new Promise((resolve, reject) => {
      const start = process.hrtime.bigint();
      const req = request({ host: '127.0.0.1', port, path: route, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - start) / 1e6) : reject(new Error(`${route}: HTTP ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    }),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
}

interface Result { p50: number; p99: number; rps: number; n: number }

function summarise(latencies: number[], elapsedMs: number): Result {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), rps: (latencies.length / elapsedMs) * 1000, n: latencies.length };
}

async function closedLoop(c: Client, route: Route, pool: Buffer[], concurrency: number, total: number): Promise<Result> {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const i = next++;
      latencies.push(await c.send(route, pool[i % pool.length]!));
    }
  }));
  return summarise(latencies, performance.now() - start);
}

/**
 * A client whose `connections` keep-alive connections are already open, so TLS handshakes (once per connection in
 * production too, as the apiserver keeps them) are not counted as request latency.
 */
async function warmClient(port: number, ca: string, connections: number, pool: Buffer[]): Promise<Client> {
  const c = client(port, ca, connections);
  await closedLoop(c, '/mutate', pool, connections, connections * 4);
  return c;
}

/** Requests started at `rate` per second whatever the replies do (open loop), for `durationMs`. */
async function openLoop(c: Client, routes: Route[], pools: Map<Route, Buffer[]>, rate: number, durationMs: number, onTick?: () => void): Promise<Result> {
  const latencies: number[] = [];
  const inflight = new Set<Promise<void>>();
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < durationMs) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    for (; sent < due; sent++) {
      const route = routes[sent % routes.length]!;
      const p = c.send(route, pools.get(route)![sent % 1000]!).then((ms) => { latencies.push(ms); });
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    }
    onTick?.();
    await sleep(1);
  }
  await Promise.all(inflight);
  return summarise(latencies, performance.now() - start);
}

const fmt = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(0));

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(formatHelp('npm run bench:webhook: webhook latency, throughput and RSS stability.', specs));
    return;
  }
  const opts = parseOptions(specs, process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'mcs-bench-webhook-'));
  const certs = makeDevCertificates(dir);
  const server = fork(join(import.meta.dirname, 'webhook-server.ts'), [certs.certFile, certs.keyFile], { stdio: 'inherit' });
  const messages: Array<{ port?: number; rss?: number }> = [];
  let wake: (() => void) | undefined;
  server.on('message', (m: { port?: number; rss?: number }) => { messages.push(m); wake?.(); });
  const nextMessage = async () => {
    while (messages.length === 0) await new Promise<void>((r) => { wake = r; });
    return messages.shift()!;
  };
  const rss = async () => { server.send('rss'); return (await nextMessage()).rss!; };
  const { port } = await nextMessage();
  const ca = readFileSync(certs.caFile, 'utf8');
  const pools = new Map(ROUTES.map((r) => [r, bodies(r)]));
  const mib = (b: number) => (b / 1024 / 1024).toFixed(1);

  console.log(`# webhook benchmark — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`);
  console.log(`server: separate process (one event loop), caches with ${SERVICES} Services, ServiceExports and ServiceImports; HTTPS keep-alive on loopback`);
  console.log(`server RSS after filling the caches: ${mib(await rss())} MiB\n`);

  // Warm-up: JIT.
  const warm = await warmClient(port!, ca, 16, pools.get('/mutate')!);
  for (const route of ROUTES) await closedLoop(warm, route, pools.get(route)!, 16, 2_000);
  warm.destroy();

  console.log('| route | concurrency | requests | p50 ms | p99 ms | requests/s |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const route of ROUTES) {
    for (const concurrency of [1, 16, 64]) {
      const c = await warmClient(port!, ca, concurrency, pools.get('/mutate')!);
      const r = await closedLoop(c, route, pools.get(route)!, concurrency, opts.requests);
      c.destroy();
      console.log(`| ${route} | ${concurrency} | ${r.n} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.rps)} |`);
    }
  }

  console.log(`\n| route | offered rate | duration s | p50 ms | p99 ms | achieved requests/s |`);
  console.log('| --- | --- | --- | --- | --- | --- |');
  const open = await warmClient(port!, ca, 64, pools.get('/mutate')!);
  for (const route of ROUTES) {
    const r = await openLoop(open, [route], pools, opts.rate, opts.fixedDuration);
    console.log(`| ${route} | ${opts.rate}/s | ${opts.fixedDuration / 1000} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.rps)} |`);
  }

  // Soak: all three routes in turn at the fixed rate; RSS sampled every tenth of the run (at least every 5 s).
  const samples: Array<[number, number]> = [];
  const sampleEvery = Math.max(5_000, opts.soak / 10);
  const soakStart = performance.now();
  let lastSample = -Infinity;
  let sampling = false;
  const soak = await openLoop(open, ROUTES, pools, opts.rate, opts.soak, () => {
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
  console.log(`\nsoak: ${fmt(soak.n)} requests over ${(opts.soak / 1000).toFixed(0)} s at ${opts.rate}/s (mixed), p50 ${fmt(soak.p50)} ms, p99 ${fmt(soak.p99)} ms`);
  console.log(`server RSS MiB: ${samples.map(([t, b]) => `${t.toFixed(0)}s=${mib(b)}`).join(' ')}`);
  console.log(`server RSS first ${mib(first[1])} MiB, last ${mib(last[1])} MiB, max ${mib(Math.max(...values))} MiB, trend ${slope.toFixed(2)} MiB/min`);

  server.send('stop');
  await new Promise((r) => server.on('exit', r));
  rmSync(dir, { recursive: true, force: true });
}

await main();
