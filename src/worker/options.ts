// Flags of the reconcile worker (`npm run worker -- --help`), each with an MCS_* environment fallback.
import { DEFAULT_CALL_TIMEOUT_MS, longestCallMs } from '../cloudmap/call.ts';
import { DEFAULT_CONNECT_TIMEOUT_MS } from '../cloudmap/client.ts';
import { CLOUD_MAP_QUOTAS, DEFAULT_CONTROLLERS_SHARE } from '../cloudmap/quotas.ts';
import { SYSTEM_NAMESPACE } from '../core/names.ts';
import { HTTP_NAMING, namespaceNaming, type NamespaceNaming } from '../core/namespace-naming.ts';
import { listed, namespaceKindOptionSpecs } from '../config/namespace-options.ts';
import {
  boolOption,
  ConfigError,
  regionListOption,
  durationOption,
  enumOption,
  formatHelp,
  intOption,
  logLevelOption,
  parseOptions,
  rateMapOption,
  renamed,
  stringOption,
  type OptionSpec,
  type OptionValues,
} from '../config/options.ts';

/** A 12-digit AWS account id, or empty for none. */
function accountOption(flag: string, env: string, help: string): OptionSpec<string> {
  return {
    ...stringOption(flag, env, '', help),
    parse: (raw, f) => {
      if (raw !== '' && !/^\d{12}$/.test(raw))
        throw new ConfigError(`--${f}: expected a 12-digit AWS account id, got "${raw}"`);
      return raw;
    },
  };
}

