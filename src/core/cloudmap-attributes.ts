// The Cloud Map data model (M2, M3, M5; docs/design.md "Cloud Map data model"): a ClusterExport written as Cloud Map
// instances, and every cluster's instances read back as ClusterExports.
//
// - One instance per endpoint address × endpoint port with the attributes of the AWS controller v0.3.1 (M2), so either
//   controller reads the other's instances (M3). Each also carries our service-level attributes for the X3 checks.
// - A Service port that no endpoint serves (always the case with zero endpoints) gets an address-less instance
//   (INSTANCE_KIND=Service) so that the exporting cluster stays visible (I3) and its ports and type take part in merging.
//   v0.3.1 skips such instances (no AWS_INSTANCE_IPV4); we never turn them into endpoints.

import { isIP } from 'node:net';
import { compareText, normalizeClusterExport, portKey, portNameKey } from './cluster-export.ts';
import {
  endpointInstanceId,
  latestById,
  parseInstanceId,
  portlessEndpointInstanceId,
  serviceInstanceId,
  servicePortInstanceId,
} from './instance-id.ts';
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID } from './names.ts';
import type {
  CloudMapInstance,
  ClusterExport,
  EndpointPort,
  ExportedEndpoint,
  ExportedServiceProperties,
  IPFamily,
  Protocol,
  ServicePort,
  ServiceType,
} from './types.ts';

/** Attribute keys. The first block is v0.3.1's (M2); the second is ours. */
export const ATTR = {
  IPV4: 'AWS_INSTANCE_IPV4',
  IPV6: 'AWS_INSTANCE_IPV6',
  PORT: 'AWS_INSTANCE_PORT',
  ENDPOINT_PORT_NAME: 'ENDPOINT_PORT_NAME',
  ENDPOINT_PROTOCOL: 'ENDPOINT_PROTOCOL',
  SERVICE_PORT: 'SERVICE_PORT',
  SERVICE_PORT_NAME: 'SERVICE_PORT_NAME',
  SERVICE_TARGET_PORT: 'SERVICE_TARGET_PORT',
  SERVICE_PROTOCOL: 'SERVICE_PROTOCOL',
  CLUSTER_ID: ATTR_CLUSTER_ID,
  CLUSTERSET_ID: ATTR_CLUSTERSET_ID,
  SERVICE_TYPE: 'SERVICE_TYPE',
  SERVICE_EXPORT_CREATION_TIMESTAMP: 'SERVICE_EXPORT_CREATION_TIMESTAMP',
  READY: 'READY',
  HOSTNAME: 'HOSTNAME',
  NODENAME: 'NODENAME',
  K8S_CONTROLLER: 'K8S_CONTROLLER',

  ENDPOINT_APP_PROTOCOL: 'ENDPOINT_APP_PROTOCOL',
  ZONE: 'ZONE',
  SERVICE_APP_PROTOCOL: 'SERVICE_APP_PROTOCOL',
  SESSION_AFFINITY: 'SESSION_AFFINITY',
  SESSION_AFFINITY_TIMEOUT_SECONDS: 'SESSION_AFFINITY_TIMEOUT_SECONDS',
  INTERNAL_TRAFFIC_POLICY: 'INTERNAL_TRAFFIC_POLICY',
  TRAFFIC_DISTRIBUTION: 'TRAFFIC_DISTRIBUTION',
  IP_FAMILIES: 'IP_FAMILIES',
  EXPORTED_LABELS: 'EXPORTED_LABELS',
  EXPORTED_ANNOTATIONS: 'EXPORTED_ANNOTATIONS',
  INSTANCE_KIND: 'INSTANCE_KIND',
  /** On one instance of an export Cloud Map holds only part of: how many instances it has in all (instance-quota.ts). */
  EXPORT_INSTANCES: 'EXPORT_INSTANCES',
} as const;

/** Every key this controller writes; anything else on an instance is someone else's and is kept (M2). */
export const KNOWN_ATTRIBUTES: ReadonlySet<string> = new Set(Object.values(ATTR));

