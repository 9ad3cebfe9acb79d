// The benchmark side of the webhook measurements (bench/webhook.ts, bench/chaos.ts and the hostile-client test): the
// server in its own process (test/support/webhook-server.ts), review bodies, a keep-alive HTTPS client and closed- and
// open-loop drivers that collect latencies.

import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeDevCertificates } from '../../hack/local/dev-certificates.ts';
import { MAX_REVIEW_BYTES } from '../../src/webhook/options.ts';
import { SERVICES, serviceRef } from './webhook-server.ts';

export type Route = '/validate' | '/mutate' | '/convert';
export const ROUTES: Route[] = ['/validate', '/mutate', '/convert'];

/** 1,000 distinct bodies per route, prepared up front so the client spends no time building them. */
export function bodies(route: Route): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < 1000; i++) {
    const { namespace, name } = serviceRef((i * 7919) % SERVICES);
    const serviceExport = {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name, namespace, creationTimestamp: '2026-01-01T00:00:00Z' },
    };
    const body =
      route === '/convert'
        ? {
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'ConversionReview',
            request: {
              uid: `u-${i}`,
              desiredAPIVersion: 'multicluster.x-k8s.io/v1alpha1',
              objects: [
                serviceExport,
                { ...serviceExport, kind: 'ServiceExport', metadata: { ...serviceExport.metadata, name: `${name}-b` } },
              ],
            },
          }
        : {
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            request: {
              uid: `u-${i}`,
              kind: { group: 'multicluster.x-k8s.io', version: 'v1beta1', kind: 'ServiceExport' },
              name,
              namespace,
              operation: 'CREATE',
              userInfo: { username: 'alice' },
              object: serviceExport,
              oldObject: null,
              dryRun: false,
            },
          };
    out.push(Buffer.from(JSON.stringify(body)));
  }
  return out;
}

export const allBodies = (): Map<Route, Buffer[]> => new Map(ROUTES.map((r) => [r, bodies(r)]));

export interface Client {
  send(route: Route, body: Buffer): Promise<number>;
  destroy(): void;
}

/** Sends one request; resolves with its latency in ms; rejects on anything but 200. */
export function client(port: number, ca: string, maxSockets: number): Client {
  const agent = new Agent({ keepAlive: true, ca, maxSockets });
  return {
    destroy: () => agent.destroy(),
    send: (route, body) =>
      new Promise((resolve, reject) => {
        const start = process.hrtime.bigint();
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: route,
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': body.length },
          },
          (res) => {
            res.resume();
            res.on('end', () =>
              res.statusCode === 200
                ? resolve(Number(process.hrtime.bigint() - start) / 1e6)
                : reject(new Error(`${route}: HTTP ${res.statusCode}`)),
            );
          },
        );
        req.on('error', (err) => reject(new Error(`${route}: ${err.message}`)));
        req.end(body);
      }),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
}

export interface Result {
  p50: number;
  p99: number;
  max: number;
  rps: number;
  n: number;
  /** Requests that failed (anything but 200, a reset), with the reason; only open loops keep going after one. */
  errors: string[];
}

export function summarise(latencies: number[], elapsedMs: number, errors: string[] = []): Result {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    rps: (latencies.length / elapsedMs) * 1000,
    n: latencies.length,
    errors,
  };
}

export async function closedLoop(
  c: Client,
  route: Route,
  pool: Buffer[],
  concurrency: number,
  total: number,
): Promise<Result> {
  const latencies: number[] = [];
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        latencies.push(await c.send(route, pool[i % pool.length]!));
      }
    }),
  );
  return summarise(latencies, performance.now() - start);
}

/**
 * A client whose `connections` keep-alive connections are already open, so TLS handshakes (once per connection in
 * production too, as the apiserver keeps them) are not counted as request latency.
 */
export async function warmClient(port: number, ca: string, connections: number, pool: Buffer[]): Promise<Client> {
  const c = client(port, ca, connections);
  await closedLoop(c, '/mutate', pool, connections, connections * 4);
  return c;
}

/**
 * Calls `send(i)` at `rate` per second whatever the replies do (open loop), for `durationMs`; the latencies it resolves
 * with are summarised (undefined: not a timed request), its rejections counted as errors.
 */
