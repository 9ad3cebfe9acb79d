// The testbed's public API: start a local ClusterSet (real kube-apiservers with kwok nodes, optionally a real node per
// cluster with a data path, moto as Cloud Map).
export { startClusterSet, CLUSTERSET_ID, REGION, STATE_FILE } from './clusterset.ts';
export type { TestClusterSet, TestCluster, ClusterSetOptions, ClusterSetState } from './clusterset.ts';
export type { ClusterIpFamilies } from './network.ts';
export { ipInCidr, urlHost } from './network.ts';
export { coreDnsAvailability } from './paths.ts';
export {
  createBridgeHost,
  DataPathUnavailableError,
  deleteBridgeHost,
  importIntoRealNode,
  missingDataPathPrerequisites,
} from './data-path/index.ts';
export type { DataPathPlan, RealNode } from './data-path/index.ts';
export { startCoreDns } from './coredns.ts';
export { startNamespaceDns } from './namespace-dns.ts';
export { addOutsideHost, type OutsideHost } from './data-path/outside-host.ts';
export type { CoreDns, CoreDnsSpec } from './coredns.ts';
export { hostAddress } from './host-address.ts';
export { CloudMapEmulatorControl } from './cloudmap-emulator.ts';
export type {
  CloudMapEmulatorOptions,
  CloudMapEmulatorConfig,
  CloudMapFaults,
  CloudMapCallLog,
  CloudMapQuota,
  DnsRecord,
} from './cloudmap-emulator.ts';