/** INSTANCE_KIND of the address-less instances; endpoint instances carry no INSTANCE_KIND (as v0.3.1's). */
export const INSTANCE_KIND_SERVICE = 'Service';
/** K8S_CONTROLLER is `<name> <version>`, as v0.3.1 writes `aws-cloud-map-mcs-controller-for-k8s <version>`. */
export const K8S_CONTROLLER_NAME = 'mcs-cloudmap';

/** Cloud Map RegisterInstance limits (API reference: AttrKey, AttrValue, "Custom attributes"). */
export const INSTANCE_LIMITS = { attributes: 30, keyLength: 255, valueLength: 1024, totalLength: 5000 } as const;
const ATTR_KEY = /^[a-zA-Z0-9!-~]+$/;
const ATTR_VALUE = /^([a-zA-Z0-9!-~][ \ta-zA-Z0-9!-~]*){0,1}[a-zA-Z0-9!-~]{0,1}$/;

/** What a value is, for error messages, and what the user can do about it. */
const FIELDS: Partial<Record<string, { what: string; fix: string }>> = {
  [ATTR.EXPORTED_LABELS]: {
    what: 'the exported labels (ServiceExport spec.exportedLabels, as compact JSON)',
    fix: 'export fewer or shorter labels',
  },
  [ATTR.EXPORTED_ANNOTATIONS]: {
    what: 'the exported annotations (ServiceExport spec.exportedAnnotations, as compact JSON)',
    fix: 'export fewer or shorter annotations',
  },
  [ATTR.CLUSTERSET_ID]: {
    what: 'the ClusterSet id (ClusterProperty clusterset.k8s.io)',
    fix: 'use a short printable ASCII ClusterSet id',
  },
  [ATTR.CLUSTER_ID]: {
    what: 'the cluster id (ClusterProperty cluster.clusterset.k8s.io)',
    fix: 'use a valid cluster id',
  },
  [ATTR.HOSTNAME]: { what: 'an endpoint hostname', fix: 'shorten the Pod hostname' },
  [ATTR.NODENAME]: { what: 'an endpoint node name', fix: 'shorten the Node name' },
  [ATTR.ZONE]: { what: 'an endpoint zone', fix: "shorten the Node's topology.kubernetes.io/zone label" },
  [ATTR.TRAFFIC_DISTRIBUTION]: {
    what: 'the Service trafficDistribution',
    fix: 'use a standard trafficDistribution value',
  },
  [ATTR.SERVICE_APP_PROTOCOL]: { what: 'a Service port appProtocol', fix: 'shorten the appProtocol' },
  [ATTR.ENDPOINT_APP_PROTOCOL]: { what: 'an endpoint port appProtocol', fix: 'shorten the appProtocol' },
  [ATTR.K8S_CONTROLLER]: { what: 'the controller version', fix: 'run a release build of the controller' },
};

/** An export that Cloud Map cannot store as given; the message names the field and says what to change. */
export class ExportDataError extends Error {
  override name = 'ExportDataError';
}

/**
 * Checks one instance against Cloud Map's limits and value syntax; throws ExportDataError naming the field.
 * `context` says whose instance it is (e.g. "ServiceExport demo/web of cluster c1").
 */
