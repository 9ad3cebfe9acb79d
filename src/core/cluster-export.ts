// The canonical form of a ClusterExport: the same export always has the same shape, whether it was built from Kubernetes
// objects or read back from Cloud Map, so callers can compare exports with a deep equality.

import type { ClusterExport, EndpointPort, ExportedEndpoint, ServicePort } from './types.ts';

/** Identity of a port within one Service or one endpoint: name, protocol and number. */
export function portKey(port: { name: string; protocol: string; port: number }): string {
  return `${port.name}/${port.protocol}/${port.port}`;
}

/** Code-unit order: the same on every machine, unlike localeCompare. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Identity of a port by name and protocol: how an endpoint port is matched to its Service port (names are unique within
 * a Service), and what makes an endpoint's ports unique.
 */
export function portNameKey(port: { name: string; protocol: string }): string {
  return `${port.name}/${port.protocol}`;
}

function comparePorts(a: EndpointPort | ServicePort, b: EndpointPort | ServicePort): number {
  return compareText(a.name, b.name) || compareText(a.protocol, b.protocol) || a.port - b.port;
}

/** Copies `from[key]` into `to` only when it is defined, so optional fields are absent rather than `undefined`. */
function copyDefined<T extends object, K extends keyof T>(to: Partial<T>, from: T, keys: readonly K[]): void {
  for (const key of keys) if (from[key] !== undefined) to[key] = from[key];
}

function normalizeServicePort(p: ServicePort): ServicePort {
  const out: ServicePort = { name: p.name, protocol: p.protocol, port: p.port };
  copyDefined(out, p, ['appProtocol', 'targetPort']);
  return out;
}

function normalizeEndpointPort(p: EndpointPort): EndpointPort {
  const out: EndpointPort = { name: p.name, protocol: p.protocol, port: p.port };
  copyDefined(out, p, ['appProtocol']);
  return out;
}

function normalizeEndpoint(e: ExportedEndpoint): ExportedEndpoint {
  const out: ExportedEndpoint = {
    address: e.address,
    ready: e.ready,
    ports: e.ports.map(normalizeEndpointPort).sort(comparePorts),
  };
  copyDefined(out, e, ['hostname', 'nodeName', 'zone']);
  return out;
}

/** Ports and endpoints sorted, optional fields absent when unset. ipFamilies keep their order (the first is primary). */
export function normalizeClusterExport(x: ClusterExport): ClusterExport {
  const out: ClusterExport = {
    clusterId: x.clusterId,
    clustersetId: x.clustersetId,
    namespace: x.namespace,
    name: x.name,
    exportCreationTimestamp: x.exportCreationTimestamp,
    type: x.type,
    ports: x.ports.map(normalizeServicePort).sort(comparePorts),
    sessionAffinity: x.sessionAffinity,
    ipFamilies: [...x.ipFamilies],
    exportedLabels: { ...x.exportedLabels },
    exportedAnnotations: { ...x.exportedAnnotations },
    endpoints: x.endpoints.map(normalizeEndpoint).sort((a, b) => compareText(a.address, b.address)),
  };
  copyDefined(out, x, ['sessionAffinityTimeoutSeconds', 'internalTrafficPolicy', 'trafficDistribution', 'portsOnly']);
  return out;
}
