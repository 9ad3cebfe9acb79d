// Starts the webhook server and the reconcile worker of one cluster as host processes, from source, with the ConfigMap's
// settings as environment exactly as the Deployments' envFrom gives them, plus only what differs on a host (ports,
// kubeconfig, Cloud Map endpoint, certificate files).
import { join } from 'node:path';
import type { ManagedProcess, Supervisor } from '../testbed/supervisor.ts';
import { waitFor } from '../testbed/wait.ts';

const REPO = join(import.meta.dirname, '..', '..');

export interface HostProcess {
  proc: ManagedProcess;
  /** Plain-HTTP URL serving /healthz, /readyz (and /metrics for the worker on its own port). */
  healthUrl: string;
  metricsUrl: string;
}

async function ready(name: string, proc: ManagedProcess, url: string): Promise<void> {
  const exited = new AbortController();
  void proc.exited.then((s) => exited.abort(new Error(`${name} exited (${s.signal ?? `code ${s.code}`}) before it was ready; log: ${proc.logPath}`)));
  await waitFor(`${name} to be ready at ${url}`, async () => (await fetch(url)).ok, { timeoutMs: 60_000, intervalMs: 200, signal: exited.signal });
}

export interface WebhookProcessSpec {
  clusterId: string;
  configEnv: Record<string, string>;
  kubeconfig: string;
  certFile: string;
  keyFile: string;
  port: number;
  metricsPort: number;
  logsDir: string;
}

export async function startWebhookProcess(sup: Supervisor, spec: WebhookProcessSpec): Promise<HostProcess> {
  const name = `mcs-cloudmap-webhook (${spec.clusterId})`;
  const proc = sup.start({
    name, command: process.execPath, args: [join(REPO, 'webhook', 'main.ts')], logPath: join(spec.logsDir, 'webhook.log'),
    env: {
      ...process.env, ...spec.configEnv,
      MCS_KUBECONFIG: spec.kubeconfig, MCS_BIND_ADDRESS: '127.0.0.1', MCS_PORT: String(spec.port), MCS_METRICS_PORT: String(spec.metricsPort),
      MCS_TLS_CERT_FILE: spec.certFile, MCS_TLS_KEY_FILE: spec.keyFile,
    },
  });
  const healthUrl = `http://127.0.0.1:${spec.metricsPort}`;
  await ready(name, proc, `${healthUrl}/readyz`);
  return { proc, healthUrl, metricsUrl: `${healthUrl}/metrics` };
}

export interface WorkerProcessSpec {
  clusterId: string;
  configEnv: Record<string, string>;
  kubeconfig: string;
  namespace: string;
  cloudMapEndpoint: string;
  region: string;
  metricsPort: number;
  healthPort: number;
  logsDir: string;
  /** Lease holder identity; default `<clusterId>-worker-on-host`. A second replica needs its own. */
  identity?: string;
}

/**
 * The emulator accepts any credentials; the SDK only needs some. Distinctive, so end-to-end tests can check it never
 * reaches a log, an Event or a status.
 */
export const LOCAL_AWS_SECRET_ACCESS_KEY = 'local-testbed-aws-secret-never-logged';

export async function startWorkerProcess(sup: Supervisor, spec: WorkerProcessSpec): Promise<HostProcess> {
  const name = `mcs-cloudmap-worker (${spec.clusterId})`;
  const proc = sup.start({
    name, command: process.execPath, args: [join(REPO, 'src', 'worker', 'main.ts')], logPath: join(spec.logsDir, 'worker.log'),
    env: {
      ...process.env, ...spec.configEnv,
      MCS_KUBECONFIG: spec.kubeconfig, MCS_NAMESPACE: spec.namespace, MCS_IDENTITY: spec.identity ?? `${spec.clusterId}-worker-on-host`,
      MCS_CLOUDMAP_ENDPOINT: spec.cloudMapEndpoint, MCS_AWS_REGION: spec.region,
      MCS_METRICS_PORT: String(spec.metricsPort), MCS_HEALTH_PORT: String(spec.healthPort),
      AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: LOCAL_AWS_SECRET_ACCESS_KEY,
    },
  });
  const healthUrl = `http://127.0.0.1:${spec.healthPort}`;
  await ready(name, proc, `${healthUrl}/healthz`);
  return { proc, healthUrl, metricsUrl: `http://127.0.0.1:${spec.metricsPort}/metrics` };
}