export function checkInstanceLimits(instance: CloudMapInstance, context: string): void {
  const entries = Object.entries(instance.attributes);
  const where = `${context}, Cloud Map instance ${instance.id}`;
  if (entries.length > INSTANCE_LIMITS.attributes) {
    const foreign = entries.map(([k]) => k).filter((k) => !KNOWN_ATTRIBUTES.has(k));
    const kept =
      foreign.length > 0 ? ` (including ${foreign.length} kept from another writer: ${foreign.join(', ')})` : '';
    throw new ExportDataError(
      `${where}: ${entries.length} attributes${kept}, Cloud Map allows ${INSTANCE_LIMITS.attributes}: remove the extra attributes from the instance.`,
    );
  }
  let total = 0;
  for (const [key, value] of entries) {
    total += key.length + value.length;
    if (key.length > INSTANCE_LIMITS.keyLength || !ATTR_KEY.test(key)) {
      throw new ExportDataError(
        `${where}: attribute name "${key.slice(0, 80)}" is not accepted by Cloud Map (printable ASCII, at most ${INSTANCE_LIMITS.keyLength} characters).`,
      );
    }
    const field = FIELDS[key] ?? { what: `attribute ${key}`, fix: 'shorten it' };
    if (value.length > INSTANCE_LIMITS.valueLength) {
      throw new ExportDataError(
        `${where}: ${field.what} take ${value.length} characters, Cloud Map allows ${INSTANCE_LIMITS.valueLength} per attribute: ${field.fix}.`,
      );
    }
    if (!ATTR_VALUE.test(value)) {
      throw new ExportDataError(
        `${where}: ${field.what} (${key}) must be printable ASCII without leading whitespace for Cloud Map: ${field.fix}.`,
      );
    }
  }
  if (total > INSTANCE_LIMITS.totalLength) {
    throw new ExportDataError(
      `${where}: attributes take ${total} characters in all, Cloud Map allows ${INSTANCE_LIMITS.totalLength}: export fewer or shorter labels and annotations.`,
    );
  }
}

/** Compact JSON with sorted keys (stable, so unchanged maps never cause a write) and non-ASCII escaped (Cloud Map values are ASCII). */
function asciiJson(map: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(map).sort(([a], [b]) => compareText(a, b)));
  return JSON.stringify(sorted).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function serviceLevelAttributes(x: ClusterExport, controllerVersion: string): Record<string, string> {
  const a: Record<string, string> = {
    [ATTR.CLUSTER_ID]: x.clusterId,
    [ATTR.CLUSTERSET_ID]: x.clustersetId,
    [ATTR.SERVICE_TYPE]: x.type,
    [ATTR.SERVICE_EXPORT_CREATION_TIMESTAMP]: String(x.exportCreationTimestamp),
    [ATTR.K8S_CONTROLLER]: `${K8S_CONTROLLER_NAME} ${controllerVersion}`,
    [ATTR.SESSION_AFFINITY]: x.sessionAffinity,
  };
  if (x.ipFamilies.length > 0) a[ATTR.IP_FAMILIES] = x.ipFamilies.join(',');
  if (x.sessionAffinityTimeoutSeconds !== undefined)
    a[ATTR.SESSION_AFFINITY_TIMEOUT_SECONDS] = String(x.sessionAffinityTimeoutSeconds);
  if (x.internalTrafficPolicy !== undefined) a[ATTR.INTERNAL_TRAFFIC_POLICY] = x.internalTrafficPolicy;
  if (x.trafficDistribution !== undefined) a[ATTR.TRAFFIC_DISTRIBUTION] = x.trafficDistribution;
  if (Object.keys(x.exportedLabels).length > 0) a[ATTR.EXPORTED_LABELS] = asciiJson(x.exportedLabels);
  if (Object.keys(x.exportedAnnotations).length > 0) a[ATTR.EXPORTED_ANNOTATIONS] = asciiJson(x.exportedAnnotations);
  return a;
}

function servicePortAttributes(p: ServicePort): Record<string, string> {
  const a: Record<string, string> = {
    [ATTR.SERVICE_PORT]: String(p.port),
    [ATTR.SERVICE_PORT_NAME]: p.name,
    [ATTR.SERVICE_TARGET_PORT]: p.targetPort ?? String(p.port),
    [ATTR.SERVICE_PROTOCOL]: p.protocol,
  };
  if (p.appProtocol !== undefined) a[ATTR.SERVICE_APP_PROTOCOL] = p.appProtocol;
  return a;
}