export const workerOptionSpecs = {
  kubeconfig: stringOption(
    'kubeconfig',
    'MCS_KUBECONFIG',
    '',
    'Path of the kubeconfig; empty: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account.',
  ),
  namespace: stringOption(
    'namespace',
    'MCS_NAMESPACE',
    SYSTEM_NAMESPACE,
    'Namespace the worker runs in, where its leader-election Lease lives.',
  ),
  leaderElect: boolOption(
    'leader-elect',
    'MCS_LEADER_ELECT',
    true,
    'Take a coordination.k8s.io Lease before reconciling, so several replicas can run and only one writes.',
  ),
  leaseName: stringOption('lease-name', 'MCS_LEASE_NAME', 'mcs-cloudmap-worker', 'Name of the leader-election Lease.'),
  leaseDuration: durationOption(
    'lease-duration',
    'MCS_LEASE_DURATION',
    15_000,
    'How long a Lease stays valid without renewal; a standby replica takes over after it.',
  ),
  identity: stringOption(
    'identity',
    'MCS_IDENTITY',
    '',
    'Holder identity written into the Lease; empty: the host name and process id.',
  ),
  cloudMapEndpoint: stringOption(
    'cloudmap-endpoint',
    'MCS_CLOUDMAP_ENDPOINT',
    '',
    'Cloud Map API endpoint URL; empty: the AWS endpoint of the region.',
  ),
  region: stringOption(
    'region',
    'MCS_AWS_REGION',
    '',
    'AWS region of the Cloud Map namespaces; empty: the AWS SDK default chain (AWS_REGION, profile).',
  ),
  regions: regionListOption(
    'regions',
    'MCS_REGIONS',
    'Comma-separated AWS Regions of the ClusterSet, e.g. us-east-1,eu-west-1: this cluster registers its instances in --region and reads every Region listed (one Cloud Map client, change marker watch, resync and rate limits per Region); empty: --region alone.',
  ),
  namespaceOwnerAccount: accountOption(
    'namespace-owner-account',
    'MCS_NAMESPACE_OWNER_ACCOUNT',
    "AWS account (12 digits) that owns the ClusterSet's Cloud Map namespaces and shares them with this cluster's account through AWS RAM; this cluster then uses only that account's namespaces and never creates one (a namespace not shared yet is reported on the ServiceExport). Empty: the namespaces are this account's own, created when missing.",
  ),
  ...namespaceKindOptionSpecs,
  dnsNamespaceVpc: stringOption(
    'dns-namespace-vpc',
    'MCS_DNS_NAMESPACE_VPC',
    '',
    'Id of the VPC (vpc-...) a new private DNS namespace is created in (its Route 53 private hosted zone answers there). Needed with DNS namespaces.',
  ),
  dnsRecordTypes: enumOption(
    'dns-record-types',
    'MCS_DNS_RECORD_TYPES',
    'A',
    ['A', 'AAAA', 'A,AAAA'],
    "Records of each new service in a DNS namespace: A (IPv4 endpoints), AAAA (IPv6 endpoints) or both. Cloud Map cannot change a service's record types once it exists.",
  ),
  dnsRecordTtl: intOption(
    'dns-record-ttl',
    'MCS_DNS_RECORD_TTL',
    10,
    "TTL in seconds of each new service's records in a DNS namespace: how long a resolver may keep answering with an endpoint that is gone.",
    0,
    2_147_483_647,
  ),
  accountId: accountOption(
    'account-id',
    'MCS_AWS_ACCOUNT_ID',
    "This cluster's AWS account (12 digits), when known: an instance that claims this cluster's id but another account registered is never deregistered and is reported as a duplicate cluster id (C4).",
  ),
  clusters: intOption(
    'clusters',
    'MCS_CLUSTERS',
    2,
    "Clusters whose controllers share this AWS account's Cloud Map quotas in the Region (M6); each takes an equal share of --cloudmap-quota-share of every quota.",
    1,
    10_000,
  ),
  cloudMapQuotaShare: intOption(
    'cloudmap-quota-share',
    'MCS_CLOUDMAP_QUOTA_SHARE',
    DEFAULT_CONTROLLERS_SHARE * 100,
    "Percent of every Cloud Map quota the ClusterSet's controllers take together (M6); a cluster may always use its equal part and borrows up to all of it while the others are quiet. The rest is left to people, tools and other controllers on the account: set 100 only when the account's Cloud Map is used by this ClusterSet alone, and the same in every cluster.",
    1,
    100,
  ),
  cloudMapQuotas: rateMapOption(
    'cloudmap-quotas',
    'MCS_CLOUDMAP_QUOTAS',
    Object.fromEntries(Object.entries(CLOUD_MAP_QUOTAS).map(([api, q]) => [api, q.rate])),
    "The account's Cloud Map request quotas as Api=requestsPerSecond pairs (* = any other API); DiscoverInstances and DiscoverInstancesRevision are AWS's documented defaults, the rest assumptions. Client rates are shares of these.",
  ),
  rateLimits: rateMapOption(
    'rate-limits',
    'MCS_RATE_LIMITS',
    {},
    'Client-side Cloud Map request rates as Api=requestsPerSecond pairs, set outright instead of the share of --cloudmap-quotas.',
  ),
  cloudMapConnectTimeout: durationOption(
    'cloudmap-connect-timeout',
    'MCS_CLOUDMAP_CONNECT_TIMEOUT',
    DEFAULT_CONNECT_TIMEOUT_MS,
    'Longest wait for a TCP connection to Cloud Map; then the attempt fails and is retried (M6).',
  ),
  cloudMapCallTimeout: durationOption(
    'cloudmap-call-timeout',
    'MCS_CLOUDMAP_CALL_TIMEOUT',
    DEFAULT_CALL_TIMEOUT_MS,
    'Longest wait for the complete answer to one Cloud Map request (also the longest silence on its connection); then the request is abandoned with its connection and retried like a transient failure (8 attempts per call), counted with outcome="timeout", and a call that still fails shows on the ServiceExport (Ready=Unknown).',
  ),
  progressTimeout: durationOption(
    'progress-timeout',
    'MCS_PROGRESS_TIMEOUT',
    300_000,
    '/healthz fails (so Kubernetes restarts the worker) when the Cloud Map watcher or a work queue with keys to handle has finished nothing for this long. Longer than one Cloud Map call can take with its retries (8 x --cloudmap-call-timeout plus backoff).',
  ),
  pollInterval: durationOption(
    'poll-interval',
    'MCS_POLL_INTERVAL',
    750,
    'How often the ClusterSet change marker in Cloud Map is read (one cheap call per poll, whatever the number of services).',
  ),
  fullResyncInterval: durationOption(
    'full-resync-interval',
    'MCS_FULL_RESYNC_INTERVAL',
    300_000,
    "Longest time from a Cloud Map service's last read (or its creation) to its next read by the safety-net resync (revision first), to catch writers that do not bump the change marker (e.g. the AWS controller v0.3.1); longer when --resync-budget does not allow it.",
  ),
  nonAnnouncingPollInterval: durationOption(
    'non-announcing-poll-interval',
    'MCS_NON_ANNOUNCING_POLL_INTERVAL',
    2000,
    'How often every Cloud Map service of a namespace where a writer that does not bump the change marker (e.g. the AWS controller v0.3.1) has instances is checked (one DiscoverInstancesRevision each) and the namespace listed (one ListServices per 100 services), so its changes and new services show within seconds; 0s: only at the resync.',
  ),
  operationsPollInterval: durationOption(
    'operations-poll-interval',
    'MCS_OPERATIONS_POLL_INTERVAL',
    4000,
    'How often the Cloud Map instance registrations of the account that succeeded since the last look are listed (one ListOperations), and each new one that another writer made looked up (one GetOperation), so that what a writer that does not bump the change marker (e.g. the AWS controller v0.3.1) registers is read within seconds wherever it lands, a new namespace included; 0s: only at the resync.',
  ),
  registrantScanInterval: durationOption(
    'registrant-scan-interval',
    'MCS_REGISTRANT_SCAN_INTERVAL',
    300_000,
    "How often the Cloud Map services tagged mcs-cloudmap/import=true (registered by ECS or another writer that is not an MCS controller) are looked for in the Cloud Map namespaces named as this cluster's namespaces: one ListNamespaces, one ListServices per such namespace (per 100 services) and one ListTagsForResource per service this controller did not create.",
  ),
  registrantPollInterval: durationOption(
    'registrant-poll-interval',
    'MCS_REGISTRANT_POLL_INTERVAL',
    5000,
    'How often each opted-in Cloud Map service (tag mcs-cloudmap/import=true) is read whole (one DiscoverInstances), so that its instances, and their health, which moves no revision, show in the imports within this interval.',
  ),
  resyncBudget: intOption(
    'resync-budget',
    'MCS_RESYNC_BUDGET',
    45,
    'Cloud Map calls per minute the safety-net resync may spend; with more services than it can check within --full-resync-interval, the resync takes longer instead of costing more (M6).',
    1,
    1_000_000,
  ),
  warmStart: boolOption(
    'warm-start',
    'MCS_WARM_START',
    true,
    "Keep a checkpoint of what was read from Cloud Map in the worker's namespace (one ConfigMap per Cloud Map namespace), so a worker that starts (a rollout, a new leader) reads only what the change markers say changed since, instead of every service (M9); a checkpoint that is stale, corrupted or another cluster's costs a full read of its namespace. Off: every start reads Cloud Map in full.",
  ),
  checkpointInterval: durationOption(
    'checkpoint-interval',
    'MCS_CHECKPOINT_INTERVAL',
    10_000,
    "Least time between two writes of one Cloud Map namespace's checkpoint ConfigMap (--warm-start); a checkpoint is written only when what was read there changed.",
  ),
  heartbeatInterval: durationOption(
    'heartbeat-interval',
    'MCS_HEARTBEAT_INTERVAL',
    30_000,
    'How often this cluster writes its liveness heartbeat to Cloud Map (one RegisterInstance each); peers withdraw the endpoints of a cluster silent for longer than their --dead-cluster-ttl.',
  ),
  deadClusterTtl: durationOption(
    'dead-cluster-ttl',
    'MCS_DEAD_CLUSTER_TTL',
    180_000,
    'Endpoints of a cluster whose heartbeat has not changed for this long are withdrawn from ServiceImports and EndpointSlices until it beats again (its instances stay in Cloud Map); 0s: never. At least twice --heartbeat-interval.',
  ),
  reapDeadClustersAfter: durationOption(
    'reap-dead-clusters-after',
    'MCS_REAP_DEAD_CLUSTERS_AFTER',
    0,
    "When set, this cluster deregisters the Cloud Map instances of a cluster silent for this long (never a live one); 0s: never, another cluster's instances are left alone. At least --dead-cluster-ttl.",
  ),
  quotaRetryInterval: durationOption(
    'quota-retry-interval',
    'MCS_QUOTA_RETRY_INTERVAL',
    120_000,
    'How long an export that Cloud Map holds only part of, because a quota on instances is reached (M8), waits before it tries to register the rest again (one RegisterInstance, more if it succeeds); it tries at once when the Service shrinks.',
  ),
  kubeResyncInterval: durationOption(
    'kube-resync-interval',
    'MCS_KUBE_RESYNC_INTERVAL',
    600_000,
    'How often every ServiceExport and import is reconciled again from the caches, to repair anything missed.',
  ),
  importWorkers: renamed(
    intOption(
      'import-workers',
      'MCS_IMPORT_WORKERS',
      16,
      'ServiceImports reconciled in parallel; one key is never reconciled twice at once. Each mostly waits on the Kubernetes API (a few writes per import), so an exporting cluster importing thousands of services needs more than a handful.',
      1,
      256,
    ),
    { flag: 'workers', env: 'MCS_WORKERS', removedIn: '0.3.0' },
  ),
  exportWorkers: intOption(
    'export-workers',
    'MCS_EXPORT_WORKERS',
    64,
    'ServiceExports reconciled in parallel. Each spends most of its time waiting for Cloud Map operations while the rate limits bound the calls, so enough of them keep the write quota busy (one key is never reconciled twice at once).',
    1,
    1024,
  ),
  metricsPort: intOption(
    'metrics-port',
    'MCS_METRICS_PORT',
    8080,
    'Port of /metrics (Prometheus); 0 picks a free port.',
    0,
    65535,
  ),
  healthPort: intOption(
    'health-port',
    'MCS_HEALTH_PORT',
    8081,
    'Port of /healthz and /readyz; 0 picks a free port.',
    0,
    65535,
  ),
  namespaceCleanup: boolOption(
    'namespace-cleanup',
    'MCS_NAMESPACE_CLEANUP',
    false,
    "Delete a Cloud Map namespace once it holds no services (off: namespaces may be shared with non-Kubernetes users). Never the owner's shared namespaces in a consumer account (--namespace-owner-account).",
  ),
  controllerVersion: stringOption(
    'controller-version',
    'MCS_CONTROLLER_VERSION',
    '',
    'Version written into the K8S_CONTROLLER instance attribute; empty: the package version.',
  ),
  logLevel: logLevelOption(),
};

