// Starts the webhook server and the reconcile worker of one cluster as host processes, from source or from the compiled
// dist/ with the Node.js flags of the Deployments' commands (or from the production image, in containers:
// ./container.ts), with the ConfigMap's settings as environment exactly as the Deployments' envFrom gives them, plus
// only what differs on a host (ports, kubeconfig, Cloud Map endpoint, certificate files).
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { containerLaunch, type Launch } from './container.ts';
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
  const entry =
    build.dist === undefined ? join(REPO, ...path) : resolve(REPO, build.dist, ...path).replace(/\.ts$/, '.js');
  return [...(build.nodeArgs ?? deploymentNodeFlags(kustomizeBase(), deployment)), entry];
}

export interface HostProcess {
  proc: ManagedProcess;
  /** Plain-HTTP URL serving /healthz, /readyz (and /metrics for the worker on its own port). */
  healthUrl: string;
  metricsUrl: string;
}

/** A container also waits for podman and the OCI runtime, which on a loaded 2-core machine takes tens of seconds. */
async function ready(name: string, proc: ManagedProcess, url: string, fromImage: FromImage | undefined): Promise<void> {
  const exited = new AbortController();
  void proc.exited.then((s) =>
    exited.abort(
      new Error(`${name} exited (${s.signal ?? `code ${s.code}`}) before it was ready; log: ${proc.logPath}`),
    ),
  );
  await waitFor(`${name} to be ready at ${url}`, async () => (await fetch(url)).ok, {
    timeoutMs: fromImage ? 120_000 : 60_000,
    intervalMs: 200,
    signal: exited.signal,
  });
}

/** Runs the processes from the image with the Deployments' commands instead of from source. */
export interface FromImage {
  image: string;
  commands: { webhook: readonly string[]; worker: readonly string[] };
  /** The testbed's directory: labels the containers so they can be removed with it. */
  testbed: string;
}

interface LaunchSpec {
  role: 'webhook' | 'worker';
  clusterId: string;
  /** The entry point in the source tree, for a host process. */
  source: string;
  env: Record<string, string>;
  /** Environment variables that name files (kubeconfig, certificates): mounted into a container. */
  files: Record<string, string>;
  logsDir: string;
  fromImage?: FromImage;
  build: ProcessBuild;
}

function launch(spec: LaunchSpec): Launch {
  if (!spec.fromImage) {
    const args = entryArgs(spec.build, `mcs-cloudmap-${spec.role}`, spec.source);
    return { command: process.execPath, args, env: { ...process.env, ...spec.env, ...spec.files } };
  }
  return containerLaunch({
    image: spec.fromImage.image,
    command: spec.fromImage.commands[spec.role],
    env: spec.env,
    files: spec.files,
    dir: spec.logsDir,
    name: `mcs-cloudmap-${spec.role}-${spec.clusterId}-${randomBytes(3).toString('hex')}`,
    testbed: spec.fromImage.testbed,
  });
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
  fromImage?: FromImage;
}

export async function startWebhookProcess(sup: Supervisor, spec: WebhookProcessSpec): Promise<HostProcess> {
  const name = `mcs-cloudmap-webhook (${spec.clusterId})`;
  const proc = sup.start({
    name,
    logPath: join(spec.logsDir, 'webhook.log'),
    ...launch({
      role: 'webhook',
      clusterId: spec.clusterId,
      source: join('src', 'webhook', 'main.ts'),
      logsDir: spec.logsDir,
      fromImage: spec.fromImage,
      build: spec,
      env: {
        ...spec.configEnv,
        MCS_BIND_ADDRESS: '127.0.0.1',
        MCS_PORT: String(spec.port),
        MCS_METRICS_PORT: String(spec.metricsPort),
      },
      files: { MCS_KUBECONFIG: spec.kubeconfig, MCS_TLS_CERT_FILE: spec.certFile, MCS_TLS_KEY_FILE: spec.keyFile },
    }),
  });
  const healthUrl = `http://127.0.0.1:${spec.metricsPort}`;
  await ready(name, proc, `${healthUrl}/readyz`, spec.fromImage);
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
  /** AWS credentials of the cluster's account; default: the testbed's single account. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  fromImage?: FromImage;
}

/**
 * The emulator accepts any credentials; the SDK only needs some. Distinctive, so end-to-end tests can check it never
 * reaches a log, an Event or a status.
 */
export const LOCAL_AWS_SECRET_ACCESS_KEY = 'local-testbed-aws-secret-never-logged';

export async function startWorkerProcess(sup: Supervisor, spec: WorkerProcessSpec): Promise<HostProcess> {
  const name = `mcs-cloudmap-worker (${spec.clusterId})`;
  const proc = sup.start({
    name,
    logPath: join(spec.logsDir, 'worker.log'),
    ...launch({
      role: 'worker',
      clusterId: spec.clusterId,
      source: join('src', 'worker', 'main.ts'),
      logsDir: spec.logsDir,
      fromImage: spec.fromImage,
      build: spec,
      env: {
        ...spec.configEnv,
        MCS_NAMESPACE: spec.namespace,
        MCS_IDENTITY: spec.identity ?? `${spec.clusterId}-worker-on-host`,
        MCS_CLOUDMAP_ENDPOINT: spec.cloudMapEndpoint,
        MCS_AWS_REGION: spec.region,
        MCS_METRICS_PORT: String(spec.metricsPort),
        MCS_HEALTH_PORT: String(spec.healthPort),
        AWS_ACCESS_KEY_ID: spec.credentials?.accessKeyId ?? 'testing',
        AWS_SECRET_ACCESS_KEY: spec.credentials?.secretAccessKey ?? LOCAL_AWS_SECRET_ACCESS_KEY,
        // The SDK puts it in the user agent as app/<id>: the emulator's request log says which replica made each call.
        AWS_SDK_UA_APP_ID: spec.identity ?? `${spec.clusterId}-worker-on-host`,
      },
      files: { MCS_KUBECONFIG: spec.kubeconfig },
    }),
  });
  const healthUrl = `http://127.0.0.1:${spec.healthPort}`;
  await ready(name, proc, `${healthUrl}/healthz`, spec.fromImage);
  return { proc, healthUrl, metricsUrl: `http://127.0.0.1:${spec.metricsPort}/metrics` };
}
