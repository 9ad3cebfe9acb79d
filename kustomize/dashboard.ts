// The Grafana dashboard of both processes, written by `npm run manifests` to
// kustomize/components/monitoring/mcs-cloudmap-dashboard.json (the component's ConfigMap and the chart's carry that file).
// Every query reads metrics the worker (src/worker/metrics.ts) or the webhook server (src/webhook/transport/metrics.ts) registers;
// test/unit/observability/monitoring-metrics.test.ts checks the names against their registries, and
// test/integration/monitoring/promtool.test.ts parses every query with promtool.

/** Series of one installation: the cluster (a label multi-cluster Prometheus setups add) and the namespace. */
const SELECTOR = 'cluster=~"$cluster", namespace=~"$namespace"';
const RATE = '[$__rate_interval]';
const DATASOURCE = { type: 'prometheus', uid: '${datasource}' };

/** `metric{selector}`, with extra matchers after the installation's. */
function series(metric: string, matchers = ''): string {
  return `${metric}{${SELECTOR}${matchers ? `, ${matchers}` : ''}}`;
}

const rate = (metric: string, matchers = '') => `rate(${series(metric, matchers)}${RATE})`;
/** The q-quantile of a histogram over the selected installations, per value of the `by` labels. */
const quantile = (q: number, histogram: string, by: string[] = []) =>
  `histogram_quantile(${q}, sum by (${['le', ...by].join(', ')}) (${rate(`${histogram}_bucket`)}))`;

interface Query {
  expr: string;
  legend: string;
}
interface Panel {
  title: string;
  description: string;
  unit: string;
  queries: Query[];
  stat?: boolean;
}
interface Row {
  title: string;
  panels: Panel[];
}

