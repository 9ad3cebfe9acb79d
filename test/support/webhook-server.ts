// The webhook server for `npm run bench:webhook`, in its own process (so it has one core to itself, as in a pod with a
// one-CPU limit, and its RSS is its own). Its caches are filled directly: 10,000 Services, ServiceExports and
// ServiceImports over 10 namespaces plus the ClusterProperties; no apiserver. Talks to the benchmark over IPC.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { exportRecordAnnotations } from '../../src/core/export-record.ts';
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../../src/core/names.ts';
import { createLogger } from '../../src/observability/log.ts';
import {
  ALWAYS_SYNCED,
  memoryView,
  trimService,
  trimServiceExport,
  trimServiceImport,
} from '../../src/webhook/cluster-caches.ts';
import { MAX_REVIEW_BYTES } from '../../src/webhook/options.ts';
import { startWebhookServer } from '../../src/webhook/transport/server.ts';

export const SERVICES = 10_000;
export const NAMESPACES = 10;

/** Namespace and name of service `i`; every tenth one is headless, so its exports conflict with the ClusterSetIP import. */
export function serviceRef(i: number): { namespace: string; name: string; headless: boolean } {
  return { namespace: `bench-${i % NAMESPACES}`, name: `svc-${i}`, headless: i % 10 === 0 };
}

function fill(): ReturnType<typeof memoryView> {
  const view = memoryView();
  view.clusterProperties.upsert({ metadata: { name: CLUSTER_ID_PROPERTY }, spec: { value: 'bench-east' } });
  view.clusterProperties.upsert({ metadata: { name: CLUSTERSET_ID_PROPERTY }, spec: { value: 'bench-set' } });
  const ports = [
    { name: 'http', protocol: 'TCP', port: 80 },
    { name: 'metrics', protocol: 'TCP', port: 9090 },
  ] as const;
  // What the worker records on each ServiceImport: both clusters export ClusterSetIP, bench-west first (X1).
  const exported = (clusterId: string, exportCreationTimestamp: number) => ({
    clusterId,
    exportCreationTimestamp,
    type: 'ClusterSetIP' as const,
    ports: ports.map((p) => ({ ...p })),
    sessionAffinity: 'None' as const,
    ipFamilies: ['IPv4' as const],
    internalTrafficPolicy: 'Cluster' as const,
    exportedLabels: {},
    exportedAnnotations: {},
  });
  const annotations = exportRecordAnnotations([
    exported('bench-west', Date.parse('2025-12-01T00:00:00Z')),
    exported('bench-east', Date.parse('2026-01-01T00:00:00Z')),
  ]);
  for (let i = 0; i < SERVICES; i++) {
    const { namespace, name, headless } = serviceRef(i);
    const metadata = { name, namespace, resourceVersion: String(i), creationTimestamp: '2026-01-01T00:00:00Z' };
    // Through the informers' trims, so the caches hold what production's hold.
    view.services.upsert(
      trimService({
        metadata,
        spec: {
          type: 'ClusterIP',
          clusterIP: headless ? 'None' : `10.1.${i >> 8}.${i & 255}`,
          ports: ports.map((p) => ({ ...p })),
          sessionAffinity: 'None',
          ipFamilies: ['IPv4'],
          internalTrafficPolicy: 'Cluster',
        },
      }),
    );
    view.serviceExports.upsert(trimServiceExport({ metadata }));
    view.serviceImports.upsert(
      trimServiceImport({
        metadata: { ...metadata, annotations },
        spec: {
          type: 'ClusterSetIP',
          ports: ports.map((p) => ({ ...p })),
          ips: ['10.2.0.1'],
          sessionAffinity: 'None',
          ipFamilies: ['IPv4'],
        },
        status: { clusters: [{ cluster: 'bench-west' }, { cluster: 'bench-east' }] },
      }),
    );
  }
  return view;
}

if (import.meta.main) {
  const [certFile, keyFile, maxRequestBytes = String(MAX_REVIEW_BYTES)] = process.argv.slice(2);
  if (!certFile || !keyFile || !process.send)
    throw new Error(
      'usage: spawned by test/support/webhook-client.ts with an IPC channel and <cert> <key> [max-request-bytes]',
    );
  const view = fill();
  const server = await startWebhookServer(
    {
      port: 0,
      bindAddress: '127.0.0.1',
      tlsCertFile: certFile,
      tlsKeyFile: keyFile,
      tlsReloadIntervalMs: 60_000,
      metricsPort: 0,
      conflictPolicy: 'Warn',
      externalNamePolicy: 'Warn',
      writers: { worker: 'worker', deleters: [] },
      maxRequestBytes: Number(maxRequestBytes),
      shutdownDelayMs: 0,
      shutdownTimeoutMs: 2_000,
      cacheSyncGraceMs: 0,
    },
    view,
    ALWAYS_SYNCED,
    createLogger('webhook-bench', 'warn'),
  );
  // A benchmark that dies must not leave its server behind.
  process.on('disconnect', () => process.exit(0));
  // The main thread's event-loop delay, so a stall of the server is told apart from one of the client (W6).
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  process.on('message', (m: string) => {
    if (m === 'loop') {
      process.send!({ loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 });
      loop.reset();
    }
    if (m === 'rss') process.send!({ rss: process.memoryUsage().rss, maxRss: process.resourceUsage().maxRSS * 1024 });
    if (m === 'stop')
      server.shutdown().then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
  });
  process.send({ port: server.port, rss: process.memoryUsage().rss });
}