export type WorkerOptions = OptionValues<typeof workerOptionSpecs>;

export function parseWorkerOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): WorkerOptions {
  const o = parseOptions(workerOptionSpecs, argv, env);
  if (o.cloudMapConnectTimeout < 100)
    throw new ConfigError(`--cloudmap-connect-timeout: at least 100ms, got ${o.cloudMapConnectTimeout}ms`);
  if (o.cloudMapCallTimeout < 1000)
    throw new ConfigError(`--cloudmap-call-timeout: at least 1s, got ${o.cloudMapCallTimeout}ms`);
  // A loop waiting on one call that retries to its end is not stuck: liveness must not restart it for that.
  const longestCall = longestCallMs(o.cloudMapCallTimeout);
  if (o.progressTimeout <= longestCall) {
    throw new ConfigError(
      `--progress-timeout: longer than one Cloud Map call with its retries at --cloudmap-call-timeout ${o.cloudMapCallTimeout}ms (${longestCall}ms), got ${o.progressTimeout}ms`,
    );
  }
  if (o.heartbeatInterval < 1000)
    throw new ConfigError(`--heartbeat-interval: at least 1s, got ${o.heartbeatInterval}ms`);
  // A TTL of one interval would call a live cluster silent whenever one beat is late.
  if (o.deadClusterTtl > 0 && o.deadClusterTtl < 2 * o.heartbeatInterval) {
    throw new ConfigError(
      `--dead-cluster-ttl: at least twice --heartbeat-interval (${2 * o.heartbeatInterval}ms), or 0s to never withdraw a silent cluster; got ${o.deadClusterTtl}ms`,
    );
  }
  // Only what is already withdrawn is reaped: reaping sooner would delete endpoints that are still imported.
  if (o.reapDeadClustersAfter > 0 && o.reapDeadClustersAfter < Math.max(o.deadClusterTtl, 2 * o.heartbeatInterval)) {
    throw new ConfigError(
      `--reap-dead-clusters-after: at least --dead-cluster-ttl and twice --heartbeat-interval (${Math.max(o.deadClusterTtl, 2 * o.heartbeatInterval)}ms), or 0s to never reap; got ${o.reapDeadClustersAfter}ms`,
    );
  }
  namingOf(o);
  return o;
}

