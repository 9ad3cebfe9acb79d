// Address plan of a testbed cluster: pure functions of the cluster's index, unit-tested.

/** Cluster ids and address ranges exist for clusters 1..MAX_CLUSTERS. */
export const MAX_CLUSTERS = 12;
/** Fake nodes per cluster: enough for spreading and per-node pod CIDRs, cheap for kwok. */
export const NODES_PER_CLUSTER = 3;

export interface ClusterNetwork {
  /** e.g. cls1 */
  clusterId: string;
  /** Pods get IPs from here: 10.244.0.0/16 for cluster 1, 10.245.0.0/16 for cluster 2, ... (all 10.244.0.0/16 when shared). */
  podCidr: string;
  /** Service ClusterIPs: 10.96.0.0/16 for cluster 1, 10.97.0.0/16 for cluster 2, ... */
  serviceCidr: string;
  /** First address of the service range, taken by the `kubernetes` Service; in the apiserver certificate. */
  apiserverServiceIp: string;
  /** One /24 of the pod CIDR per fake node, as the node IPAM controller would assign. */
  nodes: { name: string; podCidr: string; zone: string; internalIp: string }[];
}

export function clusterId(index: number): string {
  return `cls${index}`;
}

/** `index` is 1-based. `sharedPodCidr` puts every cluster on cluster 1's pod range (overlapping pod IPs). */
export function clusterNetwork(index: number, sharedPodCidr: boolean, region: string): ClusterNetwork {
  if (!Number.isInteger(index) || index < 1 || index > MAX_CLUSTERS) {
    throw new RangeError(`cluster index must be a whole number from 1 to ${MAX_CLUSTERS}, got ${index}`);
  }
  const id = clusterId(index);
  const podOctet = 243 + (sharedPodCidr ? 1 : index);
  const serviceOctet = 95 + index;
  const zones = ['a', 'b', 'c'];
  return {
    clusterId: id,
    podCidr: `10.${podOctet}.0.0/16`,
    serviceCidr: `10.${serviceOctet}.0.0/16`,
    apiserverServiceIp: `10.${serviceOctet}.0.1`,
    nodes: Array.from({ length: NODES_PER_CLUSTER }, (_, n) => ({
      name: `${id}-node-${n}`,
      podCidr: `10.${podOctet}.${n}.0/24`,
      zone: `${region}${zones[n % zones.length]}`,
      internalIp: `172.18.${index}.${n + 2}`,
    })),
  };
}

/** True when `ip` (dotted IPv4) lies inside `cidr`. */
export function ipv4InCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split('/');
  const bits = Number(bitsText);
  const toInt = (a: string): number => {
    const parts = a.split('.').map(Number);
    if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new Error(`not an IPv4 address: "${a}"`);
    return parts.reduce((acc, p) => acc * 256 + p, 0);
  };
  if (base === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) throw new Error(`not an IPv4 CIDR: "${cidr}"`);
  const size = 2 ** (32 - bits);
  return Math.floor(toInt(ip) / size) === Math.floor(toInt(base) / size);
}
