// Export side, Kubernetes → plain data: whether a ServiceExport can export its Service (E4, E5) and what it exports
// (E6, E7, E8) as a ClusterExport. Takes minimal structural shapes that V1Service / V1EndpointSlice / a ServiceExport
// object satisfy, so no client types reach the core.

import { compareText, normalizeClusterExport, portNameKey } from './cluster-export.ts';
import { LABEL_KUBE_SERVICE_NAME } from './names.ts';
import type {
  ClusterExport,
  EndpointPort,
  ExportedEndpoint,
  IPFamily,
  Protocol,
  ServicePort,
  ServiceType,
} from './types.ts';

export interface ServicePortLike {
  name?: string;
  protocol?: string;
  port: number;
  targetPort?: number | string;
  appProtocol?: string;
}

export interface ServiceLike {
  metadata?: { name?: string; namespace?: string };
  spec?: {
    type?: string;
    clusterIP?: string;
    ports?: ServicePortLike[];
    sessionAffinity?: string;
    sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
    internalTrafficPolicy?: string;
    trafficDistribution?: string;
    ipFamilies?: string[];
  };
}

export interface ServiceExportLike {
  metadata?: { name?: string; namespace?: string; creationTimestamp?: Date | string };
  spec?: { exportedLabels?: Record<string, string>; exportedAnnotations?: Record<string, string> };
}

export interface EndpointLike {
  addresses: string[];
  conditions?: { ready?: boolean; terminating?: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  hints?: { forZones?: Array<{ name: string }> };
}

export interface EndpointSliceLike {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  addressType: string;
  endpoints?: EndpointLike[];
  ports?: Array<{ name?: string; protocol?: string; port?: number; appProtocol?: string }>;
}

export type ExportValidityReason = 'Valid' | 'NoService' | 'InvalidServiceType';

export interface ExportValidity {
  valid: boolean;
  reason: ExportValidityReason;
  /** One sentence that says what to do (X4). */
  message: string;
}

/** E4, E5: a ServiceExport exports the Service of the same namespace/name unless it is missing or of type ExternalName. */
export function exportValidity(service: ServiceLike | undefined): ExportValidity {
  if (service === undefined) {
    return {
      valid: false,
      reason: 'NoService',
      message:
        'No Service with the same namespace and name as this ServiceExport exists: create the Service (it is exported as soon as it appears) or delete the ServiceExport.',
    };
  }
  if (service.spec?.type === 'ExternalName') {
    return {
      valid: false,
      reason: 'InvalidServiceType',
      message:
        'Services of type ExternalName cannot be exported: change the Service to ClusterIP, NodePort, LoadBalancer or headless, or delete the ServiceExport.',
    };
  }
  return { valid: true, reason: 'Valid', message: 'The Service can be exported; nothing to do.' };
}

/** E6: `clusterIP: None` exports as Headless; ClusterIP, NodePort and LoadBalancer as ClusterSetIP. */
export function serviceType(service: ServiceLike): ServiceType {
  return service.spec?.clusterIP === 'None' ? 'Headless' : 'ClusterSetIP';
}

export interface BuildClusterExportInput {
  service: ServiceLike;
  serviceExport: ServiceExportLike;
  /** May include slices of other Services; only those labelled kubernetes.io/service-name=<service> are used. */
  endpointSlices: readonly EndpointSliceLike[];
  clusterId: string;
  clustersetId: string;
}

const PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];

