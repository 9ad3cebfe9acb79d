// Address plan of the data path: pure functions of the ClusterSet's slot and each cluster's network, unit-tested.
//
// One Linux bridge in the host's network namespace stands for the VPC: every real node's eth0 sits on it, and the
// host's end carries the address the nodes reach the apiservers at. Each real node routes every other cluster's
// real-node pod range through that node (a flat pod network, as VPC peering gives). Nothing has a default route, so
// a packet for any other address never leaves the testbed's namespaces.
import type { ClusterNetwork } from '../network.ts';

/** Slots 0..255 give concurrent data-path ClusterSets on one machine their own bridge, namespaces and /24. */
export const MAX_SLOT = 255;

export interface RealNodePlan {
  clusterId: string;
  /** Node object name, e.g. cls1-real-0. */
  name: string;
  /** Network namespace the node's processes run in. */
  netns: string;
  /** Host end of the node's veth pair (the node's end is eth0). */
  hostVeth: string;
  /** The node's address on the bridge: InternalIP, kubelet, CoreDNS. */
  nodeIp: string;
  /** The node's pod range, inside the cluster's pod CIDR and clear of the fake nodes' /24s. */
  podCidr: string;
  /** First address of podCidr: the node's cni0 bridge, the pods' gateway. */
  podGateway: string;
  /** ClusterIP of kube-system/kube-dns, the pods' nameserver. */
  dnsServiceIp: string;
  /** Cgroup (every v1 hierarchy) holding the node's processes and, below it, its pods: the kubelet's cgroupRoot. */
  cgroup: string;
  /** Other clusters' real-node pod ranges and the node address that routes each. */
  routes: { podCidr: string; via: string }[];
}

export interface DataPathPlan {
  slot: number;
  /** Bridge in the host's network namespace. */
  bridge: string;
  /** /24 of the bridge. */
  subnet: string;
  /** The host's address on the bridge: nodes dial the apiservers here. */
  hostIp: string;
  nodes: RealNodePlan[];
}

const POD_THIRD_OCTET = 10;

function octets(cidr: string): number[] {
  const [base] = cidr.split('/');
  return base!.split('.').map(Number);
}

/** Throws when `slot` is out of range or two clusters share a pod range (no flat network can route overlapping pods). */
export function dataPathPlan(slot: number, clusters: readonly ClusterNetwork[]): DataPathPlan {
  if (!Number.isInteger(slot) || slot < 0 || slot > MAX_SLOT) {
    throw new RangeError(`data-path slot must be a whole number from 0 to ${MAX_SLOT}, got ${slot}`);
  }
  const ranges = new Set(clusters.map((c) => c.podCidr));
  if (ranges.size !== clusters.length) {
    throw new Error('the data path needs a pod CIDR per cluster: clusters sharing one (sharedPodCidr) cannot route to each other\'s pods');
  }
  const prefix = `mcsdp${slot}`;
  const hostIp = `172.31.${slot}.1`;
  const nodes = clusters.map((c, i) => {
    const [a, b] = octets(c.podCidr);
    const [s1, s2] = octets(c.serviceCidr);
    const index = i + 1;
    return {
      clusterId: c.clusterId,
      name: `${c.clusterId}-real-0`,
      netns: `${prefix}-${c.clusterId}`,
      hostVeth: `${prefix}h${index}`,
      nodeIp: `172.31.${slot}.${10 + index}`,
      podCidr: `${a}.${b}.${POD_THIRD_OCTET}.0/24`,
      podGateway: `${a}.${b}.${POD_THIRD_OCTET}.1`,
      dnsServiceIp: `${s1}.${s2}.0.10`,
      cgroup: `${prefix}-${c.clusterId}`,
      routes: [] as RealNodePlan['routes'],
    };
  });
  for (const n of nodes) n.routes = nodes.filter((o) => o !== n).map((o) => ({ podCidr: o.podCidr, via: o.nodeIp }));
  return { slot, bridge: prefix, subnet: `172.31.${slot}.0/24`, hostIp, nodes };
}
