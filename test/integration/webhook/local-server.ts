// The webhook server started in-process on 127.0.0.1 with a throwaway CA and in-memory caches, plus an HTTPS client
// that trusts that CA: for the server, fuzz and TLS-rotation tests (no cluster needed).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../../src/observability/log.ts';
import type { CacheName, ClusterView } from '../../../src/webhook/admission/cluster-view.ts';
import { makeDevCertificates, type DevCertificates } from '../../../hack/local/dev-certificates.ts';
import { startWebhookServer, type ServerOptions, type WebhookServer } from '../../../src/webhook/transport/server.ts';

export interface LocalServer {
  server: WebhookServer;
  certs: DevCertificates;
  dir: string;
  client: HttpsClient;
  /** Which caches the server is told are still loading. */
  setUnsynced(names: CacheName[]): void;
  stop(): Promise<void>;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): unknown;
}

export interface HttpsClient {
  agent: Agent;
  send(method: string, path: string, body?: string | Buffer, headers?: Record<string, string>): Promise<Reply>;
  post(path: string, body: unknown): Promise<Reply>;
}

export function httpsClient(port: number, ca: string, timeoutMs = 10_000): HttpsClient {
  const agent = new Agent({ keepAlive: true, ca, maxSockets: 64 });
  const send = (method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}) =>
    new Promise<Reply>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, agent, headers, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text,
            json: () => JSON.parse(text) as unknown,
          });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  return {
    agent,
    send,
    post: (path, body) => send('POST', path, JSON.stringify(body), { 'content-type': 'application/json' }),
  };
}

export async function startLocalServer(view: ClusterView, options: Partial<ServerOptions> = {}): Promise<LocalServer> {
  const dir = mkdtempSync(join(tmpdir(), 'mcs-webhook-'));
  const certs = makeDevCertificates(dir);
  let unsynced: CacheName[] = [];
  const server = await startWebhookServer(
    {
      port: 0,
      bindAddress: '127.0.0.1',
      tlsCertFile: certs.certFile,
      tlsKeyFile: certs.keyFile,
      tlsReloadIntervalMs: 100,
      metricsPort: 0,
      conflictPolicy: 'Warn',
      externalNamePolicy: 'Warn',
      writers: { worker: 'worker', deleters: [] },
      maxRequestBytes: 1 << 20,
      shutdownDelayMs: 0,
      shutdownTimeoutMs: 5_000,
      cacheSyncGraceMs: 0,
      ...options,
    },
    view,
    { unsynced: () => unsynced },
    createLogger('webhook-test', process.env.MCS_LOG_LEVEL ?? 'silent'),
  );
  const client = httpsClient(server.port, readFileSync(certs.caFile, 'utf8'));
  return {
    server,
    certs,
    dir,
    client,
    setUnsynced: (names) => {
      unsynced = names;
    },
    async stop() {
      client.agent.destroy();
      await server.shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