const ROWS: Row[] = [
  {
    title: 'Cloud Map',
    panels: [
      {
        title: 'Calls by outcome',
        unit: 'reqps',
        description:
          'Every Cloud Map request (each attempt) of the leader, by outcome. About two a second when nothing changes.',
        queries: [{ expr: `sum by (outcome) (${rate('mcs_cloudmap_cloudmap_calls_total')})`, legend: '{{outcome}}' }],
      },
      {
        title: 'Errors and timeouts by API',
        unit: 'reqps',
        description:
          'Requests that ended in an error, a timeout or a transient failure (the last two are retried). Alert MCSCloudMapCallsFailing.',
        queries: [
          {
            expr: `sum by (region, api, outcome) (${rate('mcs_cloudmap_cloudmap_calls_total', 'outcome=~"error|timeout|transient"')})`,
            legend: '{{region}} {{api}} {{outcome}}',
          },
        ],
      },
      {
        title: 'Throttling by API',
        unit: 'reqps',
        description:
          "Throttling answers from Cloud Map: the account's request quotas are shared (M6). The worker slows down and retries. Alert MCSCloudMapThrottled.",
        queries: [
          {
            expr: `sum by (region, api) (${rate('mcs_cloudmap_cloudmap_throttles_total')})`,
            legend: '{{region}} {{api}}',
          },
        ],
      },
      {
        title: 'Allowed request rate by API',
        unit: 'reqps',
        description:
          'The client-side rate limit of each API, sized from --cloudmap-quotas, --clusters and --cloudmap-quota-share; it drops after throttling.',
        queries: [
          {
            expr: `min by (region, api) (${series('mcs_cloudmap_cloudmap_rate_limit')})`,
            legend: '{{region}} {{api}}',
          },
        ],
      },
      {
        title: 'Call latency p99 by API',
        unit: 's',
        description: "99th percentile of a Cloud Map request's duration.",
        queries: [
          {
            expr: quantile(0.99, 'mcs_cloudmap_cloudmap_call_duration_seconds', ['region', 'api']),
            legend: '{{region}} {{api}}',
          },
        ],
      },
      {
        title: 'Regions reachable',
        unit: 'none',
        description:
          '1 while Cloud Map of the Region answers the change-marker poll; 0: imports with clusters there keep the endpoints last read (RegionsReachable=False). Alert MCSCloudMapRegionUnreachable.',
        queries: [{ expr: `min by (region) (${series('mcs_cloudmap_region_reachable')})`, legend: '{{region}}' }],
      },
    ],
  },
  {
    title: 'Quotas and dead clusters',
    panels: [
      {
        title: 'Exports limited by a quota',
        unit: 'none',
        description:
          'ServiceExports of which Cloud Map holds only part, because InstancesPerService or InstancesPerNamespace is reached (M8). Alert MCSExportsQuotaLimited.',
        queries: [{ expr: `sum by (quota) (${series('mcs_cloudmap_quota_limited_exports')})`, legend: '{{quota}}' }],
      },
      {
        title: 'Instances Cloud Map does not hold',
        unit: 'none',
        description: 'Endpoints × ports of those exports that are not registered, so no other cluster sees them.',
        queries: [
          { expr: `sum by (quota) (${series('mcs_cloudmap_quota_unregistered_instances')})`, legend: '{{quota}}' },
        ],
      },
      {
        title: 'Silent clusters',
        unit: 'none',
        stat: true,
        description:
          'Other clusters whose heartbeat is older than --dead-cluster-ttl: their endpoints are withdrawn here until they beat again. Alert MCSClusterSilent.',
        queries: [{ expr: `max(${series('mcs_cloudmap_silent_clusters')})`, legend: 'silent clusters' }],
      },
      {
        title: 'Heartbeats written',
        unit: 'short',
        description:
          "Heartbeats this cluster began writing to Cloud Map, per minute (one every --heartbeat-interval from the leader). None for longer than the peers' --dead-cluster-ttl and they withdraw this cluster's endpoints. Alert MCSHeartbeatsStopped.",
        queries: [{ expr: `sum(${rate('mcs_cloudmap_heartbeats_total')}) * 60`, legend: 'per minute' }],
      },
      {
        title: 'Instances of dead clusters reaped',
        unit: 'short',
        description: 'Cloud Map instances of dead clusters deregistered (--reap-dead-clusters-after), per minute.',
        queries: [{ expr: `sum(${rate('mcs_cloudmap_reaped_instances_total')}) * 60`, legend: 'per minute' }],
      },
    ],
  },
  {
    title: 'Exports and imports',
    panels: [
      {
        title: 'Reconciles by result',
        unit: 'ops',
        description:
          'Export and import reconciles by result; errors show as ServiceExport Ready=False (Failed) or a ServiceImport not Ready. Alert MCSReconcileErrors.',
        queries: [
          {
            expr: `sum by (controller, result) (${rate('mcs_cloudmap_reconcile_total')})`,
            legend: '{{controller}} {{result}}',
          },
        ],
      },
      {
        title: 'Reconcile duration p99',
        unit: 's',
        description: "99th percentile of a reconcile's duration, by controller.",
        queries: [
          { expr: quantile(0.99, 'mcs_cloudmap_reconcile_duration_seconds', ['controller']), legend: '{{controller}}' },
        ],
      },
      {
        title: 'Export-to-import lag',
        unit: 's',
        description:
          'From an export reconcile that wrote to Cloud Map to the local ServiceImport written; the goal is p99 ≤ 2 s (M7). Alert MCSExportToImportLagHigh.',
        queries: [
          { expr: quantile(0.5, 'mcs_cloudmap_export_to_import_lag_seconds'), legend: 'p50' },
          { expr: quantile(0.99, 'mcs_cloudmap_export_to_import_lag_seconds'), legend: 'p99' },
        ],
      },
      {
        title: 'Imports',
        unit: 'short',
        description: 'ServiceImports and the endpoints of their EndpointSlices that the leader maintains.',
        queries: [
          { expr: `max(${series('mcs_cloudmap_imported_services')})`, legend: 'ServiceImports' },
          { expr: `max(${series('mcs_cloudmap_imported_endpoints')})`, legend: 'endpoints' },
        ],
      },
      {
        title: 'ClusterProperties missing',
        unit: 'none',
        stat: true,
        description:
          '1 while cluster.clusterset.k8s.io or clusterset.k8s.io is missing: nothing is exported (C1). Alert MCSClusterPropertiesMissing.',
        queries: [{ expr: `max(${series('mcs_cloudmap_cluster_properties_missing')})`, legend: 'missing' }],
      },
    ],
  },
  {
    title: 'Work queues and informers',
    panels: [
      {
        title: 'Queue depth',
        unit: 'short',
        description:
          "Keys waiting, by queue and lane (low: an informer resync's keys, behind every change). Alert MCSWorkQueueStalled.",
        queries: [
          { expr: `sum by (name, lane) (${series('mcs_cloudmap_workqueue_depth')})`, legend: '{{name}} {{lane}}' },
        ],
      },
      {
        title: 'Keys added and retried',
        unit: 'ops',
        description: 'Keys added to each queue, and keys requeued with backoff after a failure.',
        queries: [
          { expr: `sum by (name) (${rate('mcs_cloudmap_workqueue_adds_total')})`, legend: '{{name}} added' },
          { expr: `sum by (name) (${rate('mcs_cloudmap_workqueue_retries_total')})`, legend: '{{name}} retried' },
        ],
      },
      {
        title: 'Keys done',
        unit: 'ops',
        description: "Keys a worker finished, by queue and result: the queues' progress.",
        queries: [
          {
            expr: `sum by (name, result) (${rate('mcs_cloudmap_workqueue_work_duration_seconds_count')})`,
            legend: '{{name}} {{result}}',
          },
        ],
      },
      {
        title: 'Wait in queue p99',
        unit: 's',
        description: '99th percentile of the time a key waited before a worker took it.',
        queries: [
          { expr: quantile(0.99, 'mcs_cloudmap_workqueue_queue_duration_seconds', ['name']), legend: '{{name}}' },
        ],
      },
      {
        title: 'Work duration p99',
        unit: 's',
        description: '99th percentile of the time a worker spent on a key.',
        queries: [
          { expr: quantile(0.99, 'mcs_cloudmap_workqueue_work_duration_seconds', ['name']), legend: '{{name}}' },
        ],
      },
      {
        title: 'Informer restarts',
        unit: 'short',
        description: 'Watch reconnects and relists, by resource and reason, per minute.',
        queries: [
          {
            expr: `sum by (resource, reason) (${rate('mcs_cloudmap_informer_restarts_total')}) * 60`,
            legend: '{{resource}} {{reason}}',
          },
        ],
      },
    ],
  },
  {
    title: 'Leader election',
    panels: [
      {
        title: 'Leader',
        unit: 'none',
        description: '1 for the worker replica that holds the Lease and reconciles. Alert MCSWorkerNoLeader.',
        queries: [{ expr: `max by (pod) (${series('mcs_cloudmap_leader')})`, legend: '{{pod}}' }],
      },
      {
        title: 'Leader starts in the last hour',
        unit: 'short',
        description:
          'Times a replica started leading; each start reads Cloud Map again. A rise without a rollout means lost Leases. Alert MCSWorkerLeaderChanges.',
        queries: [
          { expr: `sum by (pod) (increase(${series('mcs_cloudmap_leader_starts_total')}[1h]))`, legend: '{{pod}}' },
        ],
      },
    ],
  },
  {
    title: 'Webhook server',
    panels: [
      {
        title: 'Requests by webhook and result',
        unit: 'reqps',
        description:
          'Admission and conversion requests; denied and warned are answers, failed (conversion) and invalid (not a review) are errors. Alert MCSWebhookErrors.',
        queries: [
          {
            expr: `sum by (webhook, result) (${rate('mcs_cloudmap_webhook_requests_total')})`,
            legend: '{{webhook}} {{result}}',
          },
        ],
      },
      {
        title: 'Latency by webhook',
        unit: 's',
        description:
          'From request body received to response written; the apiserver gives up after 5 s. Alert MCSWebhookSlow.',
        queries: [
          {
            expr: quantile(0.5, 'mcs_cloudmap_webhook_request_duration_seconds', ['webhook']),
            legend: '{{webhook}} p50',
          },
          {
            expr: quantile(0.99, 'mcs_cloudmap_webhook_request_duration_seconds', ['webhook']),
            legend: '{{webhook}} p99',
          },
        ],
      },
      {
        title: 'Serving certificate expires in',
        unit: 's',
        stat: true,
        description:
          'Time left until the notAfter of the certificate the webhook servers use (reloaded when the Secret changes). Alert MCSWebhookCertificateExpiresSoon.',
        queries: [
          {
            expr: `min(${series('mcs_cloudmap_webhook_certificate_expiry_timestamp_seconds')}) - time()`,
            legend: 'expires in',
          },
        ],
      },
    ],
  },
  {
    title: 'Processes',
    panels: [
      {
        title: 'CPU',
        unit: 'percentunit',
        description: 'CPU time of each worker and webhook server pod.',
        queries: [{ expr: `sum by (pod) (${rate('mcs_cloudmap_process_cpu_seconds_total')})`, legend: '{{pod}}' }],
      },
      {
        title: 'Resident memory',
        unit: 'bytes',
        description: "Resident set size of each pod's Node.js process.",
        queries: [
          { expr: `max by (pod) (${series('mcs_cloudmap_process_resident_memory_bytes')})`, legend: '{{pod}}' },
        ],
      },
      {
        title: 'Event loop lag p99',
        unit: 's',
        description:
          'How late the Node.js event loop runs its callbacks; high values delay every answer and Lease renewal.',
        queries: [
          { expr: `max by (pod) (${series('mcs_cloudmap_nodejs_eventloop_lag_p99_seconds')})`, legend: '{{pod}}' },
        ],
      },
    ],
  },
];

