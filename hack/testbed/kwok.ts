// kwok for one cluster: plays the kubelet of every fake Node (status, lease heartbeats) and moves their pods to
// Running with an IP from the node's pod CIDR. The Nodes themselves are created here, as a kubelet would register them.
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { join } from 'node:path';
import type { ClusterNetwork } from './network.ts';
import { binary, kwokStageFiles } from './paths.ts';
import { isOk } from './probe.ts';
import type { ManagedProcess, Supervisor } from './supervisor.ts';

const FAKE_NODE_ANNOTATION = 'kwok.x-k8s.io/node';

/**
 * With a real node in the cluster (data path), the fake Nodes carry this taint: they stay for scale, and ordinary pods
 * land on the real node, where they run.
 */
export const FAKE_NODE_TAINT = { key: FAKE_NODE_ANNOTATION, value: 'fake', effect: 'NoSchedule' } as const;

export interface KwokSpec {
  network: ClusterNetwork;
  region: string;
  logsDir: string;
  kubeconfig: string;
  port: number;
}

export async function startKwok(sup: Supervisor, spec: KwokSpec, timeoutMs: number): Promise<ManagedProcess> {
  const proc = sup.start({
    name: `kwok (${spec.network.clusterId})`,
    command: binary('kwok'),
    args: [
      `--kubeconfig=${spec.kubeconfig}`,
      // Only the fake Nodes: a real node (data path) has its own kubelet.
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${FAKE_NODE_ANNOTATION}=fake`,
      // Fallback for nodes without spec.podCIDR; the ones created here all have one.
      `--cidr=${spec.network.podCidr}`,
      '--node-lease-duration-seconds=40',
      `--server-address=127.0.0.1:${spec.port}`,
      '-c',
      join(import.meta.dirname, 'kwok-configuration.yaml'),
      ...kwokStageFiles().flatMap((f) => ['-c', f]),
    ],
    logPath: join(spec.logsDir, 'kwok.log'),
  });
  await proc.waitReady('/healthz answers ok', () => isOk(`http://127.0.0.1:${spec.port}/healthz`), timeoutMs);
  return proc;
}

export function fakeNode(node: ClusterNetwork['nodes'][number], region: string, tainted = false): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: node.name,
      labels: {
        'kubernetes.io/hostname': node.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'topology.kubernetes.io/region': region,
        'topology.kubernetes.io/zone': node.zone,
        type: 'kwok',
      },
      annotations: { [FAKE_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: { podCIDR: node.podCidrs[0]!, podCIDRs: node.podCidrs, ...(tainted && { taints: [{ ...FAKE_NODE_TAINT }] }) },
    status: {
      addresses: [
        { type: 'InternalIP', address: node.internalIp },
        { type: 'Hostname', address: node.name },
      ],
    },
  };
}

/** Registers the cluster's fake Nodes; `tainted` when the cluster also has a real node. */
export async function createFakeNodes(
  kc: KubeConfig,
  network: ClusterNetwork,
  region: string,
  tainted = false,
): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  await Promise.all(
    network.nodes.map(async (n) => {
      try {
        await api.createNode({ body: fakeNode(n, region, tainted) });
      } catch (err) {
        throw new Error(`creating fake node ${n.name} in ${network.clusterId}: ${(err as Error).message}`, {
          cause: err,
        });
      }
    }),
  );
}
