// The one probe server of every process: `/metrics` (Prometheus text from the process Registry), `/healthz` (liveness:
// the event loop answers, plus an optional check) and `/readyz` (readiness from a callback, e.g. "informers synced and
// either leading or a healthy standby"). Failing checks answer 503 with the reason in the body. The worker serves them
// on their own port; the webhook server on its --metrics-port and also on its HTTPS port (answerProbe, as a route).
// Usage:
//   const server = await startHealthServer({ port: 8080, registry: metrics.registry, ready: () => informersSynced() });
//   ...; await server.close();

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { CONNECTION_LIMITS } from './connection-limits.ts';

/** true = healthy; false or a string (the reason) = not; a throw counts as not healthy, with its message. */
export type HealthCheck = () => boolean | string | Promise<boolean | string>;

export interface ProbeOptions {
  registry: Registry;
  ready: HealthCheck;
  live?: HealthCheck;
}

export interface HealthServerOptions extends ProbeOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** Absent or empty: every IPv6 and IPv4 address (IPv4 only where there is no IPv6), so probes reach it in any pod. */
  host?: string;
}

export interface HealthServer {
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

async function runCheck(check: HealthCheck | undefined): Promise<{ ok: boolean; reason: string }> {
  if (!check) return { ok: true, reason: 'ok' };
  try {
    const r = await check();
    if (r === true) return { ok: true, reason: 'ok' };
    return { ok: false, reason: typeof r === 'string' ? r : 'not ready' };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}

/** Answers a GET of /metrics, /healthz or /readyz and returns true; returns false, answering nothing, for any other path. */
export async function answerProbe(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  opts: ProbeOptions,
): Promise<boolean> {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/metrics') {
    const text = await opts.registry.metrics();
    res.writeHead(200, { 'Content-Type': opts.registry.contentType }).end(text);
    return true;
  }
  if (path === '/healthz' || path === '/readyz') {
    const { ok, reason } = await runCheck(path === '/readyz' ? opts.ready : opts.live);
    res.writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain' }).end(`${reason}\n`);
    return true;
  }
  return false;
}

export async function startHealthServer(opts: HealthServerOptions): Promise<HealthServer> {
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (!(await answerProbe(req, res, opts))) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found: try /metrics, /healthz or /readyz\n');
    }
  };
  const server = http.createServer(CONNECTION_LIMITS, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`${err instanceof Error ? err.message : String(err)}\n`);
    });
  });
  const host = opts.host || undefined;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`health server: cannot listen on ${host ?? 'every address'}:${opts.port}: ${err.message}`)),
    );
    server.listen(opts.port, host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const local = host === undefined || host === '0.0.0.0' || host === '::';
  return {
    port,
    url: `http://${local ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