const WIDTH = 24;
const PANEL_WIDTH = 8;
const PANEL_HEIGHT = 8;

function panelJson(p: Panel, id: number, x: number, y: number): Record<string, unknown> {
  return {
    id,
    type: p.stat ? 'stat' : 'timeseries',
    title: p.title,
    description: p.description,
    datasource: DATASOURCE,
    gridPos: { h: PANEL_HEIGHT, w: PANEL_WIDTH, x, y },
    fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
    options: p.stat
      ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'area' }
      : {
          legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
          tooltip: { mode: 'multi', sort: 'desc' },
        },
    targets: p.queries.map((q, i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DATASOURCE,
      expr: q.expr,
      legendFormat: q.legend,
    })),
  };
}

/** A variable over a label of the process metrics both processes export; "All" also matches series without the label. */
function labelVariable(name: string, label: string): Record<string, unknown> {
  const query = `label_values(mcs_cloudmap_process_start_time_seconds, ${name})`;
  return {
    name,
    label,
    type: 'query',
    datasource: DATASOURCE,
    query,
    definition: query,
    includeAll: true,
    allValue: '.*',
    multi: true,
    refresh: 2,
    sort: 1,
    current: { text: 'All', value: '$__all' },
  };
}

export function dashboard(): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let y = 0;
  for (const row of ROWS) {
    panels.push({
      id: panels.length + 1,
      type: 'row',
      title: row.title,
      collapsed: false,
      panels: [],
      gridPos: { h: 1, w: WIDTH, x: 0, y },
    });
    y += 1;
    row.panels.forEach((p, i) => {
      const x = (i * PANEL_WIDTH) % WIDTH;
      if (i > 0 && x === 0) y += PANEL_HEIGHT;
      panels.push(panelJson(p, panels.length + 1, x, y));
    });
    y += PANEL_HEIGHT;
  }
  return {
    uid: 'mcs-cloudmap',
    title: 'mcs-cloudmap',
    description:
      'Multi-Cluster Services on AWS Cloud Map: the reconcile worker and the webhook server of each cluster (docs/monitoring.md).',
    tags: ['mcs-cloudmap', 'multicluster'],
    editable: true,
    graphTooltip: 1,
    refresh: '30s',
    schemaVersion: 39,
    time: { from: 'now-6h', to: 'now' },
    timezone: '',
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {} },
        labelVariable('cluster', 'Cluster'),
        labelVariable('namespace', 'Namespace'),
      ],
    },
    annotations: { list: [] },
    panels,
  };
}

export function renderDashboard(): string {
  return JSON.stringify(dashboard(), null, 2) + '\n';
}
