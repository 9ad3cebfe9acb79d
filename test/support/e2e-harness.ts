// End-to-end harness: a 2-cluster ClusterSet with mcs-cloudmap installed as in production (hack/local: CRDs, RBAC,
// ConfigMap settings, the webhook and the worker of each cluster as host processes under their own service accounts),
// the ClusterProperties of every cluster, and helpers to read what the workers wrote. Workers can be stopped and
// started again (restart and missing-identity cases); their Cloud Map calls are read from their /metrics.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { CustomObjectsApi, DiscoveryV1Api, type KubeConfig, type V1EndpointSlice } from '@kubernetes/client-node';
import { clusterProperties } from '../../hack/demo/cluster-properties.ts';
import { deployLocally, type LocalDeployment } from '../../hack/local/deploy.ts';
import { configMapEnv, kustomizeBase } from '../../hack/local/manifests.ts';
import { LOCAL_AWS_SECRET_ACCESS_KEY, startWorkerProcess, type HostProcess } from '../../hack/local/processes.ts';
import type { ClusterSetOptions, TestCluster, TestClusterSet } from '../../hack/testbed/index.ts';
import { freePorts } from '../../hack/testbed/ports.ts';
import { Supervisor, type ManagedProcess } from '../../hack/testbed/supervisor.ts';
import { eventually } from './eventually.ts';
import {
  MCS_GROUP,
  SERVICE_EXPORT_PLURAL,
  SERVICE_IMPORT_PLURAL,
  STORAGE_VERSION,
  SYSTEM_NAMESPACE,
} from '../../src/core/names.ts';
import type { Condition } from '../../src/core/types.ts';
import { cloudMapClientConfig } from './cloudmap.ts';
import { credentialLeaks, credentialsUnder, filesUnder, type Text } from './credential-leaks.ts';
import { removeNamespaces } from './workloads.ts';
import { CLUSTERSET_START_TIMEOUT_MS, withClusterSet, withOwnClusterSet } from './clusterset.ts';
import { kubectlBinary } from '../../hack/testbed/paths.ts';

/** Webhook configurations the local install registers; removed afterwards so later suites are not guarded by a dead server. */
const WEBHOOK_CONFIGURATIONS = [
  'validatingwebhookconfiguration/mcs-cloudmap-validating',
  'mutatingwebhookconfiguration/mcs-cloudmap-mutating',
];

export interface ObjectWithStatus {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    generation?: number;
    creationTimestamp?: string;
    finalizers?: string[];
  };
  spec: Record<string, unknown>;
  status?: { conditions?: Condition[]; clusters?: Array<{ cluster: string }> };
}

export interface ServiceImportView extends ObjectWithStatus {
  spec: {
    type: string;
    ips?: string[];
    ports: Array<{ name?: string; port: number; protocol?: string }>;
    [field: string]: unknown;
  };
}

export class E2ECluster {
  readonly cluster: TestCluster;
  readonly kubeConfig: KubeConfig;
  worker: HostProcess;
  webhook: HostProcess;
  readonly #custom: CustomObjectsApi;
  readonly #discovery: DiscoveryV1Api;

  constructor(cluster: TestCluster, install: { worker: HostProcess; webhook: HostProcess }) {
    this.cluster = cluster;
    this.worker = install.worker;
    this.webhook = install.webhook;
    this.kubeConfig = cluster.kubeConfig();
    this.#custom = this.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#discovery = this.kubeConfig.makeApiClient(DiscoveryV1Api);
  }

  get id(): string {
    return this.cluster.id;
  }

  /** kubectl as the cluster admin; throws with kubectl's message on failure. */
  kubectl(args: readonly string[], input?: string): string {
    try {
      // Room for an apiserver's /metrics (several MiB).
      return execFileSync(kubectlBinary(), ['--kubeconfig', this.cluster.kubeconfigPath, ...args], {
        encoding: 'utf8',
        input,
        stdio: ['pipe', 'pipe', 'pipe'],
        maxBuffer: 64 * 2 ** 20,
      });
    } catch (err) {
      throw new Error(
        `kubectl ${args.join(' ')} on ${this.id}: ${((err as { stderr?: string }).stderr ?? String(err)).trim()}`,
        { cause: err },
      );
    }
  }

