// The derived Service of a ServiceImport (I4): a selector-less Service in the importing cluster whose ClusterIPs become
// the ServiceImport's ips and which kube-proxy programs from our EndpointSlices (S2 kubernetes.io/service-name).
import { DNS_LABEL_MAX, hashedName, shortHash } from './hashed-names.ts';
import { CONTROLLER_NAME, DERIVED_SERVICE_PREFIX, LABEL_CREATED_BY, LABEL_SERVICE_NAME } from './names.ts';
import { portListKey, toPortSpec, type PortSpec, type StoredPort } from './ports.ts';
import type { OwnerReference } from './service-import.ts';
import type { ExportedServiceProperties, IPFamily } from './types.ts';

const NAME_HASH_LENGTH = 10;

/**
 * `imported-<name>-<hash>`: a DNS-1035 label of at most 63 characters, the same for the same namespace/name in every
 * run and every cluster; the name part is shortened when needed and the hash keeps shortened names distinct.
 */
export function derivedServiceName(namespace: string, name: string): string {
  return (
    DERIVED_SERVICE_PREFIX +
    hashedName(
      name,
      shortHash([namespace, name], NAME_HASH_LENGTH),
      undefined,
      DNS_LABEL_MAX - DERIVED_SERVICE_PREFIX.length,
    )
  );
}

export interface DerivedServicePort extends PortSpec {
  /** Equal to port: a selector-less Service takes its endpoints' ports from the EndpointSlices, matched by name. */
  targetPort: number;
}

export interface DesiredDerivedService {
  apiVersion: 'v1';
  kind: 'Service';
  metadata: { name: string; namespace: string; labels: Record<string, string>; ownerReferences: OwnerReference[] };
  spec: {
    type: 'ClusterIP';
    /** 'None' for a Headless import; otherwise left to the API server, which allocates it. */
    clusterIP?: 'None';
    ports: DerivedServicePort[];
    ipFamilies?: IPFamily[];
    ipFamilyPolicy?: 'SingleStack' | 'RequireDualStack';
    sessionAffinity: 'ClientIP' | 'None';
    sessionAffinityConfig?: { clientIP: { timeoutSeconds: number } };
    trafficDistribution?: 'PreferClose';
  };
}

export interface DerivedServiceInput {
  namespace: string;
  importName: string;
  /** Owner reference to the ServiceImport (serviceImportOwnerReference). */
  owner: OwnerReference;
  properties: Pick<
    ExportedServiceProperties,
    'type' | 'ports' | 'sessionAffinity' | 'sessionAffinityTimeoutSeconds' | 'ipFamilies' | 'trafficDistribution'
  >;
}

/**
 * I4: ClusterIP Service with the merged ports, no selector, `clusterIP: None` for Headless, the import's IP families
 * (one family SingleStack, two RequireDualStack: a cluster that lacks a family refuses it, which the ServiceImport
 * reports as IPFamilyNotSupported, I5) and session affinity. internalTrafficPolicy stays on the ServiceImport only: on
 * this Service, Local would match the node names of other clusters' endpoints against this cluster's nodes.
 * trafficDistribution PreferClose is passed on: the imported endpoints carry their zone as hints (endpoint-slices.ts),
 * so kube-proxy prefers endpoints in the node's zone where there are some, and uses them all where there are none.
 */
export function desiredDerivedService(input: DerivedServiceInput): DesiredDerivedService {
  const p = input.properties;
  const headless = p.type === 'Headless';
  // A Headless Service gets no IPs, so its families mean nothing; the API server picks them.
  const families = headless ? [] : p.ipFamilies;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: derivedServiceName(input.namespace, input.importName),
      namespace: input.namespace,
      labels: { [LABEL_CREATED_BY]: CONTROLLER_NAME, [LABEL_SERVICE_NAME]: input.importName },
      ownerReferences: [input.owner],
    },
    spec: {
      type: 'ClusterIP',
      ...(headless ? { clusterIP: 'None' as const } : {}),
      ports: p.ports.map((port) => ({ ...toPortSpec(port), targetPort: port.port })),
      ...(families.length > 0
        ? {
            ipFamilies: [...families],
            ipFamilyPolicy: families.length > 1 ? ('RequireDualStack' as const) : ('SingleStack' as const),
          }
        : {}),
      sessionAffinity: p.sessionAffinity,
      ...(p.sessionAffinity === 'ClientIP' && p.sessionAffinityTimeoutSeconds !== undefined
        ? { sessionAffinityConfig: { clientIP: { timeoutSeconds: p.sessionAffinityTimeoutSeconds } } }
        : {}),
      ...(p.trafficDistribution === 'PreferClose' ? { trafficDistribution: 'PreferClose' as const } : {}),
    },
  };
}

/** A Service read back from the API server (client-node's V1Service fits). */
export interface StoredService {
  metadata?:
    | {
        labels?: Record<string, string> | undefined;
        ownerReferences?: OwnerReference[] | undefined;
      }
    | undefined;
  spec?:
    | {
        type?: string | undefined;
        clusterIP?: string | undefined;
        ports?: Array<StoredPort & { targetPort?: number | string | undefined }> | undefined;
        selector?: Record<string, string> | undefined;
        ipFamilies?: string[] | undefined;
        ipFamilyPolicy?: string | undefined;
        sessionAffinity?: string | undefined;
        sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number | undefined } | undefined } | undefined;
        trafficDistribution?: string | undefined;
      }
    | undefined;
}

