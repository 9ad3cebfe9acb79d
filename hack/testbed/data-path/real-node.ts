// One cluster's real node: containerd (with the data-path images loaded), the kubelet, kube-proxy and cluster DNS,
// each in the node's network namespace and cgroup. Ready when the Node is Ready and kube-proxy and DNS answer.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeKubeconfig } from '../kubeconfig.ts';
import type { ClusterPki, NodePki } from '../pki.ts';
import type { Supervisor } from '../supervisor.ts';
import { waitFor } from '../wait.ts';
import { createKubeDnsService, startClusterDns } from './cluster-dns.ts';
import { importImages, startContainerd } from './containerd.ts';
import { startKubeProxy } from './kube-proxy.ts';
import { startKubelet } from './kubelet.ts';
import { createNodeCgroup } from './node-cgroup.ts';
import type { RealNodePlan } from './plan.ts';
import { dataPathImagesDir } from './prerequisites.ts';

/** What tests and tools need to know of a cluster's real node. */
export interface RealNode {
  name: string;
  /** The primary InternalIP, on the testbed's bridge; the kubelet and CoreDNS listen here. */
  nodeIp: string;
  /** InternalIPs, one per cluster IP family (primary first). */
  nodeIps: string[];
  /** The primary family's pod range of the node. */
  podCidr: string;
  /** The node's pod ranges, one per family. */
  podCidrs: string[];
  /** kube-system/kube-dns primary ClusterIP, the pods' nameserver. */
  dnsServiceIp: string;
  /** kube-system/kube-dns ClusterIPs, one per family. */
  dnsServiceIps: string[];
  netns: string;
  cgroup: string;
  /** containerd's socket: `importIntoRealNode()` loads more images through it. */
  containerdSocket: string;
}

export interface RealNodeStart {
  node: RealNodePlan;
  /** https://<bridge address>:<port>: the apiserver as the node's processes dial it. */
  server: string;
  clusterDir: string;
  logsDir: string;
  region: string;
  zone: string;
  clusterCidrs: readonly string[];
  pki: ClusterPki;
  nodePki: NodePki;
  /** Admin access from the host. */
  kc: KubeConfig;
  timeoutMs: number;
  signal: AbortSignal;
}

/**
 * The Node is created before its kubelet starts, with its pod range, so the node IPAM controller leaves that range to
 * it and the CNI configuration can be written up front.
 */
async function createRealNodeObject(kc: KubeConfig, s: RealNodeStart): Promise<void> {
  try {
    await kc.makeApiClient(CoreV1Api).createNode({
      body: {
        metadata: {
          name: s.node.name,
          labels: {
            'kubernetes.io/hostname': s.node.name,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': 'amd64',
            'topology.kubernetes.io/region': s.region,
            'topology.kubernetes.io/zone': s.zone,
            type: 'real',
          },
        },
        spec: { podCIDR: s.node.podCidr, podCIDRs: s.node.podCidrs },
      },
    });
  } catch (err) {
    throw new Error(`creating real node ${s.node.name}: ${(err as Error).message}`, { cause: err });
  }
}

export async function startRealNode(sup: Supervisor, s: RealNodeStart): Promise<RealNode> {
  const { node } = s;
  const dir = join(s.clusterDir, 'real-node');
  mkdirSync(dir, { recursive: true });
  const kubeconfigs = {
    kubelet: join(dir, 'kubelet.kubeconfig'),
    kubeProxy: join(dir, 'kube-proxy.kubeconfig'),
    admin: join(dir, 'admin.kubeconfig'),
  };
  writeKubeconfig(kubeconfigs.kubelet, {
    context: node.clusterId,
    server: s.server,
    caCert: s.pki.ca.cert,
    client: s.nodePki.kubelet,
  });
  writeKubeconfig(kubeconfigs.kubeProxy, {
    context: node.clusterId,
    server: s.server,
    caCert: s.pki.ca.cert,
    client: s.nodePki.kubeProxy,
  });
  writeKubeconfig(kubeconfigs.admin, {
    context: node.clusterId,
    server: s.server,
    caCert: s.pki.ca.cert,
    client: s.pki.admin,
  });

  await createRealNodeObject(s.kc, s);
  const cgroupProcs = createNodeCgroup(node.cgroup);
  const containerd = await startContainerd(sup, node, cgroupProcs, dir, s.logsDir, s.timeoutMs);
  await importImages(containerd.socket, join(dataPathImagesDir(), 'images.tar'), node.name);
  const common = { node, cgroupProcs, dir, logsDir: s.logsDir };
  await Promise.all([
    startKubelet(
      sup,
      { ...common, kubeconfig: kubeconfigs.kubelet, caCert: s.pki.ca.cert, containerdSocket: containerd.socket },
      s.timeoutMs,
    ),
    startKubeProxy(sup, { ...common, kubeconfig: kubeconfigs.kubeProxy, clusterCidrs: s.clusterCidrs }, s.timeoutMs),
    startClusterDns(sup, { ...common, kubeconfig: kubeconfigs.admin, context: node.clusterId }, s.timeoutMs),
    createKubeDnsService(s.kc, node),
  ]);
  const api = s.kc.makeApiClient(CoreV1Api);
  await waitFor(
    `${node.name}: Node Ready (kubelet, runtime and CNI up)`,
    async () => {
      const n = await api.readNode({ name: node.name });
      return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    },
    { timeoutMs: s.timeoutMs, signal: s.signal },
  );
  return {
    name: node.name,
    nodeIp: node.nodeIp,
    nodeIps: node.nodeIps,
    podCidr: node.podCidr,
    podCidrs: node.podCidrs,
    dnsServiceIp: node.dnsServiceIp,
    dnsServiceIps: node.dnsServiceIps,
    netns: node.netns,
    cgroup: node.cgroup,
    containerdSocket: containerd.socket,
  };
}

/** Loads the images of a docker or OCI archive (e.g. `podman save` of `npm run image`'s) into the node's runtime. */
export function importIntoRealNode(node: RealNode, archive: string): Promise<void> {
  return importImages(node.containerdSocket, archive, node.name);
}