function endpointAttributes(e: ExportedEndpoint, context: string): Record<string, string> {
  const family = isIP(e.address);
  if (family === 0) throw new ExportDataError(`${context}: endpoint address "${e.address}" is not an IP address.`);
  const a: Record<string, string> = {
    [family === 6 ? ATTR.IPV6 : ATTR.IPV4]: e.address,
    [ATTR.READY]: String(e.ready),
  };
  if (e.hostname) a[ATTR.HOSTNAME] = e.hostname;
  if (e.nodeName) a[ATTR.NODENAME] = e.nodeName;
  if (e.zone) a[ATTR.ZONE] = e.zone;
  return a;
}

function endpointPortAttributes(p: EndpointPort): Record<string, string> {
  const a: Record<string, string> = {
    [ATTR.PORT]: String(p.port),
    [ATTR.ENDPOINT_PORT_NAME]: p.name,
    [ATTR.ENDPOINT_PROTOCOL]: p.protocol,
  };
  if (p.appProtocol !== undefined) a[ATTR.ENDPOINT_APP_PROTOCOL] = p.appProtocol;
  return a;
}

/**
 * M2/M3: the instances this cluster registers for one export. Endpoint ports are matched to Service ports by name and
 * protocol. Throws ExportDataError, naming the field, when the export is inconsistent or exceeds Cloud Map's limits.
 * `controllerVersion` goes into K8S_CONTROLLER.
 */
export function instancesForExport(x: ClusterExport, controllerVersion: string): CloudMapInstance[] {
  const context = `ServiceExport ${x.namespace}/${x.name} of cluster ${x.clusterId}`;
  const common = serviceLevelAttributes(x, controllerVersion);
  const servicePorts = new Map(x.ports.map((p) => [portNameKey(p), p]));
  const served = new Set<ServicePort>();
  const instances: CloudMapInstance[] = [];
  for (const endpoint of x.endpoints) {
    const endpointAttrs = { ...common, ...endpointAttributes(endpoint, context) };
    if (endpoint.ports.length === 0) {
      if (x.ports.length > 0)
        throw new ExportDataError(
          `${context}: endpoint ${endpoint.address} has no ports but the Service has; export only endpoints that serve the Service's ports.`,
        );
      instances.push({ id: portlessEndpointInstanceId(x, endpoint.address), attributes: endpointAttrs });
    }
    for (const port of endpoint.ports) {
      const servicePort = servicePorts.get(portNameKey(port));
      if (servicePort === undefined) {
        throw new ExportDataError(
          `${context}: endpoint ${endpoint.address} port "${port.name}"/${port.protocol} matches no Service port by name and protocol.`,
        );
      }
      served.add(servicePort);
      instances.push({
        id: endpointInstanceId(x, endpoint.address, servicePort.protocol, servicePort.port),
        attributes: { ...endpointAttrs, ...endpointPortAttributes(port), ...servicePortAttributes(servicePort) },
      });
    }
  }
  const serviceAttrs = { ...common, [ATTR.INSTANCE_KIND]: INSTANCE_KIND_SERVICE };
  for (const port of x.ports) {
    if (served.has(port)) continue;
    instances.push({
      id: servicePortInstanceId(x, port.protocol, port.port),
      attributes: { ...serviceAttrs, ...servicePortAttributes(port) },
    });
  }
  if (instances.length === 0) instances.push({ id: serviceInstanceId(x), attributes: serviceAttrs });

  const ids = new Set<string>();
  for (const instance of instances) {
    if (ids.has(instance.id))
      throw new ExportDataError(
        `${context}: two instances would share id ${instance.id}; an endpoint lists the same address and port twice.`,
      );
    ids.add(instance.id);
    checkInstanceLimits(instance, context);
  }
  return instances;
}

// ---- reading ----

/** An instance exportsFromInstances could not use, with the reason (reported, never thrown). */
export interface SkippedInstance {
  id: string;
  clusterId?: string;
  reason: string;
}

export interface ExportsFromInstances {
  /** One per exporting cluster of the ClusterSet, sorted by clusterId, in canonical form (normalizeClusterExport). */
  exports: ClusterExport[];
  skipped: SkippedInstance[];
}

class MalformedInstance extends Error {}

