// Pods of the data-path e2e suites (startClusterSet({ dataPath: true })): echo servers that answer
// `cluster=<id> pod=<name> port=<port>` on each of their ports, over IPv4 and IPv6 alike, and a client pod per cluster
// whose requests and DNS lookups say what a pod of that cluster gets. Every request gives up after REQUEST_TIMEOUT_S and
// every loop is bounded in count. Shared by the data-path e2e suites and the data-path benchmark (bench/data-path.ts).
import { spawn } from 'node:child_process';
import { CoreV1Api } from '@kubernetes/client-node';
import { kubectlBinary } from '../../hack/testbed/paths.ts';
import type { IPFamily } from '../../src/core/types.ts';
import type { E2ECluster } from './e2e-harness.ts';
import { eventually } from './eventually.ts';
import type { PortSpec } from './workloads.ts';

export const TOOLS_IMAGE = 'docker.io/nicolaka/netshoot:v0.15';
/** Each request from a pod gives up after this long. */
export const REQUEST_TIMEOUT_S = 2;

function echoContainer(clusterId: string, ports: readonly PortSpec[]): object {
  // An IPv6 socket that takes IPv4 too (ipv6only=0): the same server for every family a pod has.
  const listen = ports
    .map(
      (p) =>
        `socat TCP6-LISTEN:${p.port},ipv6only=0,fork,reuseaddr "SYSTEM:echo cluster=${clusterId} pod=$h port=${p.port}" &`,
    )
    .join(' ');
  return {
    name: 'echo',
    image: TOOLS_IMAGE,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', `h=$(hostname); ${listen} wait`],
    ports: ports.map((p) => ({ containerPort: p.port, ...(p.name ? { name: p.name } : {}) })),
    // Ready while /tmp/unready does not exist: a test turns one endpoint unready without stopping it.
    readinessProbe: {
      exec: { command: ['sh', '-c', 'test ! -e /tmp/unready'] },
      periodSeconds: 1,
      failureThreshold: 1,
    },
  };
}

export function echoDeployment(
  namespace: string,
  clusterId: string,
  name: string,
  replicas: number,
  ports: readonly PortSpec[],
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
        spec: { terminationGracePeriodSeconds: 0, containers: [echoContainer(clusterId, ports)] },
      },
    },
  };
}

export function echoStatefulSet(
  namespace: string,
  clusterId: string,
  name: string,
  replicas: number,
  port: number,
): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace },
    spec: {
      replicas,
      serviceName: name,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { terminationGracePeriodSeconds: 0, containers: [echoContainer(clusterId, [{ port }])] },
      },
    },
  };
}

export function clientPod(namespace: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'client', namespace },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [
        { name: 'client', image: TOOLS_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', 'infinity'] },
      ],
    },
  };
}

/** Runs `script` with sh in the cluster's client pod; its output. */
export function inClient(cluster: E2ECluster, namespace: string, script: string): string {
  return cluster.kubectl(['exec', '-n', namespace, 'client', '--', 'sh', '-c', script]);
}

/**
 * `count` requests from the cluster's client pod to host:port, over `family` when given (a name then resolves to that
 * family's records only); each answer line, or "" for a failed request.
 */
export function requests(
  cluster: E2ECluster,
  namespace: string,
  host: string,
  port: number,
  count: number,
  family?: IPFamily,
): string[] {
  const only = family === undefined ? '' : family === 'IPv4' ? '-4 ' : '-6 ';
  const out = inClient(
    cluster,
    namespace,
    `for i in $(seq ${count}); do r=$(nc ${only}-w ${REQUEST_TIMEOUT_S} ${host} ${port} </dev/null 2>/dev/null); echo "#$r"; done`,
  );
  return out
    .split('\n')
    .filter((l) => l.startsWith('#'))
    .map((l) => l.slice(1).trim());
}

/** The clusters that answered, in order (a failed request is "none"). */
export function answeringClusters(answers: readonly string[]): string[] {
  return answers.map((a) => /cluster=(\S+)/.exec(a)?.[1] ?? 'none');
}

/** Answers of DNS `type` for `name` from the cluster's client pod (the pod's own resolver: kube-dns). */
export function dig(cluster: E2ECluster, namespace: string, name: string, type = 'A'): string[] {
  return inClient(cluster, namespace, `dig +short +time=2 +tries=1 ${type} ${name}`)
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

export async function podNames(cluster: E2ECluster, namespace: string, app: string): Promise<string[]> {
  const pods = await cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace, labelSelector: `app=${app}` });
  return pods.items.map((p) => p.metadata!.name!).sort();
}

export async function readyPods(cluster: E2ECluster, namespace: string, app: string, count: number): Promise<void> {
  await eventually(
    `${cluster.id}: ${count} ready ${app} pods`,
    async () => {
      const pods = await cluster.kubeConfig
        .makeApiClient(CoreV1Api)
        .listNamespacedPod({ namespace, labelSelector: `app=${app}` });
      return (
        pods.items.filter(
          (p) =>
            !p.metadata?.deletionTimestamp &&
            p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
        ).length === count
      );
    },
    120_000,
  );
}

/**
 * Epoch ms at which a request from the cluster's client pod to host:port was first answered by `expected`, polling
 * every 100 ms for at most `timeoutS` seconds (the pod's clock is this machine's). Polled inside the pod, so the time
 * an exec takes is not counted.
 */
export function firstAnswer(
  cluster: E2ECluster,
  namespace: string,
  host: string,
  port: number,
  expected: string,
  timeoutS: number,
): Promise<number> {
  const script =
    `end=$(( $(date +%s) + ${timeoutS} )); while [ $(date +%s) -lt $end ]; do ` +
    `if nc -w 1 ${host} ${port} </dev/null 2>/dev/null | grep -q '${expected}'; then date +%s%3N; exit 0; fi; sleep 0.1; done; exit 1`;
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlBinary(), [
      '--kubeconfig',
      cluster.cluster.kubeconfigPath,
      'exec',
      '-n',
      namespace,
      'client',
      '--',
      'sh',
      '-c',
      script,
    ]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) =>
      code === 0
        ? resolve(Number(out.trim()))
        : reject(
            new Error(
              `${cluster.id}: no answer from ${expected} at ${host}:${port} within ${timeoutS} s ${err.trim()}`,
            ),
          ),
    );
  });
}
