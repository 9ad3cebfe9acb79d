// What the end-to-end tests deploy: Deployments, Services and ServiceExports as plain objects, and the reads that
// say what a cluster runs (pod IPs). Namespaces are created and removed through test/support/kube.ts.
import { CoreV1Api } from '@kubernetes/client-node';
import { logTail } from '../../hack/testbed/wait.ts';
import { LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER, MCS_GROUP, STORAGE_VERSION } from '../../src/core/names.ts';
import { createNamespace, deleteNamespace } from './kube.ts';
import { condition, type E2ECluster } from './e2e-harness.ts';
import { eventually } from './eventually.ts';

export interface PortSpec {
  name?: string;
  port: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
}

/** `nodeName` pins every pod to one node (pods on the same node of two clusters sharing a pod CIDR get the same IPs). */
export function deployment(
  namespace: string,
  name: string,
  replicas: number,
  ports: readonly PortSpec[] = [{ port: 80 }],
  nodeName?: string,
): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          ...(nodeName === undefined ? {} : { nodeName }),
          containers: [
            {
              name: 'app',
              image: 'nginx',
              ports: ports.map((p) => ({ containerPort: p.port, protocol: p.protocol ?? 'TCP' })),
            },
          ],
        },
      },
    },
  };
}

export function service(
  namespace: string,
  name: string,
  opts: { ports?: readonly PortSpec[]; headless?: boolean; selector?: Record<string, string> } = {},
): object {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: {
      selector: opts.selector ?? { app: name },
      ...(opts.headless ? { clusterIP: 'None' } : {}),
      ports: (opts.ports ?? [{ port: 80 }]).map((p) => ({ ...p, protocol: p.protocol ?? 'TCP', targetPort: p.port })),
    },
  };
}

export function serviceExport(namespace: string, name: string): object {
  return { apiVersion: `${MCS_GROUP}/${STORAGE_VERSION}`, kind: 'ServiceExport', metadata: { name, namespace } };
}

/** IPs of the Running pods labelled app=<app>, sorted. */
export async function runningPodIps(cluster: E2ECluster, namespace: string, app: string): Promise<string[]> {
  const pods = await cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace, labelSelector: `app=${app}` });
  return pods.items
    .filter((p) => p.status?.phase === 'Running' && p.status.podIP && !p.metadata?.deletionTimestamp)
    .map((p) => p.status!.podIP!)
    .sort();
}

/** Imported endpoints of `name` by source cluster: cluster id → sorted addresses. */
export async function importedBySource(
  cluster: E2ECluster,
  name: string,
  namespace: string,
): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const slice of await cluster.endpointSlices(namespace, `${LABEL_SERVICE_NAME}=${name}`)) {
    const source = slice.metadata!.labels![LABEL_SOURCE_CLUSTER]!;
    out[source] = [...(out[source] ?? []), ...(slice.endpoints ?? []).map((e) => e.addresses[0]!)].sort();
  }
  return out;
}

/** Deploys app `name` with `replicas` pods and its Service in `namespace` of `cluster`; returns the pod IPs once running. */
export async function runApp(
  cluster: E2ECluster,
  namespace: string,
  name: string,
  replicas: number,
  opts: { ports?: PortSpec[]; headless?: boolean } = {},
): Promise<string[]> {
  cluster.apply([deployment(namespace, name, replicas, opts.ports), service(namespace, name, opts)]);
  let ips: string[] = [];
  await eventually(
    `${replicas} running ${name} pods in ${cluster.id}`,
    async () => (ips = await runningPodIps(cluster, namespace, name)).length === replicas,
  );
  return ips;
}

/** Exports `namespace/name` from `cluster` and waits for its ServiceExport to be Ready. */
export async function exportReady(cluster: E2ECluster, namespace: string, name: string): Promise<void> {
  cluster.apply([serviceExport(namespace, name)]);
  await eventually(
    `${cluster.id}: ServiceExport ${name} Ready`,
    async () => condition(await cluster.serviceExport(namespace, name), 'Ready')?.status === 'True',
  );
}

export async function createNamespaces(clusters: readonly E2ECluster[], namespace: string): Promise<void> {
  await Promise.all(clusters.map((c) => createNamespace(c.kubeConfig, namespace)));
}

/**
 * Unexports everything in `namespace` while the workers run (so their finalizers clean Cloud Map up), then deletes the
 * namespace in every cluster.
 */
export async function removeNamespaces(clusters: readonly E2ECluster[], namespace: string): Promise<void> {
  for (const c of clusters) {
    try {
      c.kubectl(['delete', 'serviceexports', '--all', '-n', namespace, '--ignore-not-found', '--timeout=60s']);
    } catch (err) {
      throw new Error(
        `${(err as Error).message}\n--- last lines of ${c.worker.proc.logPath} ---\n${logTail(c.worker.proc.logPath, 40)}`,
        { cause: err },
      );
    }
  }
  await Promise.all(clusters.map((c) => deleteNamespace(c.kubeConfig, namespace)));
}
