// The webhook server process minus its wiring to a cluster: HTTPS listener with reloadable certificate, optional plain
// metrics listener, and graceful shutdown (unready, wait for endpoints to notice, finish in-flight requests, close).
// ../main.ts feeds it informer caches; tests and the benchmark feed it in-memory ones.

import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { packageVersion } from '../../config/version.ts';
import { CONNECTION_LIMITS } from '../../runtime/connection-limits.ts';
import { startHealthServer } from '../../runtime/health-server.ts';
import type { Logger } from '../../observability/log.ts';
import type { WriterIdentities } from '../admission/worker-only-writes.ts';
import { createApp, probeOptions } from './app.ts';
import type { CacheState, ClusterView } from '../admission/cluster-view.ts';
import { createWebhookMetrics, type WebhookMetrics } from './metrics.ts';
import type { ConflictPolicy } from '../admission/export-conflicts.ts';
import type { ExternalNamePolicy } from '../admission/exported-service.ts';
import { notAfter, readKeyPair, watchKeyPair } from '../../runtime/certificate-watcher.ts';

export interface ServerOptions {
  port: number;
  bindAddress: string;
  tlsCertFile: string;
  tlsKeyFile: string;
  tlsReloadIntervalMs: number;
  /** A port for the plain probe listener; 0 or less (METRICS_OFF): none. */
  metricsPort: number;
  conflictPolicy: ConflictPolicy;
  externalNamePolicy: ExternalNamePolicy;
  writers: WriterIdentities;
  maxRequestBytes: number;
  shutdownDelayMs: number;
  shutdownTimeoutMs: number;
  /**
   * How long /readyz waits for the caches before reporting ready anyway (0: forever). Breaks the one deadlock strict
   * gating has: objects stored at v1alpha1 need this server's conversion to be listed at v1beta1, and the apiserver
   * reaches it only through ready endpoints. Until the caches load, decisions that need them are refused as
   * "still loading" (../admission/validate.ts), never made on empty caches.
   */
  cacheSyncGraceMs: number;
}

export interface WebhookServer {
  /** The HTTPS port actually bound (useful with port 0). */
  port: number;
  /** The metrics port actually bound, or 0 when off. */
  metricsPort: number;
  metrics: WebhookMetrics;
  /** Unready, wait shutdownDelayMs, stop accepting, finish in-flight requests (at most shutdownTimeoutMs), close. */
  shutdown(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    // Node.js listens on :: (IPv4 too, as mapped addresses) for no host, or on 0.0.0.0 where there is no IPv6.
    server.listen(port, host === '' ? undefined : host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Stops accepting; resolves once open requests are answered, or force-closes connections after `timeoutMs`. Keep-alive
 * connections are closed as soon as they fall idle (a request finishing after close() leaves its connection idle).
 */
async function drain(server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  await closed;
  clearInterval(sweep);
  clearTimeout(timer);
}

export async function startWebhookServer(
  options: ServerOptions,
  view: ClusterView,
  caches: CacheState,
  logger: Logger,
): Promise<WebhookServer> {
  const metrics = createWebhookMetrics();
  let shuttingDown = false;
  const startedAt = Date.now();
  const graceOver = () => options.cacheSyncGraceMs > 0 && Date.now() - startedAt >= options.cacheSyncGraceMs;
  const ready = () => !shuttingDown && (caches.unsynced().length === 0 || graceOver());
  const pair = readKeyPair(options.tlsCertFile, options.tlsKeyFile);
  metrics.setCertificateExpiry(notAfter(pair.cert));

  const { app, close } = createApp({
    validation: {
      view,
      unsynced: () => caches.unsynced(),
      policy: options.conflictPolicy,
      externalNamePolicy: options.externalNamePolicy,
      writers: options.writers,
      now: Date.now,
    },
    metrics,
    logger,
    ready,
    maxRequestBytes: options.maxRequestBytes,
  });
  const https = createHttpsServer({ ...pair, minVersion: 'TLSv1.2', ...CONNECTION_LIMITS }, app);
  // The apiserver keeps connections open between requests; a longer idle timeout than its own avoids reset races.
  https.keepAliveTimeout = 120_000;
  const port = await listen(https, options.port, options.bindAddress);
  const watch = watchKeyPair(
    options.tlsCertFile,
    options.tlsKeyFile,
    pair,
    options.tlsReloadIntervalMs,
    logger,
    (next) => {
      https.setSecureContext({ ...next, minVersion: 'TLSv1.2' });
      metrics.setCertificateExpiry(notAfter(next.cert));
    },
  );

  const probes =
    options.metricsPort > 0
      ? await startHealthServer({
          ...probeOptions({ metrics, ready }),
          port: options.metricsPort,
          host: options.bindAddress,
        })
      : undefined;
  const metricsPort = probes?.port ?? 0;
  logger.info(
    {
      event: 'listening',
      version: packageVersion(),
      port,
      metricsPort,
      conflictPolicy: options.conflictPolicy,
      externalNamePolicy: options.externalNamePolicy,
      worker: options.writers.worker,
    },
    'webhook server listening',
  );

  return {
    port,
    metricsPort,
    metrics,
    async shutdown() {
      if (shuttingDown) return;
      shuttingDown = true;
      logger.info({ event: 'shutdown', delayMs: options.shutdownDelayMs }, 'unready; closing after the delay');
      await delay(options.shutdownDelayMs);
      watch.stop();
      await Promise.all([drain(https, options.shutdownTimeoutMs), probes?.close()]);
      await close();
      logger.info({ event: 'stopped' }, 'webhook server stopped');
    },
  };
}