  /** kubectl apply of objects (JSON) or YAML text. */
  apply(objects: readonly object[] | string): string {
    const input =
      typeof objects === 'string' ? objects : JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
    return this.kubectl(['apply', '-f', '-'], input);
  }

  async #custom404<T>(read: () => Promise<unknown>): Promise<T | undefined> {
    try {
      return (await read()) as T;
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  }

  serviceImport(namespace: string, name: string): Promise<ServiceImportView | undefined> {
    return this.#custom404(() =>
      this.#custom.getNamespacedCustomObject({
        group: MCS_GROUP,
        version: STORAGE_VERSION,
        namespace,
        plural: SERVICE_IMPORT_PLURAL,
        name,
      }),
    );
  }

  serviceExport(namespace: string, name: string): Promise<ObjectWithStatus | undefined> {
    return this.#custom404(() =>
      this.#custom.getNamespacedCustomObject({
        group: MCS_GROUP,
        version: STORAGE_VERSION,
        namespace,
        plural: SERVICE_EXPORT_PLURAL,
        name,
      }),
    );
  }

  async endpointSlices(namespace: string, labelSelector: string): Promise<V1EndpointSlice[]> {
    return (await this.#discovery.listNamespacedEndpointSlice({ namespace, labelSelector })).items;
  }

  /** Cloud Map calls this cluster's current worker made, by API (every outcome), from its /metrics. */
  async cloudMapCalls(): Promise<Record<string, number>> {
    const text = await (await fetch(this.worker.metricsUrl)).text();
    const calls: Record<string, number> = {};
    for (const m of text.matchAll(/^mcs_cloudmap_cloudmap_calls_total\{api="([^"]+)",[^}]*\} (\d+)$/gm)) {
      calls[m[1]!] = (calls[m[1]!] ?? 0) + Number(m[2]);
    }
    return calls;
  }

  /** One metric's value (summed over its label sets) from the current worker's /metrics. */
  async metric(name: string, labels = ''): Promise<number> {
    const text = await (await fetch(this.worker.metricsUrl)).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith(`${name}{`) ? line.includes(labels) : line.startsWith(`${name} `))
        sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }
}

