// The worker's Prometheus metrics: one prom-client Registry per process, created once at start-up by
// createWorkerMetrics(), holding the worker's own metrics plus the Node.js process defaults. The work queue, the
// informers and the Cloud Map adapter report through plain hook interfaces; this file adapts them to prom-client so
// those parts stay free of any metrics library.
// Usage:
//   const metrics = createWorkerMetrics();
//   new WorkQueue({ ..., metrics: metrics.workQueue });  createInformer({ ..., metrics: metrics.informer });
//   new CloudMapAdapter({ ..., metrics: metrics.cloudMap(region) });
//   metrics.observeReconcile('export', 'success', seconds);  metrics.importedServices.set(n);
//   startHealthServer({ port, registry: metrics.registry, ready: () => ... });

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { METRIC_PREFIX } from '../observability/metric-names.ts';
import type { CallOutcome, CloudMapMetrics } from '../cloudmap/metrics.ts';
import type { InformerMetrics } from '../runtime/informer.ts';
import type { WorkQueueMetrics } from '../runtime/work-queue.ts';

/** Reconciles take milliseconds to a few seconds (Cloud Map calls); throttled ones up to minutes. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Export-to-import lag: the goal is p99 ≤ 2 s (M7). */
const LAG_BUCKETS = [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 120];

export type ReconcileResult = 'success' | 'error' | 'requeue';

export interface WorkerMetrics {
  readonly registry: Registry;
  /** mcs_cloudmap_reconcile_total{controller, result} */
  readonly reconciles: Counter<'controller' | 'result'>;
  /** mcs_cloudmap_reconcile_duration_seconds{controller, result} */
  readonly reconcileDuration: Histogram<'controller' | 'result'>;
  /** mcs_cloudmap_cloudmap_calls_total{api, outcome}: outcome success, throttled, transient or error. */
  readonly cloudMapCalls: Counter<'api' | 'outcome'>;
  /** mcs_cloudmap_cloudmap_call_duration_seconds{api} */
  readonly cloudMapCallDuration: Histogram<'api'>;
  /** mcs_cloudmap_cloudmap_throttles_total{api}: throttling responses from Cloud Map. */
  readonly cloudMapThrottles: Counter<'api'>;
  /** mcs_cloudmap_cloudmap_rate_limit{api}: the client-side request rate currently allowed, per second. */
  readonly cloudMapRateLimit: Gauge<'api'>;
  /** mcs_cloudmap_export_to_import_lag_seconds: from a ServiceExport change to the ServiceImport written. */
  readonly exportToImportLag: Histogram;
  /** mcs_cloudmap_imported_services: ServiceImports this worker maintains. */
  readonly importedServices: Gauge;
  /** mcs_cloudmap_imported_endpoints: endpoints in the EndpointSlices this worker maintains. */
  readonly importedEndpoints: Gauge;
  /** mcs_cloudmap_cluster_properties_missing: 1 while the cluster id or ClusterSet id ClusterProperty is missing. */
  readonly clusterPropertiesMissing: Gauge;
  /** mcs_cloudmap_leader: 1 while this replica holds the leader Lease. */
  readonly leader: Gauge;
  /** mcs_cloudmap_leader_starts_total: times this replica started leading (each start reads Cloud Map in full again). */
  readonly leaderStarts: Counter;
  /** mcs_cloudmap_heartbeats_total: liveness heartbeats this cluster began writing to Cloud Map (one RegisterInstance each). */
  readonly heartbeats: Counter;
  /** mcs_cloudmap_silent_clusters: clusters whose endpoints are withdrawn because their heartbeat is older than the TTL. */
  readonly silentClusters: Gauge;
  /** mcs_cloudmap_reaped_instances_total: instances of dead clusters deregistered (--reap-dead-clusters-after). */
  readonly reapedInstances: Counter;
  /** 1 while Cloud Map of the Region answers the change-marker poll, 0 while it does not, by Region. */
  readonly regionReachable: Gauge<'region'>;
  /** mcs_cloudmap_quota_limited_exports{quota}: exports of which Cloud Map holds only part, held back by a quota (M8). */
  readonly quotaLimitedExports: Gauge<'quota'>;
  /** mcs_cloudmap_quota_unregistered_instances{quota}: their desired instances Cloud Map does not hold. */
  readonly quotaUnregisteredInstances: Gauge<'quota'>;
  /** mcs_cloudmap_informer_restarts_total{resource, reason}: watch reconnects and relists. */
  readonly informerRestarts: Counter<'resource' | 'reason'>;
  readonly workQueue: WorkQueueMetrics;
  readonly informer: InformerMetrics;
  /** The Cloud Map client's hooks for one Region: quotas and rate limits are per Region, so are its series. */
  cloudMap(region: string): CloudMapMetrics;
  observeReconcile(controller: string, result: ReconcileResult, seconds: number): void;
}