/** Typed access to one instance's attributes; every failure is a MalformedInstance naming the attribute. */
class AttributeReader {
  readonly attributes: Record<string, string>;
  constructor(attributes: Record<string, string>) {
    this.attributes = attributes;
  }
  has(key: string): boolean {
    return this.attributes[key] !== undefined;
  }
  text(key: string): string | undefined {
    return this.attributes[key];
  }
  /** Absent and empty both mean unset (v0.3.1 writes "" for a missing hostname). */
  nonEmpty(key: string): string | undefined {
    const value = this.attributes[key];
    return value === '' ? undefined : value;
  }
  required(key: string): string {
    const value = this.nonEmpty(key);
    if (value === undefined) throw new MalformedInstance(`missing ${key}`);
    return value;
  }
  int(key: string, min: number, max: number): number | undefined {
    const raw = this.attributes[key];
    if (raw === undefined) return undefined;
    const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max)
      throw new MalformedInstance(`${key} "${raw}" is not a whole number from ${min} to ${max}`);
    return n;
  }
  oneOf<T extends string>(key: string, values: readonly T[]): T | undefined {
    const raw = this.attributes[key];
    if (raw === undefined) return undefined;
    if (!(values as readonly string[]).includes(raw))
      throw new MalformedInstance(`${key} "${raw}" is not one of ${values.join(', ')}`);
    return raw as T;
  }
  bool(key: string): boolean | undefined {
    const raw = this.attributes[key];
    if (raw === undefined) return undefined;
    // v0.3.1 parses with Go's strconv.ParseBool; accept what it accepts.
    if (/^(1|t|true)$/i.test(raw)) return true;
    if (/^(0|f|false)$/i.test(raw)) return false;
    throw new MalformedInstance(`${key} "${raw}" is not true or false`);
  }
  stringMap(key: string): Record<string, string> {
    const raw = this.attributes[key];
    if (raw === undefined || raw === '') return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new MalformedInstance(`${key} is not JSON`);
    }
    if (
      typeof parsed !== 'object' ||
      parsed === null ||
      Array.isArray(parsed) ||
      Object.values(parsed).some((v) => typeof v !== 'string')
    ) {
      throw new MalformedInstance(`${key} is not a JSON object of strings`);
    }
    return parsed as Record<string, string>;
  }
}

const PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];
const SERVICE_TYPES: readonly ServiceType[] = ['ClusterSetIP', 'Headless'];
const MAX_PORT = 65535;

/** Service-level facts as one instance states them. */
type InstanceServiceProperties = Omit<ExportedServiceProperties, 'ports'> & {
  exportCreationTimestamp: number;
};

interface DecodedInstance {
  id: string;
  /** Written by this controller (preferred over a v0.3.1 instance of the same cluster while it migrates). */
  ours: boolean;
  clusterId: string;
  service: InstanceServiceProperties;
  servicePort?: ServicePort;
  endpoint?: {
    address: string;
    ready: boolean;
    hostname?: string;
    nodeName?: string;
    zone?: string;
    port?: EndpointPort;
  };
}

