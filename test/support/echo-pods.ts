// Echo servers and a client pod on a ClusterSet with real nodes (startClusterSet({ dataPath: true })): the servers
// answer `cluster=<id> pod=<name> port=<port>` on each of their ports, and the client asks from inside a pod, through
// the cluster's own DNS and Service routing. Shared by the data-path e2e test and its benchmark (bench/data-path.ts).
import { spawn } from 'node:child_process';
import { CoreV1Api } from '@kubernetes/client-node';
import { kubectlBinary } from '../../hack/testbed/paths.ts';
import type { E2ECluster } from './e2e-harness.ts';
import { eventually } from './eventually.ts';
import type { PortSpec } from './workloads.ts';

const TOOLS_IMAGE = 'docker.io/nicolaka/netshoot:v0.15';

export function echoContainer(clusterId: string, ports: readonly PortSpec[]): object {
  const listen = ports.map((p) => `socat TCP-LISTEN:${p.port},fork,reuseaddr "SYSTEM:echo cluster=${clusterId} pod=$h port=${p.port}" &`).join(' ');
  return {
    name: 'echo',
    image: TOOLS_IMAGE,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', `h=$(hostname); ${listen} wait`],
    ports: ports.map((p) => ({ containerPort: p.port, ...(p.name ? { name: p.name } : {}) })),
    // Ready while /tmp/unready does not exist: a test turns one endpoint unready without stopping it.
    readinessProbe: { exec: { command: ['sh', '-c', 'test ! -e /tmp/unready'] }, periodSeconds: 1, failureThreshold: 1 },
  };
}

export function echoDeployment(namespace: string, clusterId: string, name: string, replicas: number, ports: readonly PortSpec[]): object {
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { terminationGracePeriodSeconds: 0, containers: [echoContainer(clusterId, ports)] } },
    },
  };
}

/** The pod requests are sent from, named `client`. */
export function clientPod(namespace: string): object {
  return {
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'client', namespace },
    spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'client', image: TOOLS_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', 'infinity'] }] },
  };
}

export async function readyPods(cluster: E2ECluster, namespace: string, app: string, count: number): Promise<void> {
  await eventually(`${cluster.id}: ${count} ready ${app} pods`, async () => {
    const pods = await cluster.kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace, labelSelector: `app=${app}` });
    return pods.items.filter((p) => !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === count;
  }, 120_000);
}

/**
 * Epoch ms at which a request from the cluster's client pod to host:port was first answered by `expected`, polling
 * every 100 ms for at most `timeoutS` seconds (the pod's clock is this machine's). Polled inside the pod, so the time
 * an exec takes is not counted.
 */
export function firstAnswer(cluster: E2ECluster, namespace: string, host: string, port: number, expected: string, timeoutS: number): Promise<number> {
  const script = `end=$(( $(date +%s) + ${timeoutS} )); while [ $(date +%s) -lt $end ]; do `
    + `if nc -w 1 ${host} ${port} </dev/null 2>/dev/null | grep -q '${expected}'; then date +%s%3N; exit 0; fi; sleep 0.1; done; exit 1`;
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlBinary(), ['--kubeconfig', cluster.cluster.kubeconfigPath, 'exec', '-n', namespace, 'client', '--', 'sh', '-c', script]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`${cluster.id}: no answer from ${expected} at ${host}:${port} within ${timeoutS} s ${err.trim()}`))));
  });
}