export interface WorkerMetricsOptions {
  /** Default: a new Registry (one per process; tests create their own). */
  registry?: Registry;
  /** Node.js process metrics (CPU, memory, event loop lag); default on. */
  processMetrics?: boolean;
}

export function createWorkerMetrics(opts: WorkerMetricsOptions = {}): WorkerMetrics {
  const registry = opts.registry ?? new Registry();
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  const registers = [registry];
  const name = (n: string) => `${METRIC_PREFIX}${n}`;

  const reconciles = new Counter({
    name: name('reconcile_total'),
    help: 'Reconciles by controller and result.',
    labelNames: ['controller', 'result'],
    registers,
  });
  const reconcileDuration = new Histogram({
    name: name('reconcile_duration_seconds'),
    help: 'Duration of reconciles by controller and result.',
    labelNames: ['controller', 'result'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const cloudMapCalls = new Counter({
    name: name('cloudmap_calls_total'),
    help: 'Cloud Map requests (each attempt) by API, outcome and Region.',
    labelNames: ['api', 'outcome', 'region'],
    registers,
  });
  const cloudMapCallDuration = new Histogram({
    name: name('cloudmap_call_duration_seconds'),
    help: 'Duration of Cloud Map requests by API and Region.',
    labelNames: ['api', 'region'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const cloudMapThrottles = new Counter({
    name: name('cloudmap_throttles_total'),
    help: 'Throttling responses from Cloud Map by API and Region.',
    labelNames: ['api', 'region'],
    registers,
  });
  const cloudMapRateLimit = new Gauge({
    name: name('cloudmap_rate_limit'),
    help: 'Client-side Cloud Map request rate currently allowed, per second, by API and Region.',
    labelNames: ['api', 'region'],
    registers,
  });
  const exportToImportLag = new Histogram({
    name: name('export_to_import_lag_seconds'),
    help: 'Time from a ServiceExport change to the ServiceImport written.',
    buckets: LAG_BUCKETS,
    registers,
  });
  const importedServices = new Gauge({
    name: name('imported_services'),
    help: 'ServiceImports maintained by this worker.',
    registers,
  });
  const importedEndpoints = new Gauge({
    name: name('imported_endpoints'),
    help: 'Endpoints in the EndpointSlices maintained by this worker.',
    registers,
  });
  const clusterPropertiesMissing = new Gauge({
    name: name('cluster_properties_missing'),
    help: '1 while the cluster.clusterset.k8s.io or clusterset.k8s.io ClusterProperty is missing.',
    registers,
  });
  const leader = new Gauge({ name: name('leader'), help: '1 while this replica holds the leader Lease.', registers });
  const leaderStarts = new Counter({
    name: name('leader_starts_total'),
    help: 'Times this replica started leading; each start reads Cloud Map in full again, so a rise without a rollout means lost Leases.',
    registers,
  });
  const heartbeats = new Counter({
    name: name('heartbeats_total'),
    help: 'Liveness heartbeats this cluster began writing to Cloud Map (one RegisterInstance each, retries aside).',
    registers,
  });
  const silentClusters = new Gauge({
    name: name('silent_clusters'),
    help: 'Clusters whose endpoints are withdrawn because their heartbeat is older than --dead-cluster-ttl.',
    registers,
  });
  const reapedInstances = new Counter({
    name: name('reaped_instances_total'),
    help: 'Cloud Map instances of dead clusters deregistered (--reap-dead-clusters-after).',
    registers,
  });
  const regionReachable = new Gauge({
    name: name('region_reachable'),
    help: '1 while Cloud Map of the Region answers the change-marker poll, 0 while imports from it are degraded.',
    labelNames: ['region'],
    registers,
  });
  const quotaLimitedExports = new Gauge({
    name: name('quota_limited_exports'),
    help: 'ServiceExports of which Cloud Map holds only part because a quota (InstancesPerService, InstancesPerNamespace) is reached.',
    labelNames: ['quota'],
    registers,
  });
  const quotaUnregisteredInstances = new Gauge({
    name: name('quota_unregistered_instances'),
    help: 'Instances (endpoints × ports) of those ServiceExports that Cloud Map does not hold, by quota.',
    labelNames: ['quota'],
    registers,
  });
  const informerRestarts = new Counter({
    name: name('informer_restarts_total'),
    help: 'Informer watch reconnects and relists by resource and reason.',
    labelNames: ['resource', 'reason'],
    registers,
  });

  const queueDepth = new Gauge({
    name: name('workqueue_depth'),
    help: "Keys waiting in the work queue, by lane (low: an informer resync's keys, behind every change).",
    labelNames: ['name', 'lane'],
    registers,
  });
  const queueAdds = new Counter({
    name: name('workqueue_adds_total'),
    help: 'Keys added to the work queue.',
    labelNames: ['name'],
    registers,
  });
  const queueRetries = new Counter({
    name: name('workqueue_retries_total'),
    help: 'Keys requeued with backoff after a failure.',
    labelNames: ['name'],
    registers,
  });
  const queueWait = new Histogram({
    name: name('workqueue_queue_duration_seconds'),
    help: 'Time a key waited before a worker took it.',
    labelNames: ['name'],
    buckets: DURATION_BUCKETS,
    registers,
  });
  const queueWork = new Histogram({
    name: name('workqueue_work_duration_seconds'),
    help: 'Time a worker spent on a key, by result.',
    labelNames: ['name', 'result'],
    buckets: DURATION_BUCKETS,
    registers,
  });

  return {
    registry,
    reconciles,
    reconcileDuration,
    cloudMapCalls,
    cloudMapCallDuration,
    cloudMapThrottles,
    cloudMapRateLimit,
    exportToImportLag,
    importedServices,
    importedEndpoints,
    clusterPropertiesMissing,
    leader,
    leaderStarts,
    heartbeats,
    silentClusters,
    reapedInstances,
    regionReachable,
    informerRestarts,
    quotaLimitedExports,
    quotaUnregisteredInstances,
    workQueue: {
      depth: (queue, lane, depth) => queueDepth.set({ name: queue, lane }, depth),
      added: (queue) => queueAdds.inc({ name: queue }),
      retried: (queue) => queueRetries.inc({ name: queue }),
      waited: (queue, seconds) => queueWait.observe({ name: queue }, seconds),
      processed: (queue, seconds, result) => queueWork.observe({ name: queue, result }, seconds),
    },
    informer: {
      restarted: (resource, reason) => informerRestarts.inc({ resource, reason }),
    },
    cloudMap: (region) => ({
      onCall: (api: string, outcome: CallOutcome, durationMs: number) => {
        cloudMapCalls.inc({ api, outcome, region });
        cloudMapCallDuration.observe({ api, region }, durationMs / 1000);
        if (outcome === 'throttled') cloudMapThrottles.inc({ api, region });
      },
      onRateChange: (api: string, ratePerSecond: number) => cloudMapRateLimit.set({ api, region }, ratePerSecond),
    }),
    observeReconcile: (controller, result, seconds) => {
      reconciles.inc({ controller, result });
      reconcileDuration.observe({ controller, result }, seconds);
    },
  };
}