function readServiceProperties(r: AttributeReader): InstanceServiceProperties {
  const timestamp = r.int(ATTR.SERVICE_EXPORT_CREATION_TIMESTAMP, 0, Number.MAX_SAFE_INTEGER);
  if (timestamp === undefined) throw new MalformedInstance(`missing ${ATTR.SERVICE_EXPORT_CREATION_TIMESTAMP}`);
  const service: InstanceServiceProperties = {
    type: r.oneOf(ATTR.SERVICE_TYPE, SERVICE_TYPES) ?? 'ClusterSetIP',
    exportCreationTimestamp: timestamp,
    sessionAffinity: r.oneOf(ATTR.SESSION_AFFINITY, ['ClientIP', 'None'] as const) ?? 'None',
    exportedLabels: r.stringMap(ATTR.EXPORTED_LABELS),
    exportedAnnotations: r.stringMap(ATTR.EXPORTED_ANNOTATIONS),
    // v0.3.1 does not record families: none stated, which agrees with any family in conflict checks (conflicts.ts).
    ipFamilies: [],
  };
  const timeout = r.int(ATTR.SESSION_AFFINITY_TIMEOUT_SECONDS, 0, Number.MAX_SAFE_INTEGER);
  if (timeout !== undefined) service.sessionAffinityTimeoutSeconds = timeout;
  const itp = r.oneOf(ATTR.INTERNAL_TRAFFIC_POLICY, ['Cluster', 'Local'] as const);
  if (itp !== undefined) service.internalTrafficPolicy = itp;
  const td = r.nonEmpty(ATTR.TRAFFIC_DISTRIBUTION);
  if (td !== undefined) service.trafficDistribution = td;
  const families = r.nonEmpty(ATTR.IP_FAMILIES);
  if (families !== undefined) {
    const list = families.split(',');
    if (list.some((f) => f !== 'IPv4' && f !== 'IPv6'))
      throw new MalformedInstance(`${ATTR.IP_FAMILIES} "${families}" is not a list of IPv4, IPv6`);
    service.ipFamilies = list as IPFamily[];
  }
  return service;
}

function readServicePort(r: AttributeReader): ServicePort {
  const port = r.int(ATTR.SERVICE_PORT, 1, MAX_PORT)!;
  const out: ServicePort = {
    name: r.text(ATTR.SERVICE_PORT_NAME) ?? '',
    protocol: r.oneOf(ATTR.SERVICE_PROTOCOL, PROTOCOLS) ?? 'TCP',
    port,
    targetPort: r.nonEmpty(ATTR.SERVICE_TARGET_PORT) ?? String(port),
  };
  const app = r.nonEmpty(ATTR.SERVICE_APP_PROTOCOL);
  if (app !== undefined) out.appProtocol = app;
  return out;
}

function readEndpointPort(r: AttributeReader): EndpointPort {
  const out: EndpointPort = {
    name: r.text(ATTR.ENDPOINT_PORT_NAME) ?? '',
    protocol: r.oneOf(ATTR.ENDPOINT_PROTOCOL, PROTOCOLS) ?? 'TCP',
    port: r.int(ATTR.PORT, 1, MAX_PORT)!,
  };
  const app = r.nonEmpty(ATTR.ENDPOINT_APP_PROTOCOL);
  if (app !== undefined) out.appProtocol = app;
  return out;
}

/** v0.3.1 prefers AWS_INSTANCE_IPV6 when both are present; so do we. */
function readAddress(r: AttributeReader): string | undefined {
  const [key, family] = r.has(ATTR.IPV6) ? [ATTR.IPV6, 6] : [ATTR.IPV4, 4];
  const address = r.nonEmpty(key);
  if (address !== undefined && isIP(address) !== family)
    throw new MalformedInstance(`${key} "${address}" is not an IPv${family} address`);
  return address;
}

function decodeInstance(instance: CloudMapInstance, clusterId: string): DecodedInstance {
  const r = new AttributeReader(instance.attributes);
  const kind = r.oneOf(ATTR.INSTANCE_KIND, [INSTANCE_KIND_SERVICE]);
  const decoded: DecodedInstance = {
    id: instance.id,
    ours: parseInstanceId(instance.id)?.format === 'mcs-cloudmap',
    clusterId,
    service: readServiceProperties(r),
  };
  const address = readAddress(r);
  const hasServicePort = r.has(ATTR.SERVICE_PORT);
  const hasEndpointPort = r.has(ATTR.PORT);
  if (hasServicePort) decoded.servicePort = readServicePort(r);
  if (kind === INSTANCE_KIND_SERVICE) {
    // Never an endpoint, whatever else it carries.
    if (address !== undefined || hasEndpointPort)
      throw new MalformedInstance(
        `an ${ATTR.INSTANCE_KIND}=${INSTANCE_KIND_SERVICE} instance must not carry an address or ${ATTR.PORT}`,
      );
    return decoded;
  }
  if (address === undefined) throw new MalformedInstance(`missing ${ATTR.IPV4} or ${ATTR.IPV6}`);
  if (hasServicePort !== hasEndpointPort)
    throw new MalformedInstance(`${ATTR.PORT} and ${ATTR.SERVICE_PORT} must be both present or both absent`);
  decoded.endpoint = { address, ready: r.bool(ATTR.READY) ?? true };
  const hostname = r.nonEmpty(ATTR.HOSTNAME);
  const nodeName = r.nonEmpty(ATTR.NODENAME);
  if (hostname !== undefined) decoded.endpoint.hostname = hostname;
  if (nodeName !== undefined) decoded.endpoint.nodeName = nodeName;
  const zone = r.nonEmpty(ATTR.ZONE);
  if (zone !== undefined) decoded.endpoint.zone = zone;
  if (hasEndpointPort) decoded.endpoint.port = readEndpointPort(r);
  return decoded;
}

