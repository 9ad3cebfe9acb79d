// Installs mcs-cloudmap into every cluster of a testbed ClusterSet with both processes running on the host (from source,
// or from the production image in containers on the host network): CRDs, namespace, RBAC and ConfigMap from
// kustomize/base; each process under its own service account; webhooks and CRD conversion registered with a throwaway
// CA. Used by the demo and by end-to-end tests. `startConversionWebhook` installs only the webhook server and the CRDs'
// conversion in one cluster, for the DNS tests: CoreDNS reads ServiceImports as v1alpha1, through conversion.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SYSTEM_NAMESPACE } from '../../src/core/names.ts';
import { clientConfig, CONVERT_PATH } from '../../src/webhook/registration/client-config.ts';
import { makeDevCertificates } from './dev-certificates.ts';
import type { TestCluster } from '../testbed/cluster.ts';
import type { TestClusterSet } from '../testbed/clusterset.ts';
import { freePorts } from '../testbed/ports.ts';
import { Supervisor, type ManagedProcess } from '../testbed/supervisor.ts';
import { removeContainers } from './container.ts';
import { applyManifests, pointConversionAt, serviceAccountKubeconfig, waitForCrds } from './kubectl.ts';
import { configMapEnv, hostInstallManifests, kustomizeBase, type Manifest } from './manifests.ts';
import { startWebhookProcess, startWorkerProcess, type FromImage, type HostProcess } from './processes.ts';

/** The Deployments of kustomize/base, each running under the ServiceAccount of its own name. */
const WEBHOOK_SA = 'mcs-cloudmap-webhook';
const WORKER_SA = 'mcs-cloudmap-worker';

export interface LocalInstall {
  clusterId: string;
  webhook: HostProcess;
  worker: HostProcess;
  webhookUrl: string;
}

export interface LocalDeployment {
  installs: LocalInstall[];
  /** Stops the host processes (the ClusterSet itself is stopped by its owner). */
  stop(): Promise<void>;
}

/** The command of a Deployment's first container in kustomize/base. */
function deploymentCommand(base: Manifest[], name: string): string[] {
  const d = base.find((m) => m.kind === 'Deployment' && m.metadata.name === name) as
    | { spec?: { template: { spec: { containers: { command?: string[] }[] } } } }
    | undefined;
  const command = d?.spec?.template.spec.containers[0]?.command;
  if (!command)
    throw new Error(`kustomize/base has no Deployment ${name} with a command: cannot run it from the image`);
  return command;
}

export interface DeployOptions {
  log?: (line: string) => void;
  configEnv?: Record<string, string>;
  /** Run both processes from this image (`npm run image`) with the Deployments' commands instead of from source. */
  image?: string;
}

/** The CRDs, namespace, RBAC and ConfigMap of the base with conversion aimed at a webhook server on the host, and that server. */
async function startHostWebhook(
  sup: Supervisor,
  cluster: TestCluster,
  cdir: string,
  base: Manifest[],
  configEnv: Record<string, string>,
  fromImage?: FromImage,
): Promise<{
  webhook: HostProcess;
  webhookUrl: string;
  configurations: Manifest[];
}> {
  const [port, metricsPort] = (await freePorts(2)) as [number, number];
  const certs = makeDevCertificates(cdir, ['127.0.0.1', 'localhost']);
  const webhookUrl = `https://127.0.0.1:${port}`;
  const target = { url: webhookUrl, caBundle: certs.caBundle };
  const manifests = hostInstallManifests(base, target);
  // CRDs and RBAC first; the webhook configurations only once the server answers, or every guarded write would fail.
  const setup = manifests.filter((m) => !m.kind.endsWith('WebhookConfiguration'));
  pointConversionAt(cluster.kubeconfigPath, setup, clientConfig(target, CONVERT_PATH));
  applyManifests(cluster.kubeconfigPath, setup);
  waitForCrds(cluster.kubeconfigPath, setup);
  const webhook = await startWebhookProcess(sup, {
    clusterId: cluster.id,
    configEnv,
    port,
    metricsPort,
    certFile: certs.certFile,
    keyFile: certs.keyFile,
    logsDir: cdir,
    fromImage,
    kubeconfig: serviceAccountKubeconfig(
      cluster.kubeconfigPath,
      SYSTEM_NAMESPACE,
      WEBHOOK_SA,
      join(cdir, 'webhook.kubeconfig'),
    ),
  });
  return { webhook, webhookUrl, configurations: manifests.filter((m) => m.kind.endsWith('WebhookConfiguration')) };
}