export async function openLoop(
  rate: number,
  durationMs: number,
  send: (i: number) => Promise<number | undefined>,
  onTick?: () => void,
): Promise<Result> {
  const latencies: number[] = [];
  const errors: string[] = [];
  const inflight = new Set<Promise<void>>();
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < durationMs) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    for (; sent < due; sent++) {
      const p = send(sent).then(
        (ms) => {
          if (ms !== undefined) latencies.push(ms);
        },
        (err: Error) => {
          errors.push(err.message);
        },
      );
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    }
    onTick?.();
    await sleep(1);
  }
  await Promise.all(inflight);
  return summarise(latencies, performance.now() - start, errors);
}

/** Mixed review traffic: request `i` goes to each route in turn with one of its 1,000 bodies. */
export const mixed =
  (c: Client, pools: Map<Route, Buffer[]>) =>
  (i: number): Promise<number> => {
    const route = ROUTES[i % ROUTES.length]!;
    return c.send(route, pools.get(route)![Math.floor(i / ROUTES.length) % 1000]!);
  };

export const fmt = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(0));
export const mib = (b: number) => (b / 1024 / 1024).toFixed(1);

/** The next IPC message of `child`, in order; rejects once it has exited with nothing left to read. */
export function messagesOf(child: ChildProcess, name: string): () => Promise<unknown> {
  const messages: unknown[] = [];
  let wake: (() => void) | undefined;
  child.on('message', (m) => {
    messages.push(m);
    wake?.();
  });
  child.on('exit', () => wake?.());
  return async () => {
    while (messages.length === 0) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`${name} process exited (${child.exitCode ?? child.signalCode})`);
      await new Promise<void>((r) => {
        wake = r;
      });
    }
    return messages.shift();
  };
}

export interface ServerProcess {
  port: number;
  /** The CA the server's certificate chains to. */
  ca: string;
  /** The server process's resident set size in bytes. */
  readonly rss: () => Promise<number>;
  /** The most the server process's resident set has been since it started, in bytes (getrusage's ru_maxrss). */
  readonly peakRss: () => Promise<number>;
  /** The 99th percentile and the most of the server's event-loop delay since the last call, in ms (then reset). */
  readonly loopDelay: () => Promise<{ p99: number; max: number }>;
  /** Whether the process is still running (it never exits on its own). */
  readonly alive: () => boolean;
  readonly stop: () => Promise<void>;
}

/**
 * test/support/webhook-server.ts in its own process with a throwaway CA; `maxRequestBytes` is its --max-request-bytes,
 * `nodeFlags` the Node.js flags it runs with (those of the Deployment, to measure against its limits).
 */
export async function startServerProcess(
  maxRequestBytes = MAX_REVIEW_BYTES,
  nodeFlags: string[] = [],
): Promise<ServerProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'mcs-bench-webhook-'));
  const certs = makeDevCertificates(dir);
  const server = fork(
    join(import.meta.dirname, 'webhook-server.ts'),
    [certs.certFile, certs.keyFile, String(maxRequestBytes)],
    { stdio: 'inherit', execArgv: [...process.execArgv, ...nodeFlags] },
  );
  const nextMessage = messagesOf(server, 'webhook server') as () => Promise<{
    port?: number;
    rss?: number;
    maxRss?: number;
    loopP99?: number;
    loopMax?: number;
  }>;
  const { port } = await nextMessage();
  // One question at a time: replies carry no id.
  let asked: Promise<unknown> = Promise.resolve();
  const ask = (question = 'rss') => {
    const reply = asked.then(async () => {
      server.send(question);
      return nextMessage();
    });
    asked = reply.catch(() => {});
    return reply;
  };
  return {
    port: port!,
    ca: readFileSync(certs.caFile, 'utf8'),
    rss: async () => (await ask()).rss!,
    peakRss: async () => (await ask()).maxRss!,
    loopDelay: async () => {
      const r = await ask('loop');
      return { p99: r.loopP99!, max: r.loopMax! };
    },
    alive: () => server.exitCode === null && server.signalCode === null,
    async stop() {
      if (server.exitCode === null && server.signalCode === null) {
        const exited = new Promise((r) => server.on('exit', r));
        server.send('stop');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