function protocolOf(raw: string | undefined, where: string): Protocol {
  const protocol = raw ?? 'TCP';
  if (!(PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new Error(`${where}: protocol "${protocol}" is not one of ${PROTOCOLS.join(', ')}`);
  }
  return protocol as Protocol;
}

function timestampMs(raw: Date | string | undefined, where: string): number {
  const ms = raw instanceof Date ? raw.getTime() : raw === undefined ? Number.NaN : Date.parse(raw);
  if (!Number.isFinite(ms))
    throw new Error(`${where}: metadata.creationTimestamp is missing or not a date (${String(raw)})`);
  return ms;
}

function servicePorts(service: ServiceLike, where: string): ServicePort[] {
  return (service.spec?.ports ?? []).map((p) => {
    const port: ServicePort = {
      name: p.name ?? '',
      protocol: protocolOf(p.protocol, `${where} port ${p.port}`),
      port: p.port,
      targetPort: String(p.targetPort ?? p.port),
    };
    if (p.appProtocol !== undefined) port.appProtocol = p.appProtocol;
    return port;
  });
}

/** The apiserver fills ipFamilies; when it is absent the export states none (agreeing with any, see conflicts.ts). */
function ipFamilies(service: ServiceLike): IPFamily[] {
  return (service.spec?.ipFamilies ?? []).filter((f): f is IPFamily => f === 'IPv4' || f === 'IPv6');
}

/**
 * The endpoint ports of a slice that the Service exposes, matched by name and protocol as kube-proxy does; ports the
 * Service no longer has (a slice lagging behind a Service edit) are not exported.
 */
function slicePorts(slice: EndpointSliceLike, exposed: ReadonlySet<string>, where: string): EndpointPort[] {
  const ports: EndpointPort[] = [];
  for (const p of slice.ports ?? []) {
    if (p.port === undefined) continue;
    const port: EndpointPort = {
      name: p.name ?? '',
      protocol: protocolOf(p.protocol, `${where} port ${p.port}`),
      port: p.port,
    };
    if (p.appProtocol !== undefined) port.appProtocol = p.appProtocol;
    if (exposed.has(portNameKey(port))) ports.push(port);
  }
  return ports;
}

/** Adds one slice endpoint, merging with a copy of the same address from another slice (slices may overlap briefly). */
function addEndpoint(
  byAddress: Map<string, ExportedEndpoint>,
  endpoint: EndpointLike,
  ports: readonly EndpointPort[],
): void {
  const address = endpoint.addresses[0];
  // E8 / Kubernetes semantics: terminating endpoints are on their way out; an absent `ready` means ready.
  if (address === undefined || endpoint.conditions?.terminating === true) return;
  const ready = endpoint.conditions?.ready ?? true;
  const existing = byAddress.get(address);
  if (existing === undefined) {
    const next: ExportedEndpoint = { address, ready, ports: [...ports] };
    if (endpoint.hostname) next.hostname = endpoint.hostname;
    if (endpoint.nodeName) next.nodeName = endpoint.nodeName;
    if (endpoint.zone) next.zone = endpoint.zone;
    byAddress.set(address, next);
    return;
  }
  existing.ready ||= ready;
  if (!existing.hostname && endpoint.hostname) existing.hostname = endpoint.hostname;
  if (!existing.nodeName && endpoint.nodeName) existing.nodeName = endpoint.nodeName;
  if (!existing.zone && endpoint.zone) existing.zone = endpoint.zone;
  const known = new Set(existing.ports.map(portNameKey));
  for (const port of ports) if (!known.has(portNameKey(port))) existing.ports.push(port);
}

function exportedEndpoints(
  input: BuildClusterExportInput,
  name: string,
  namespace: string,
  ports: readonly ServicePort[],
): ExportedEndpoint[] {
  const exposed = new Set(ports.map(portNameKey));
  const slices = input.endpointSlices
    .filter(
      (s) =>
        s.metadata?.labels?.[LABEL_KUBE_SERVICE_NAME] === name && (s.metadata?.namespace ?? namespace) === namespace,
    )
    .filter((s) => s.addressType === 'IPv4' || s.addressType === 'IPv6')
    .sort((a, b) => compareText(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  const byAddress = new Map<string, ExportedEndpoint>();
  for (const slice of slices) {
    const endpointPorts = slicePorts(slice, exposed, `EndpointSlice ${namespace}/${slice.metadata?.name ?? '?'}`);
    // An endpoint without ports is reachable only through a Service that has none (headless without ports).
    if (endpointPorts.length === 0 && ports.length > 0) continue;
    for (const endpoint of slice.endpoints ?? []) addEndpoint(byAddress, endpoint, endpointPorts);
  }
  return [...byAddress.values()];
}

/**
 * What this cluster exports for one ServiceExport (E6–E8). The caller checks exportValidity first; an invalid Service
 * throws. Exported labels and annotations are exactly the ServiceExport's spec.exportedLabels / exportedAnnotations (E7).
 */
export function buildClusterExport(input: BuildClusterExportInput): ClusterExport {
  const { service, serviceExport, clusterId, clustersetId } = input;
  const name = service.metadata?.name;
  const namespace = service.metadata?.namespace;
  if (!name || !namespace)
    throw new Error('buildClusterExport: the Service has no metadata.name or metadata.namespace');
  const where = `Service ${namespace}/${name} in cluster ${clusterId}`;
  const validity = exportValidity(service);
  if (!validity.valid) throw new Error(`${where} cannot be exported (${validity.reason}): ${validity.message}`);

  const ports = servicePorts(service, where);
  const affinity = service.spec?.sessionAffinity === 'ClientIP' ? 'ClientIP' : 'None';
  const timeout = service.spec?.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  const itp = service.spec?.internalTrafficPolicy;
  const x: ClusterExport = {
    clusterId,
    clustersetId,
    namespace,
    name,
    exportCreationTimestamp: timestampMs(
      serviceExport.metadata?.creationTimestamp,
      `ServiceExport ${namespace}/${name}`,
    ),
    type: serviceType(service),
    ports,
    sessionAffinity: affinity,
    ipFamilies: ipFamilies(service),
    exportedLabels: { ...(serviceExport.spec?.exportedLabels ?? {}) },
    exportedAnnotations: { ...(serviceExport.spec?.exportedAnnotations ?? {}) },
    endpoints: exportedEndpoints(input, name, namespace, ports),
  };
  if (affinity === 'ClientIP' && timeout !== undefined) x.sessionAffinityTimeoutSeconds = timeout;
  if (itp === 'Cluster' || itp === 'Local') x.internalTrafficPolicy = itp;
  if (service.spec?.trafficDistribution) x.trafficDistribution = service.spec.trafficDistribution;
  return normalizeClusterExport(x);
}