export async function deployLocally(clusterSet: TestClusterSet, opts: DeployOptions = {}): Promise<LocalDeployment> {
  const log = opts.log ?? (() => {});
  const base = kustomizeBase();
  const configEnv = { ...configMapEnv(base), ...opts.configEnv };
  const dir = join(clusterSet.dir, 'mcs-cloudmap');
  mkdirSync(dir, { recursive: true });
  const fromImage: FromImage | undefined =
    opts.image === undefined
      ? undefined
      : {
          image: opts.image,
          testbed: clusterSet.dir,
          commands: { webhook: deploymentCommand(base, WEBHOOK_SA), worker: deploymentCommand(base, WORKER_SA) },
        };
  const sup = new Supervisor(dir, {
    onUnexpectedExit: (p, s) =>
      log(`${p.name} exited unexpectedly (${s.signal ?? `code ${s.code}`}); log: ${p.logPath}`),
  });
  const stop = async () => {
    await sup.stopAll();
    if (fromImage) await removeContainers(fromImage.testbed);
  };
  try {
    const installs = await Promise.all(
      clusterSet.clusters.map(async (cluster) => {
        const cdir = join(dir, cluster.id);
        mkdirSync(cdir, { recursive: true });
        const { webhook, webhookUrl, configurations } = await startHostWebhook(
          sup,
          cluster,
          cdir,
          base,
          configEnv,
          fromImage,
        );
        applyManifests(cluster.kubeconfigPath, configurations);
        const [workerMetrics, workerHealth] = (await freePorts(2)) as [number, number];
        const worker = await startWorkerProcess(sup, {
          clusterId: cluster.id,
          configEnv,
          namespace: SYSTEM_NAMESPACE,
          metricsPort: workerMetrics,
          healthPort: workerHealth,
          logsDir: cdir,
          fromImage,
          cloudMapEndpoint: clusterSet.cloudMapEndpoint,
          region: clusterSet.region,
          kubeconfig: serviceAccountKubeconfig(
            cluster.kubeconfigPath,
            SYSTEM_NAMESPACE,
            WORKER_SA,
            join(cdir, 'worker.kubeconfig'),
          ),
        });
        const where = fromImage ? `containers of ${fromImage.image}` : 'host processes';
        log(
          `${cluster.id}: webhook at ${webhookUrl}, worker health at ${worker.healthUrl}, as ${where} (logs in ${cdir})`,
        );
        return { clusterId: cluster.id, webhook, worker, webhookUrl };
      }),
    );
    return { installs, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface ConversionWebhook {
  /** Stops the server as an outage would: the apiserver then fails every read that needs conversion. */
  pause(): Promise<void>;
  /** Starts it again as it was started, and waits until it is ready. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The webhook server of one cluster on the host with the base's CRDs converting through it, and no admission webhook
 * configurations: a test may then write ServiceImports and MCS EndpointSlices itself, and v1alpha1 readers (stock
 * CoreDNS) read them through our conversion.
 */
export async function startConversionWebhook(cluster: TestCluster, dir: string): Promise<ConversionWebhook> {
  mkdirSync(dir, { recursive: true });
  const base = kustomizeBase();
  const sup = new Supervisor(dir);
  let proc: ManagedProcess;
  let readyUrl: string;
  try {
    const { webhook } = await startHostWebhook(sup, cluster, dir, base, configMapEnv(base));
    proc = webhook.proc;
    readyUrl = `${webhook.healthUrl}/readyz`;
  } catch (err) {
    await sup.stopAll();
    throw err;
  }
  return {
    pause: () => sup.stop(proc),
    async resume() {
      proc = sup.start(proc.spec);
      await proc.waitReady('/readyz answers ok', async () => (await fetch(readyUrl)).ok, 60_000);
    },
    stop: () => sup.stopAll(),
  };
}
