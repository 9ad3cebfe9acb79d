// Flags of the webhook server (`npm run webhook -- --help`), each with an MCS_* environment fallback.
import {
  durationOption,
  enumOption,
  formatHelp,
  intOption,
  logLevelOption,
  parseOptions,
  stringOption,
  warnDeprecated,
  type OptionSpec,
  type OptionValues,
} from '../config/options.ts';
import { WORKER_SERVICE_ACCOUNT } from '../core/names.ts';
import { CONFLICT_POLICIES } from './admission/export-conflicts.ts';
import { EXTERNAL_NAME_POLICIES } from './admission/exported-service.ts';

/**
 * Identities allowed to delete ServiceImports and MCS EndpointSlices besides the worker: the namespace controller and the
 * garbage collector (as service accounts, or as kube-controller-manager itself when it runs without per-controller
 * credentials). Refusing them would block namespace deletion and owner-reference clean-up.
 */
export const DEFAULT_SYSTEM_DELETERS = [
  'system:serviceaccount:kube-system:namespace-controller',
  'system:serviceaccount:kube-system:generic-garbage-collector',
  'system:kube-controller-manager',
];

/**
 * The largest review the apiserver sends (W6): kube-apiserver refuses write bodies over 3 MiB (twice etcd's 1.5 MiB
 * request limit, for JSON's overhead over protobuf), so an UPDATE review carries at most 3 MiB of `object` and 3 MiB of
 * `oldObject`; 1 MiB more covers the envelope (userInfo, options) and JSON escaping.
 */
export const MAX_REVIEW_BYTES = 7 * 1024 * 1024;

/** --metrics-port when the plain listener is turned off. */
export const METRICS_OFF = -1;

/**
 * The plain-HTTP probe port: a port, or `off`. 0 used to mean off here while it picks a free port in the worker; it
 * still turns the listener off, with a warning, until 0.3.0, then means what it means in the worker.
 */
function probePortOption(): OptionSpec<number> {
  const port = intOption(
    'metrics-port',
    'MCS_METRICS_PORT',
    8080,
    'Plain-HTTP port of /metrics, /healthz and /readyz for scrapers and probes; off: no such listener (0 also turns it off until 0.3.0, then picks a free port as in the worker).',
    0,
    65535,
  );
  return {
    ...port,
    parse: (raw, f) => {
      if (raw.trim().toLowerCase() === 'off') return METRICS_OFF;
      const n = port.parse(raw, f);
      if (n !== 0) return n;
      warnDeprecated(`--${f}=0 to turn the listener off`, `--${f}=off`, '0.3.0');
      return METRICS_OFF;
    },
  };
}

export const webhookOptionSpecs = {
  port: intOption(
    'port',
    'MCS_PORT',
    9443,
    'HTTPS port of /validate, /mutate, /convert, /healthz, /readyz and /metrics.',
    0,
    65535,
  ),
  // Empty: the unspecified address of whichever families the pod has, so IPv6-only and dual-stack pods are reached too.
  bindAddress: stringOption(
    'bind-address',
    'MCS_BIND_ADDRESS',
    '',
    'Address the HTTPS and metrics listeners bind to; empty: every IPv6 and IPv4 address of the pod (IPv4 only where it has no IPv6).',
  ),
  tlsCertFile: stringOption(
    'tls-cert-file',
    'MCS_TLS_CERT_FILE',
    '/var/run/mcs-cloudmap/tls/tls.crt',
    'PEM serving certificate (chain); re-read when it changes, without a restart.',
  ),
  tlsKeyFile: stringOption(
    'tls-key-file',
    'MCS_TLS_KEY_FILE',
    '/var/run/mcs-cloudmap/tls/tls.key',
    'PEM private key of the serving certificate; re-read with it.',
  ),
  tlsReloadInterval: durationOption(
    'tls-reload-interval',
    'MCS_TLS_RELOAD_INTERVAL',
    5_000,
    'How often the certificate and key files are checked for changes.',
  ),
  conflictPolicy: enumOption(
    'conflict-policy',
    'MCS_CONFLICT_POLICY',
    'Warn',
    CONFLICT_POLICIES,
    "What to do when an export conflicts with the ClusterSet's ServiceImport (X1-X3): Warn admits with warnings, Reject refuses.",
  ),
  externalNamePolicy: enumOption(
    'external-name-policy',
    'MCS_EXTERNAL_NAME_POLICY',
    'Warn',
    EXTERNAL_NAME_POLICIES,
    'What to do with a ServiceExport of an ExternalName Service (E5): Warn admits it with a warning and the worker sets Valid=False (InvalidServiceType), as the MCS conformance suite requires; Reject refuses it.',
  ),
  workerServiceAccount: stringOption(
    'worker-service-account',
    'MCS_WORKER_SERVICE_ACCOUNT',
    WORKER_SERVICE_ACCOUNT,
    'User name of the reconcile worker: the only identity allowed to write ServiceImports and MCS EndpointSlices (I6).',
  ),
  systemDeleters: stringOption(
    'system-deleters',
    'MCS_SYSTEM_DELETERS',
    DEFAULT_SYSTEM_DELETERS.join(','),
    'Comma-separated user names also allowed to delete ServiceImports and MCS EndpointSlices (namespace deletion, garbage collection).',
  ),
  metricsPort: probePortOption(),
  kubeconfig: stringOption(
    'kubeconfig',
    'MCS_KUBECONFIG',
    '',
    'Path of the kubeconfig; empty: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account.',
  ),
  maxRequestBytes: intOption(
    'max-request-bytes',
    'MCS_MAX_REQUEST_BYTES',
    MAX_REVIEW_BYTES,
    'Largest request body accepted; larger ones get 413. The default fits the largest review the apiserver can send (docs/webhooks.md).',
    1024,
  ),
  shutdownDelay: durationOption(
    'shutdown-delay',
    'MCS_SHUTDOWN_DELAY',
    5_000,
    'On SIGTERM, how long to report unready before closing the listener, so endpoints stop sending requests first.',
  ),
  shutdownTimeout: durationOption(
    'shutdown-timeout',
    'MCS_SHUTDOWN_TIMEOUT',
    30_000,
    'On SIGTERM, how long in-flight requests may take before connections are closed.',
  ),
  cacheSyncGrace: durationOption(
    'cache-sync-grace',
    'MCS_CACHE_SYNC_GRACE',
    30_000,
    'How long /readyz waits for the informer caches before reporting ready anyway, refusing checks that need the missing caches as "still loading" (0: wait forever). Lets the apiserver reach conversion when listing needs it.',
  ),
  logLevel: logLevelOption(),
};

export type WebhookOptions = OptionValues<typeof webhookOptionSpecs>;

export function parseWebhookOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): WebhookOptions {
  return parseOptions(webhookOptionSpecs, argv, env);
}

export function webhookHelp(): string {
  return formatHelp(
    'mcs-cloudmap webhook: admission (ServiceExport, ClusterProperty, ServiceImport, EndpointSlice) and CRD conversion.\n--version prints the version.',
    webhookOptionSpecs,
  );
}

/** The comma-separated --system-deleters value as a list. */
export function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
