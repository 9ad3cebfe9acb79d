// Address plan of a testbed cluster: pure functions of the cluster's index and IP families, unit-tested.
import { BlockList, isIP } from 'node:net';
import type { IPFamily } from '../../src/core/types.ts';

/** Cluster ids and address ranges exist for clusters 1..MAX_CLUSTERS. */
export const MAX_CLUSTERS = 12;
/** Fake nodes per cluster: enough for spreading and per-node pod CIDRs, cheap for kwok. */
export const NODES_PER_CLUSTER = 3;

/** A cluster's IP families, the primary first, as Kubernetes orders them (IPv4-only is every cluster's default). */
export type ClusterIpFamilies =
  | readonly ['IPv4']
  | readonly ['IPv6']
  | readonly ['IPv4', 'IPv6']
  | readonly ['IPv6', 'IPv4'];
export const DEFAULT_IP_FAMILIES: ClusterIpFamilies = ['IPv4'];

export interface ClusterNetwork {
  /** e.g. cls1 */
  clusterId: string;
  /** The families of every range below, the primary first. */
  ipFamilies: ClusterIpFamilies;
  /**
   * Pods get IPs from here, one range per family: 10.244.0.0/16 and fd00:10:244::/56 for cluster 1, 10.245.0.0/16 and
   * fd00:10:245::/56 for cluster 2, ... (cluster 1's when shared).
   */
  podCidrs: string[];
  /** The primary family's pod range. */
  podCidr: string;
  /** Service ClusterIPs, one range per family: 10.96.0.0/16 and fd00:10:96::/112 for cluster 1, 10.97.0.0/16 and fd00:10:97::/112 for cluster 2, ... */
  serviceCidrs: string[];
  /** The primary family's Service range. */
  serviceCidr: string;
  /** First address of each service range: the primary one is the `kubernetes` Service's; all are in the apiserver certificate. */
  apiserverServiceIps: string[];
  /**
   * One /24 and one /64 of the pod ranges per fake node (in family order), as the node IPAM controller would assign;
   * one InternalIP, of the primary family: kwok patches a Node's addresses with `type` as the merge key, and the
   * apiserver refuses the patch of a Node that lists two InternalIPs ("Duplicate value").
   */
  nodes: { name: string; podCidrs: string[]; zone: string; internalIp: string }[];
}

export function clusterId(index: number): string {
  return `cls${index}`;
}

/** How `npm run testbed -- up --ip-families` names a cluster's families: dual-stack is IPv4-primary, as on EKS. */
export const IP_FAMILY_FLAG_VALUES = ['IPv4', 'IPv6', 'dual'] as const;
export type IpFamilyFlagValue = (typeof IP_FAMILY_FLAG_VALUES)[number];

export function familiesOfFlag(value: IpFamilyFlagValue): ClusterIpFamilies {
  return value === 'dual' ? ['IPv4', 'IPv6'] : [value];
}

/** Throws unless `families` is one of the four orders Kubernetes accepts. */
export function clusterIpFamilies(families: readonly string[]): ClusterIpFamilies {
  const text = families.join(',');
  if (!['IPv4', 'IPv6', 'IPv4,IPv6', 'IPv6,IPv4'].includes(text)) {
    throw new RangeError(`IP families must be IPv4, IPv6 or both (primary first), got "${text}"`);
  }
  return families as ClusterIpFamilies;
}

/** The ranges of one family: IPv6 ones mirror the IPv4 ones' numbers inside the ULA prefix fd00:10::/32. */
const RANGES = {
  IPv4: {
    pods: (octet: number) => `10.${octet}.0.0/16`,
    node: (octet: number, n: number) => `10.${octet}.${n}.0/24`,
    services: (octet: number) => `10.${octet}.0.0/16`,
    firstService: (octet: number) => `10.${octet}.0.1`,
    nodeIp: (index: number, n: number) => `172.18.${index}.${n + 2}`,
  },
  IPv6: {
    pods: (octet: number) => `fd00:10:${octet}::/56`,
    node: (octet: number, n: number) => canonical(`fd00:10:${octet}:${n}::/64`),
    // 16 bits of Service addresses, like the IPv4 /16; the apiserver's bitmap allocator takes no IPv6 range wider than /108.
    services: (octet: number) => `fd00:10:${octet}::/112`,
    firstService: (octet: number) => `fd00:10:${octet}::1`,
    nodeIp: (index: number, n: number) => `fd00:172:18:${index}::${n + 2}`,
  },
} satisfies Record<IPFamily, unknown>;

/**
 * `index` is 1-based. `sharedPodCidr` puts every cluster on cluster 1's pod ranges (overlapping pod IPs). `ipFamilies`:
 * the families of the cluster's ranges, the primary first.
 */
export function clusterNetwork(
  index: number,
  sharedPodCidr: boolean,
  region: string,
  ipFamilies: ClusterIpFamilies = DEFAULT_IP_FAMILIES,
): ClusterNetwork {
  if (!Number.isInteger(index) || index < 1 || index > MAX_CLUSTERS) {
    throw new RangeError(`cluster index must be a whole number from 1 to ${MAX_CLUSTERS}, got ${index}`);
  }
  const families = clusterIpFamilies(ipFamilies);
  const id = clusterId(index);
  const podOctet = 243 + (sharedPodCidr ? 1 : index);
  const serviceOctet = 95 + index;
  const zones = ['a', 'b', 'c'];
  const ranges = families.map((f) => RANGES[f]);
  const podCidrs = ranges.map((r) => r.pods(podOctet));
  const serviceCidrs = ranges.map((r) => r.services(serviceOctet));
  return {
    clusterId: id,
    ipFamilies: families,
    podCidrs,
    podCidr: podCidrs[0]!,
    serviceCidrs,
    serviceCidr: serviceCidrs[0]!,
    apiserverServiceIps: ranges.map((r) => r.firstService(serviceOctet)),
    nodes: Array.from({ length: NODES_PER_CLUSTER }, (_, n) => ({
      name: `${id}-node-${n}`,
      podCidrs: ranges.map((r) => r.node(podOctet, n)),
      zone: `${region}${zones[n % zones.length]}`,
      internalIp: ranges[0]!.nodeIp(index, n),
    })),
  };
}

/** True when `ip` lies inside `cidr` (both of one family; an address of the other family is never inside). */
export function ipInCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/');
  const family = isIP(base ?? '');
  const bits = Number(bitsText);
  if (family === 0 || bitsText === undefined || !/^\d+$/.test(bitsText) || bits > (family === 4 ? 32 : 128))
    throw new Error(`not a CIDR: "${cidr}"`);
  const ipFamily = isIP(ip);
  if (ipFamily === 0) throw new Error(`not an IP address: "${ip}"`);
  if (ipFamily !== family) return false;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  const list = new BlockList();
  list.addSubnet(base!, bits, type);
  return list.check(ip, type);
}

/**
 * An address or CIDR in canonical text (RFC 5952 for IPv6: lowercase, longest zero run compressed), the only form the
 * apiserver accepts in EndpointSlices and Node pod CIDRs.
 */
export function canonical(ipOrCidr: string): string {
  const [ip, bits] = ipOrCidr.split('/');
  if (isIP(ip ?? '') !== 6) return ipOrCidr;
  const text = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  return bits === undefined ? text : `${text}/${bits}`;
}

/** `ip` as the host part of a URL or host:port: IPv6 addresses in brackets. */
export function urlHost(ip: string): string {
  return isIP(ip) === 6 ? `[${ip}]` : ip;
}