/** One cluster's instances → its ClusterExport. Instances come ours first, then by id; the first one says it wins. */
function assembleExport(
  decoded: readonly DecodedInstance[],
  clustersetId: string,
  namespace: string,
  name: string,
): ClusterExport {
  const first = decoded[0]!;
  const ports = new Map<string, ServicePort>();
  const endpoints = new Map<string, ExportedEndpoint>();
  for (const d of decoded) {
    if (d.servicePort !== undefined && !ports.has(portKey(d.servicePort)))
      ports.set(portKey(d.servicePort), d.servicePort);
    if (d.endpoint === undefined) continue;
    const { port, ...facts } = d.endpoint;
    let endpoint = endpoints.get(facts.address);
    if (endpoint === undefined) {
      endpoint = { ...facts, ports: [] };
      endpoints.set(facts.address, endpoint);
    }
    if (port !== undefined && !endpoint.ports.some((p) => portKey(p) === portKey(port))) endpoint.ports.push(port);
  }
  return normalizeClusterExport({
    ...first.service,
    clusterId: first.clusterId,
    clustersetId,
    namespace,
    name,
    ports: [...ports.values()],
    endpoints: [...endpoints.values()],
  });
}

/**
 * Every cluster's instances of one Cloud Map service → one ClusterExport per exporting cluster of our ClusterSet (M5).
 * Reads v0.3.1's instances too (missing optional attributes get defaults). Duplicates of an id count once, the last
 * one listed. Malformed instances are skipped and reported, never thrown. Address-less instances contribute ports and
 * service properties only, never endpoints.
 */
export function exportsFromInstances(
  instances: readonly CloudMapInstance[],
  target: { clustersetId: string; namespace: string; name: string },
): ExportsFromInstances {
  const skipped: SkippedInstance[] = [];
  const byCluster = new Map<string, DecodedInstance[]>();
  for (const instance of latestById(instances).values()) {
    const clusterId = instance.attributes[ATTR.CLUSTER_ID];
    const clustersetId = instance.attributes[ATTR.CLUSTERSET_ID];
    if (!clusterId || !clustersetId) {
      skipped.push({
        id: instance.id,
        ...(clusterId ? { clusterId } : {}),
        reason: `missing ${clusterId ? ATTR.CLUSTERSET_ID : ATTR.CLUSTER_ID}`,
      });
      continue;
    }
    if (clustersetId !== target.clustersetId) continue;
    try {
      const decoded = decodeInstance(instance, clusterId);
      const list = byCluster.get(clusterId);
      if (list === undefined) byCluster.set(clusterId, [decoded]);
      else list.push(decoded);
    } catch (err) {
      if (!(err instanceof MalformedInstance)) throw err;
      skipped.push({ id: instance.id, clusterId, reason: err.message });
    }
  }
  const exports = [...byCluster.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([, decoded]) => {
      const ordered = [...decoded].sort((a, b) => Number(b.ours) - Number(a.ours) || compareText(a.id, b.id));
      return assembleExport(ordered, target.clustersetId, target.namespace, target.name);
    });
  return { exports, skipped };
}
