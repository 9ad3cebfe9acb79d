// Address plan of the data path: pure functions of the ClusterSet's slot and each cluster's network, unit-tested.
//
// One Linux bridge in the host's network namespace stands for the VPC: every real node's eth0 sits on it, and the
// host's end carries the address the nodes reach the apiservers at. Each real node routes every other cluster's
// real-node pod range through that node (a flat pod network, as VPC peering gives). Nothing has a default route, so
// a packet for any other address never leaves the testbed's namespaces.
import { canonical, type ClusterIpFamilies, type ClusterNetwork } from '../network.ts';

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
  /** The cluster's IP families, the primary first. */
  ipFamilies: ClusterIpFamilies;
  /** eth0's addresses on the bridge: the underlay has both families whatever the cluster's, like a dual-stack VPC. */
  underlay: { IPv4: string; IPv6: string };
  /** The node's InternalIPs, one per cluster family (family order): kubelet, kube-proxy, CoreDNS. */
  nodeIps: string[];
  /** The primary one of nodeIps: what the kubelet, kube-proxy and CoreDNS serve and are probed at. */
  nodeIp: string;
  /** The node's pod ranges (family order), inside the cluster's pod CIDRs and clear of the fake nodes' ranges. */
  podCidrs: string[];
  /** The primary one of podCidrs. */
  podCidr: string;
  /** First address of each pod range: the node's cni0 bridge, the pods' gateways. */
  podGateways: string[];
  /** ClusterIPs of kube-system/kube-dns (family order), the pods' nameserver. */
  dnsServiceIps: string[];
  /** The primary one of dnsServiceIps: the pods' nameserver. */
  dnsServiceIp: string;
  /** Cgroup (every v1 hierarchy) holding the node's processes and, below it, its pods: the kubelet's cgroupRoot. */
  cgroup: string;
  /** Other clusters' real-node pod ranges and the node address (of the range's family) that routes each. */
  routes: { podCidr: string; via: string }[];
}

export interface DataPathPlan {
  slot: number;
  /** Bridge in the host's network namespace. */
  bridge: string;
  /** /24 of the bridge. */
  subnet: string;
  /** /64 of the bridge. */
  subnet6: string;
  /** The host's address on the bridge: nodes dial the apiservers here. */
  hostIp: string;
  /** The host's IPv6 address on the bridge: it reaches IPv6-only nodes' kubelets and DNS here. */
  hostIp6: string;
  nodes: RealNodePlan[];
}

/** Third IPv4 octet, fourth IPv6 group, of every real node's pod range: clear of the fake nodes' 0, 1, 2. */
const POD_RANGE_NUMBER = 10;

/** A range's address with its last part replaced: `10.244.0.0/16` → `10.244.10.<last>`, `fd00:10:244::/56` → `fd00:10:244:10::<last>`. */
function inRange(cidr: string, third: number, last: string): string {
  const [base] = cidr.split('/');
  if (base!.includes(':')) return `${base!.replace(/::$/, '')}:${third}::${last}`;
  const [a, b] = base!.split('.');
  return `${a}.${b}.${third}.${last}`;
}

/** Throws when `slot` is out of range or two clusters share a pod range (no flat network can route overlapping pods). */
export function dataPathPlan(slot: number, clusters: readonly ClusterNetwork[]): DataPathPlan {
  if (!Number.isInteger(slot) || slot < 0 || slot > MAX_SLOT) {
    throw new RangeError(`data-path slot must be a whole number from 0 to ${MAX_SLOT}, got ${slot}`);
  }
  const ranges = new Set(clusters.map((c) => c.podCidr));
  if (ranges.size !== clusters.length) {
    throw new Error(
      "the data path needs a pod CIDR per cluster: clusters sharing one (sharedPodCidr) cannot route to each other's pods",
    );
  }
  const prefix = `mcsdp${slot}`;
  const nodes = clusters.map((c, i): RealNodePlan => {
    const index = i + 1;
    const underlay = { IPv4: `172.31.${slot}.${10 + index}`, IPv6: canonical(`fd00:31:${slot}::${10 + index}`) };
    const podCidrs = c.podCidrs.map((r) =>
      canonical(`${inRange(r, POD_RANGE_NUMBER, '0')}/${r.includes(':') ? 64 : 24}`),
    );
    const dnsServiceIps = c.serviceCidrs.map((r) =>
      r.includes(':') ? canonical(`${r.split('/')[0]}a`) : inRange(r, 0, '10'),
    );
    const nodeIps = c.ipFamilies.map((f) => underlay[f]);
    return {
      clusterId: c.clusterId,
      name: `${c.clusterId}-real-0`,
      netns: `${prefix}-${c.clusterId}`,
      hostVeth: `${prefix}h${index}`,
      ipFamilies: c.ipFamilies,
      underlay,
      nodeIps,
      nodeIp: nodeIps[0]!,
      podCidrs,
      podCidr: podCidrs[0]!,
      podGateways: c.podCidrs.map((r) => canonical(inRange(r, POD_RANGE_NUMBER, '1'))),
      dnsServiceIps,
      dnsServiceIp: dnsServiceIps[0]!,
      cgroup: `${prefix}-${c.clusterId}`,
      routes: [],
    };
  });
  for (const n of nodes) {
    n.routes = nodes
      .filter((o) => o !== n)
      .flatMap((o) =>
        o.podCidrs.map((podCidr) => ({ podCidr, via: o.underlay[podCidr.includes(':') ? 'IPv6' : 'IPv4'] })),
      );
  }
  return {
    slot,
    bridge: prefix,
    subnet: `172.31.${slot}.0/24`,
    subnet6: canonical(`fd00:31:${slot}::/64`),
    hostIp: `172.31.${slot}.1`,
    hostIp6: canonical(`fd00:31:${slot}::1`),
    nodes,
  };
}