/** Where a worker finds Cloud Map: its Region, the endpoint (e.g. a proxy in front of the emulator), its account. */
export interface WorkerCloudMap {
  region?: string;
  endpoint?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export interface E2E {
  cs: TestClusterSet;
  cls1: E2ECluster;
  cls2: E2ECluster;
  clusters: E2ECluster[];
  cloudMap: ServiceDiscoveryClient;
  /** Stops the cluster's worker (graceful, as on a pod deletion). */
  readonly stopWorker: (cluster: E2ECluster) => Promise<void>;
  /** Kills the cluster's worker with SIGKILL (a node failure, an OOM kill): nothing is flushed or released. */
  readonly killWorker: (cluster: E2ECluster) => Promise<void>;
  /**
   * Starts a new worker process for the cluster, configured as the first one plus `env` (MCS_* settings) and, when
   * given, its own Cloud Map Region, endpoint and account credentials; waits until it is healthy.
   */
  readonly startWorker: (cluster: E2ECluster, env?: Record<string, string>, cloudMap?: WorkerCloudMap) => Promise<void>;
  /** Starts another replica of the cluster's worker with Lease identity `identity`, next to the current one. */
  readonly startReplica: (cluster: E2ECluster, identity: string) => Promise<HostProcess>;
  /** Stops the cluster's webhook server (every replica: the local install runs one). */
  readonly stopWebhook: (cluster: E2ECluster) => Promise<void>;
  /** Starts the cluster's webhook server again as it was started (same port, certificate, settings); waits until ready. */
  readonly startWebhook: (cluster: E2ECluster) => Promise<void>;
}

/** Ends a host process with `signal` (not reported as a crash) and waits until it has exited. */
async function endProcess(proc: ManagedProcess, signal: NodeJS.Signals): Promise<void> {
  proc.stopping = true;
  proc.signalGroup(signal);
  await proc.exited;
}

/** The ClusterProperties of `cluster` (C1), applied as the cluster admin. */
export function applyClusterProperties(cluster: E2ECluster, clustersetId: string): void {
  cluster.apply(clusterProperties(cluster.id, clustersetId));
}

/** Every Event of the cluster, and the status of every ServiceExport and ServiceImport, as text. */
function eventsAndStatuses(cluster: E2ECluster): Text[] {
  const events = cluster.kubectl(['get', 'events', '-A', '-o', 'json']);
  const objects = JSON.parse(
    cluster.kubectl([
      'get',
      `${SERVICE_EXPORT_PLURAL}.${MCS_GROUP},${SERVICE_IMPORT_PLURAL}.${MCS_GROUP}`,
      '-A',
      '-o',
      'json',
    ]),
  ) as { items: Array<{ kind: string; metadata: { namespace: string; name: string }; status?: unknown }> };
  return [
    { where: `Events of ${cluster.id}`, text: events },
    ...objects.items.map((o) => ({
      where: `status of ${o.kind} ${o.metadata.namespace}/${o.metadata.name} in ${cluster.id}`,
      text: JSON.stringify(o.status ?? {}),
    })),
  ];
}

/**
 * No ServiceAccount token, private key or AWS secret key of the run in any component log (the whole run's so far: the
 * logs are appended to), Event or status.
 */
function assertNoCredentialLeaks(dir: string, seen: Text[]): void {
  const logs = filesUnder(dir)
    .filter((f) => /\/(mcs-cloudmap|e2e-workers)\/.*\.log$/.test(f))
    .map((f) => ({ where: f, text: readFileSync(f, 'utf8') }));
  const credentials = [
    ...credentialsUnder(dir),
    { what: 'the AWS secret access key', value: LOCAL_AWS_SECRET_ACCESS_KEY },
  ];
  const leaks = credentialLeaks([...logs, ...seen], credentials);
  console.log(
    `[e2e] credential scan: ${credentials.length} credentials in ${logs.length} logs and ${seen.length} Event lists and statuses: ${leaks.length} found`,
  );
  if (leaks.length > 0) throw new Error(`credentials leaked:\n${leaks.join('\n')}`);
}

export interface E2EOptions {
  /** A ClusterSet of the suite's own with these options; default: the run's shared one. */
  clusterSet?: ClusterSetOptions;
  /** Namespaces the suite uses: unexported and deleted in every cluster after it, while the workers still run. */
  namespaces?: string[];
  /** MCS_* settings given to every process of every cluster, over the kustomize ConfigMap's (the same everywhere). */
  configEnv?: Record<string, string>;
}

/**
 * Call inside describe(): a ClusterSet with mcs-cloudmap deployed and ClusterProperties set, for the suite's tests.
 */
export function withE2E(options: E2EOptions = {}): () => E2E {
  let e2e: E2E | undefined;
  let deployment: LocalDeployment | undefined;
  let restarted: Supervisor | undefined;
  // Registered before the ClusterSet's own hooks so that it runs first: a suite's ClusterSet stops in its after hook.
  after(async function () {
    // Each namespace is unexported and deleted in every cluster, one after the other.
    this.timeout(180_000 + 15_000 * (options.namespaces?.length ?? 0));
    // Read before the namespaces (and their Events) go; checked once the processes have flushed their logs.
    const seen = e2e ? e2e.clusters.flatMap(eventsAndStatuses) : [];
    for (const namespace of options.namespaces ?? []) if (e2e) await removeNamespaces(e2e.clusters, namespace);
    await deployment?.stop();
    await restarted?.stopAll();
    e2e?.cloudMap.destroy();
    for (const c of e2e?.clusters ?? []) c.kubectl(['delete', '--ignore-not-found', ...WEBHOOK_CONFIGURATIONS]);
    if (e2e) assertNoCredentialLeaks(e2e.cs.dir, seen);
  });
  const getClusterSet = options.clusterSet === undefined ? withClusterSet() : withOwnClusterSet(options.clusterSet);
  before(async function () {
    this.timeout(CLUSTERSET_START_TIMEOUT_MS);
    const cs = getClusterSet();
    const dir = join(cs.dir, 'e2e-workers');
    mkdirSync(dir, { recursive: true });
    restarted = new Supervisor(dir);
    // A webhook left registered by an earlier suite would refuse every guarded write while its server is gone.
    for (const c of cs.clusters)
      execFileSync(
        kubectlBinary(),
        ['--kubeconfig', c.kubeconfigPath, 'delete', '--ignore-not-found', ...WEBHOOK_CONFIGURATIONS],
        { stdio: 'pipe' },
      );
    // The suite's settings; MCS_E2E_LOG_LEVEL=debug makes the processes' logs (kept under the ClusterSet's directory on
    // failure) verbose.
    const settings: Record<string, string> = {
      ...options.configEnv,
      ...(process.env.MCS_E2E_LOG_LEVEL ? { MCS_LOG_LEVEL: process.env.MCS_E2E_LOG_LEVEL } : {}),
    };
    deployment = await deployLocally(cs, { configEnv: settings });
    const clusters = cs.clusters.map((c, i) => new E2ECluster(c, deployment!.installs[i]!));
    for (const c of clusters) applyClusterProperties(c, cs.clustersetId);
    const configEnv = { ...configMapEnv(kustomizeBase()), ...settings };
    let generation = 0;
    const startReplica = async (
      cluster: E2ECluster,
      identity: string,
      env: Record<string, string> = {},
      cloudMap: WorkerCloudMap = {},
    ): Promise<HostProcess> => {
      const [metricsPort, healthPort] = (await freePorts(2)) as [number, number];
      const logsDir = join(dir, `${cluster.id}-${++generation}`);
      mkdirSync(logsDir, { recursive: true });
      return startWorkerProcess(restarted!, {
        clusterId: cluster.id,
        configEnv: { ...configEnv, ...env },
        namespace: SYSTEM_NAMESPACE,
        metricsPort,
        healthPort,
        logsDir,
        identity,
        cloudMapEndpoint: cloudMap.endpoint ?? cs.cloudMapEndpoint,
        region: cloudMap.region ?? cs.region,
        ...(cloudMap.credentials ? { credentials: cloudMap.credentials } : {}),
        kubeconfig: join(cs.dir, 'mcs-cloudmap', cluster.id, 'worker.kubeconfig'),
      });
    };
    e2e = {
      cs,
      clusters,
      cls1: clusters[0]!,
      cls2: clusters[1]!,
      cloudMap: new ServiceDiscoveryClient(cloudMapClientConfig(cs)),
      stopWorker: (cluster) => endProcess(cluster.worker.proc, 'SIGTERM'),
      killWorker: (cluster) => endProcess(cluster.worker.proc, 'SIGKILL'),
      startReplica: (cluster, identity) => startReplica(cluster, identity),
      stopWebhook: (cluster) => endProcess(cluster.webhook.proc, 'SIGTERM'),
      async startWebhook(cluster) {
        const proc = restarted!.start(cluster.webhook.proc.spec);
        await proc.waitReady(
          '/readyz answers ok',
          async () => (await fetch(`${cluster.webhook.healthUrl}/readyz`)).ok,
          60_000,
        );
        cluster.webhook = { ...cluster.webhook, proc };
      },
      async startWorker(cluster, env, cloudMap) {
        cluster.worker = await startReplica(cluster, `${cluster.id}-worker-on-host`, env, cloudMap);
      },
    };
  });
  return () => {
    if (!e2e) throw new Error('the e2e ClusterSet is not ready: call withE2E() inside describe(), not inside a test');
    return e2e;
  };
}

/**
 * For tests that run cls1's worker with other settings than the suite's: registers an afterEach that, when the test
 * last called the returned function with true (settings changed) rather than false (put back), starts cls1's worker
 * again as the suite does, so later tests and the suite's clean-up (unexporting through that worker) see the usual
 * settings even after a failure.
 */
export function restoreCls1WorkerAfterEach(e2e: () => E2E): (settingsChanged: boolean) => void {
  let changed = false;
  afterEach(async function () {
    this.timeout(60_000);
    if (!changed) return;
    await e2e().stopWorker(e2e().cls1);
    await e2e().startWorker(e2e().cls1);
    changed = false;
  });
  return (settingsChanged) => {
    changed = settingsChanged;
  };
}

/** One Cloud Map call, retried while the emulator's request quotas (shared with the workers) throttle it. */
export async function retried<T>(what: string, send: () => Promise<T>): Promise<T> {
  let out: { value: T } | undefined;
  await eventually(what, async () => {
    out = { value: await send() };
    return true;
  });
  return out!.value;
}

export function condition(
  object: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined {
  return object?.status?.conditions?.find((c) => c.type === type);
}
