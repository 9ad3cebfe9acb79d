// Starts the webhook server and the reconcile worker of one cluster as host processes, from source (or from the compiled
// dist/, as the image runs them), with the Node.js flags of the Deployments' commands and the ConfigMap's settings as
// environment exactly as the Deployments' envFrom gives them, plus only what differs on a host (ports, kubeconfig, Cloud
// Map endpoint, certificate files).
import { join, resolve } from 'node:path';
import type { ManagedProcess, Supervisor } from '../testbed/supervisor.ts';
import { deploymentNodeFlags, kustomizeBase } from './manifests.ts';
import { waitFor } from '../testbed/wait.ts';

const REPO = join(import.meta.dirname, '..', '..');

/** Which code a process runs: the TypeScript sources, or `npm run build`'s output in a dist directory. */
export interface ProcessBuild {
  /** Default: the sources. A path (absolute or relative to the repository) runs `<dist>/.../main.js`. */
  dist?: string;
  /** Node.js flags before the entry point; default: those of the Deployment's command in kustomize/base (heap limits). */
  nodeArgs?: string[];
}

function entryArgs(build: ProcessBuild, deployment: string, ...path: string[]): string[] {
  const entry = build.dist === undefined ? join(REPO, ...path) : resolve(REPO, build.dist, ...path).replace(/\.ts$/, '.js');
  return [...(build.nodeArgs ?? deploymentNodeFlags(kustomizeBase(), deployment)), entry];
}

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

export interface WebhookProcessSpec extends ProcessBuild {
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
    name, command: process.execPath, args: entryArgs(spec, 'mcs-cloudmap-webhook', 'webhook', 'main.ts'), logPath: join(spec.logsDir, 'webhook.log'),
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

export interface WorkerProcessSpec extends ProcessBuild {
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

export async function startWorkerProcess(sup: Supervisor, spec: WorkerProcessSpec): Promise<HostProcess> {
  const name = `mcs-cloudmap-worker (${spec.clusterId})`;
  const proc = sup.start({
    name, command: process.execPath, args: entryArgs(spec, 'mcs-cloudmap-worker', 'src', 'worker', 'main.ts'), logPath: join(spec.logsDir, 'worker.log'),
    env: {
      ...process.env, ...spec.configEnv,
      MCS_KUBECONFIG: spec.kubeconfig, MCS_NAMESPACE: spec.namespace, MCS_IDENTITY: spec.identity ?? `${spec.clusterId}-worker-on-host`,
      MCS_CLOUDMAP_ENDPOINT: spec.cloudMapEndpoint, MCS_AWS_REGION: spec.region,
      MCS_METRICS_PORT: String(spec.metricsPort), MCS_HEALTH_PORT: String(spec.healthPort),
      // The emulator accepts any credentials; the SDK only needs some.
      AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing',
    },
  });
  const healthUrl = `http://127.0.0.1:${spec.healthPort}`;
  await ready(name, proc, `${healthUrl}/healthz`);
  return { proc, healthUrl, metricsUrl: `http://127.0.0.1:${spec.metricsPort}/metrics` };
}