/** The Cloud Map namespaces of the Kubernetes namespaces; ConfigError naming the flag to fix. */
export function namingOf(o: WorkerOptions): NamespaceNaming {
  let naming: NamespaceNaming;
  try {
    naming = namespaceNaming({
      type: o.cloudMapNamespaceType,
      dnsNamespaces: listed(o.dnsNamespaces),
      dns: {
        domain: o.dnsNamespaceDomain,
        vpc: o.dnsNamespaceVpc,
        recordTypes: o.dnsRecordTypes,
        ttlSeconds: o.dnsRecordTtl,
      },
    });
  } catch (err) {
    throw new ConfigError(
      `--cloudmap-namespace-type=${o.cloudMapNamespaceType} --dns-namespaces="${o.dnsNamespaces}": ${(err as Error).message} (set --dns-namespace-domain and --dns-namespace-vpc)`,
    );
  }
  // Only the worker creates namespaces, and a DNS one is created in a VPC.
  if (naming !== HTTP_NAMING && o.dnsNamespaceVpc === '')
    throw new ConfigError(
      '--dns-namespace-vpc: a DNS namespace is created in a VPC; give its id (vpc-...), the same in every cluster',
    );
  return naming;
}

export function workerHelp(): string {
  return formatHelp(
    'mcs-cloudmap worker: syncs ServiceExports to AWS Cloud Map and Cloud Map to ServiceImports (KEP-1645).\n--version prints the version.',
    workerOptionSpecs,
  );
}