/**
 * What to do with the stored derived Service:
 * - `none`: it matches;
 * - `update`: send `patch` as a JSON merge patch (`application/merge-patch+json`); it never touches clusterIP/clusterIPs,
 *   and `null` values remove a field;
 * - `recreate`: delete and create it, because the change cannot be made in place (Headless ⇄ ClusterSetIP, or a new
 *   primary IP family); its ClusterIPs, and so the ServiceImport's ips, change.
 */
export type DerivedServiceChange =
  | { action: 'none' }
  | {
      action: 'update';
      fields: string[];
      patch: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
    }
  | { action: 'recreate'; why: string };

/**
 * Compares only what desiredDerivedService sets, with the API server's defaults applied (protocol TCP, targetPort =
 * port, sessionAffinity None, affinity timeout 10800) and server-set fields (clusterIP(s), nodePorts, families of a
 * Service whose families we leave to the server) ignored.
 */
export function derivedServiceNeedsUpdate(
  desired: DesiredDerivedService,
  existing: StoredService,
): DerivedServiceChange {
  const spec = existing.spec ?? {};
  const existingHeadless = spec.clusterIP === 'None';
  const desiredHeadless = desired.spec.clusterIP === 'None';
  if (existingHeadless !== desiredHeadless) {
    return {
      action: 'recreate',
      why: `the import changed from ${existingHeadless ? 'Headless' : 'ClusterSetIP'} to ${desiredHeadless ? 'Headless' : 'ClusterSetIP'}`,
    };
  }
  const wantedFamilies = desired.spec.ipFamilies;
  if (wantedFamilies !== undefined && spec.ipFamilies?.[0] !== undefined && spec.ipFamilies[0] !== wantedFamilies[0]) {
    return {
      action: 'recreate',
      why: `the primary IP family changed from ${spec.ipFamilies[0]} to ${wantedFamilies[0]}`,
    };
  }

  const fields: string[] = [];
  const specPatch: Record<string, unknown> = {};
  const metadataPatch: Record<string, unknown> = {};
  const labels = existing.metadata?.labels ?? {};
  if (Object.entries(desired.metadata.labels).some(([k, v]) => labels[k] !== v)) {
    fields.push('metadata.labels');
    metadataPatch.labels = desired.metadata.labels;
  }
  const owners = existing.metadata?.ownerReferences ?? [];
  const missingOwners = desired.metadata.ownerReferences.filter((o) => !owners.some((x) => x.uid === o.uid));
  if (missingOwners.length > 0) {
    fields.push('metadata.ownerReferences');
    metadataPatch.ownerReferences = [...owners, ...missingOwners];
  }
  if (spec.type !== 'ClusterIP') {
    fields.push('spec.type');
    specPatch.type = 'ClusterIP';
  }
  if (servicePortsKey(desired.spec.ports) !== servicePortsKey(spec.ports ?? [])) {
    fields.push('spec.ports');
    specPatch.ports = desired.spec.ports;
  }
  if (spec.selector !== undefined && Object.keys(spec.selector).length > 0) {
    fields.push('spec.selector');
    specPatch.selector = null;
  }
  if (
    wantedFamilies !== undefined &&
    (wantedFamilies.join(',') !== (spec.ipFamilies ?? []).join(',') ||
      desired.spec.ipFamilyPolicy !== spec.ipFamilyPolicy)
  ) {
    fields.push('spec.ipFamilies');
    specPatch.ipFamilies = wantedFamilies;
    specPatch.ipFamilyPolicy = desired.spec.ipFamilyPolicy;
  }
  if (desired.spec.sessionAffinity !== (spec.sessionAffinity ?? 'None')) {
    fields.push('spec.sessionAffinity');
    specPatch.sessionAffinity = desired.spec.sessionAffinity;
  }
  if (affinityTimeout(desired.spec) !== affinityTimeout(spec)) {
    fields.push('spec.sessionAffinityConfig');
    specPatch.sessionAffinityConfig = desired.spec.sessionAffinityConfig ?? null;
  }
  if ((desired.spec.trafficDistribution ?? '') !== (spec.trafficDistribution ?? '')) {
    fields.push('spec.trafficDistribution');
    specPatch.trafficDistribution = desired.spec.trafficDistribution ?? null;
  }
  if (fields.length === 0) return { action: 'none' };
  return {
    action: 'update',
    fields,
    patch: {
      ...(Object.keys(metadataPatch).length > 0 ? { metadata: metadataPatch } : {}),
      ...(Object.keys(specPatch).length > 0 ? { spec: specPatch } : {}),
    },
  };
}

function servicePortsKey(ports: ReadonlyArray<StoredPort & { targetPort?: number | string | undefined }>): string {
  return JSON.stringify([
    portListKey(ports),
    ports.map((p) => `${p.name ?? ''}=${p.targetPort ?? p.port ?? ''}`).sort(),
  ]);
}

/** The effective ClientIP timeout, or null without ClientIP affinity (the API server defaults it to 10800). */
function affinityTimeout(spec: {
  sessionAffinity?: string | undefined;
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number | undefined } | undefined } | undefined;
}): number | null {
  return spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800) : null;
}
