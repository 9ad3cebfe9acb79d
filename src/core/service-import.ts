// The ServiceImport of one multi-cluster service (I1–I5): what it should say given the resolved exports and the derived
// Service, and whether the stored object needs a write.
import type { ImportResolution } from './conflicts.ts';
import { CONDITION_READY, conditionTime, setCondition } from './conditions.ts';
import { exportRecordAnnotations } from './export-record.ts';
import { partialImportMessage, type QuotaCounts } from './instance-quota.ts';
import { CONTROLLER_NAME, LABEL_CREATED_BY, MCS_GROUP, STORAGE_VERSION } from './names.ts';
import { portListKey, toPortSpec, type PortSpec, type StoredPort } from './ports.ts';
import type { Condition, IPFamily, ServiceType } from './types.ts';

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** Makes the ServiceImport the owner of what is derived from it, so Kubernetes deletes those objects with it. */
export function serviceImportOwnerReference(name: string, uid: string): OwnerReference {
  return { apiVersion: `${MCS_GROUP}/${STORAGE_VERSION}`, kind: 'ServiceImport', name, uid, controller: true };
}

/** The AWS controller v0.3.1 names its derived Service in this annotation of every ServiceImport it creates. */
export const V031_DERIVED_SERVICE_ANNOTATION = 'multicluster.k8s.aws/derived-service';

/**
 * Who keeps a ServiceImport found in the cluster current (I6, M3): `ours` when we created it; `v0.3.1` when the AWS
 * controller v0.3.1 did (its derived-service annotation, without our label), which we take over: a cluster that
 * migrated has stopped v0.3.1 (docs/migration.md step 2), nothing else would update it, and deleting it first would
 * leave the cluster without the import for a moment (the webhook lets only the worker delete one anyway); `other`:
 * someone else's, left alone.
 */
export function serviceImportKeeper(metadata: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}): 'ours' | 'v0.3.1' | 'other' {
  if (metadata.labels?.[LABEL_CREATED_BY] === CONTROLLER_NAME) return 'ours';
  return metadata.annotations?.[V031_DERIVED_SERVICE_ANNOTATION] === undefined ? 'other' : 'v0.3.1';
}

export interface ServiceImportSpec {
  ports: PortSpec[];
  ips?: string[];
  type: ServiceType;
  sessionAffinity: 'ClientIP' | 'None';
  sessionAffinityConfig?: { clientIP: { timeoutSeconds: number } };
  ipFamilies?: IPFamily[];
  internalTrafficPolicy?: 'Cluster' | 'Local';
  trafficDistribution?: string;
}

/** mcs-api v0.5.1 `status.endpointSliceObjects`: whether the import's EndpointSlices are published for consumers to read. */
export type EndpointSliceObjects = 'Present' | 'Absent';

/**
 * What this worker states in `status.endpointSliceObjects`. GEP-1748 Gateway API implementations route to a ServiceImport's
 * endpoints by reading its EndpointSlices (label multicluster.kubernetes.io/service-name) only when it says Present;
 * since KEP-1645 makes the slices optional, Absent tells them to use the import's IPs or to report the backend as
 * unsupported. This worker publishes the slices of every import it keeps, ClusterSetIP and Headless alike (kube-proxy
 * programs the derived Service from them, S1–S4), and writes the status only once they are in place, so its answer is
 * always Present; a service without endpoints then has no slice, which a consumer reads as no endpoints.
 */
export const ENDPOINT_SLICE_OBJECTS: EndpointSliceObjects = 'Present';

export interface DesiredServiceImport {
  spec: ServiceImportSpec;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  status: { clusters: Array<{ cluster: string }>; conditions: Condition[]; endpointSliceObjects: EndpointSliceObjects };
}

export interface ServiceImportInput {
  namespace: string;
  name: string;
  resolution: Pick<ImportResolution, 'properties' | 'clusters' | 'exports'>;
  derivedServiceName: string;
  /** The derived Service as stored now; undefined while it does not exist. */
  derivedService?: { clusterIPs: readonly string[]; ipFamilies: readonly string[] } | undefined;
  /** The API server's reason for refusing the derived Service's IP families (I5), when it did. */
  ipFamilyNotSupported?: string | undefined;
  /** metadata.generation of the stored ServiceImport, for the condition's observedGeneration. */
  generation?: number | undefined;
  /** Conditions stored now: a Ready condition whose status does not change keeps its lastTransitionTime. */
  currentConditions?: readonly Condition[] | undefined;
  /** RFC 3339 time of this reconcile. */
  now: string;
  /**
   * Exporting clusters whose heartbeat is older than the dead-cluster TTL (cluster-liveness.ts), each with when it was
   * heard last (Unix ms): their endpoints are withdrawn, so they leave `status.clusters` and the Ready message names them.
   */
  silent?: ReadonlyMap<string, number> | undefined;
  /** Exporting clusters whose export Cloud Map holds only part of, with the counts (instance-quota.ts, M8). */
  partial?: ReadonlyMap<string, QuotaCounts> | undefined;
}

/** Reasons of the ServiceImport's Ready condition (I5). */
export type ServiceImportReadyReason = 'Ready' | 'Pending' | 'IPFamilyNotSupported' | 'PartialExport';

/**
 * I1–I5: spec from the resolved properties (oldest export wins, ports merged), `spec.ips` = the derived Service's
 * ClusterIPs in ipFamilies order for ClusterSetIP and none for Headless (I4), labels and annotations = the exported ones
 * (E7) plus our created-by label and the export record annotation (export-record.ts, for the webhook), `status.clusters` = the exporting clusters (I3) and a Ready condition (I5).
 * A silent cluster still counts for the spec (ports, type, conflicts: every cluster resolves the same Cloud Map data,
 * X1) but not in `status.clusters`: it serves no endpoints here until it is heard again.
 * When the exports state no IP families (peers running a controller that does not record them), the derived Service's
 * families are used.
 */
export function desiredServiceImport(input: ServiceImportInput): DesiredServiceImport {
  const p = input.resolution.properties;
  const ipFamilies = p.ipFamilies.length > 0 ? p.ipFamilies : knownFamilies(input.derivedService?.ipFamilies ?? []);
  const ips = p.type === 'ClusterSetIP' ? ipsInFamilyOrder(input.derivedService?.clusterIPs ?? [], ipFamilies) : [];
  const spec: ServiceImportSpec = {
    ports: p.ports.map(toPortSpec),
    ...(ips.length > 0 ? { ips } : {}),
    type: p.type,
    sessionAffinity: p.sessionAffinity,
    ...(p.sessionAffinity === 'ClientIP' && p.sessionAffinityTimeoutSeconds !== undefined
      ? { sessionAffinityConfig: { clientIP: { timeoutSeconds: p.sessionAffinityTimeoutSeconds } } }
      : {}),
    ...(ipFamilies.length > 0 ? { ipFamilies: [...ipFamilies] } : {}),
    ...(p.internalTrafficPolicy === undefined ? {} : { internalTrafficPolicy: p.internalTrafficPolicy }),
    ...(p.trafficDistribution === undefined ? {} : { trafficDistribution: p.trafficDistribution }),
  };
  const ready = readyCondition(input, ipFamilies, ips);
  const conditions = setCondition(
    input.currentConditions ?? [],
    {
      type: CONDITION_READY,
      ...ready,
      ...(input.generation === undefined ? {} : { observedGeneration: input.generation }),
    },
    new Date(input.now),
  );
  return {
    spec,
    labels: { ...p.exportedLabels, [LABEL_CREATED_BY]: CONTROLLER_NAME },
    annotations: { ...p.exportedAnnotations, ...exportRecordAnnotations(input.resolution.exports) },
    status: {
      clusters: input.resolution.clusters
        .filter((cluster) => !input.silent?.has(cluster))
        .map((cluster) => ({ cluster })),
      conditions,
      endpointSliceObjects: ENDPOINT_SLICE_OBJECTS,
    },
  };
}

function readyCondition(
  input: ServiceImportInput,
  ipFamilies: readonly IPFamily[],
  ips: readonly string[],
): { status: Condition['status']; reason: ServiceImportReadyReason; message: string } {
  const derived = `derived Service ${input.namespace}/${input.derivedServiceName}`;
  if (input.ipFamilyNotSupported !== undefined) {
    return {
      status: 'False',
      reason: 'IPFamilyNotSupported',
      message:
        `This cluster refused the ${derived} for IP families ${ipFamilies.join(',') || '(cluster default)'} (${input.ipFamilyNotSupported}); ` +
        'enable those families on this cluster or export the service with families it supports.',
    };
  }
  if (input.derivedService === undefined) {
    return { status: 'False', reason: 'Pending', message: `Waiting for the ${derived} to be created.` };
  }
  if (input.resolution.properties.type === 'ClusterSetIP') {
    const missing =
      ipFamilies.length > 0
        ? ipFamilies.filter((f) => !ips.some((ip) => familyOf(ip) === f))
        : ips.length > 0
          ? []
          : ['any'];
    if (missing.length > 0) {
      return {
        status: 'False',
        reason: 'Pending',
        message: `Waiting for the ${derived} to be given a ClusterIP (${missing.join(', ')}).`,
      };
    }
  }
  // Not Ready: the endpoints imported are only part of what the clusters export (M8).
  if (input.partial !== undefined && input.partial.size > 0)
    return { status: 'False', reason: 'PartialExport', message: partialImportMessage(input.partial) };
  const silent = input.resolution.clusters.filter((c) => input.silent?.has(c));
  const live = input.resolution.clusters.filter((c) => !input.silent?.has(c));
  if (silent.length === 0)
    return {
      status: 'True',
      reason: 'Ready',
      message: `Imported from ${plural(live.length, 'cluster')} ${live.join(', ')}.`,
    };
  // Still Ready (I5 has no reason for it): the import and its derived Service are in place and serve the live
  // clusters; a silent peer is news about that peer, and it comes back on its own.
  const heard = silent.map((c) => `${c} (last heard ${conditionTime(new Date(input.silent!.get(c)!))})`).join(', ');
  const from =
    live.length === 0
      ? 'No cluster serves endpoints'
      : `Imported from ${plural(live.length, 'cluster')} ${live.join(', ')}`;
  return {
    status: 'True',
    reason: 'Ready',
    message:
      `${from}; endpoints of silent ${plural(silent.length, 'cluster')} ${heard} withdrawn: no heartbeat in Cloud Map for longer than ` +
      '--dead-cluster-ttl. They return once its worker runs again; for a cluster gone for good, reap it with --reap-dead-clusters-after.',
  };
}

function ipsInFamilyOrder(clusterIPs: readonly string[], ipFamilies: readonly IPFamily[]): string[] {
  const assigned = clusterIPs.filter((ip) => ip !== '' && ip !== 'None');
  if (ipFamilies.length === 0) return [...assigned];
  return ipFamilies.flatMap((f) => assigned.filter((ip) => familyOf(ip) === f).slice(0, 1));
}

function familyOf(ip: string): IPFamily {
  return ip.includes(':') ? 'IPv6' : 'IPv4';
}

function knownFamilies(families: readonly string[]): IPFamily[] {
  return families.filter((f): f is IPFamily => f === 'IPv4' || f === 'IPv6');
}

function plural(n: number, noun: string): string {
  return n === 1 ? noun : `${noun}s`;
}

/** A ServiceImport read back from the API server (metadata, spec and status as JSON). */
export interface StoredServiceImport {
  metadata?:
    | { labels?: Record<string, string> | undefined; annotations?: Record<string, string> | undefined }
    | undefined;
  spec?:
    | {
        ports?: StoredPort[] | undefined;
        ips?: string[] | undefined;
        type?: string | undefined;
        sessionAffinity?: string | undefined;
        sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number | undefined } | undefined } | undefined;
        ipFamilies?: string[] | undefined;
        internalTrafficPolicy?: string | undefined;
        trafficDistribution?: string | undefined;
      }
    | undefined;
  status?:
    | {
        clusters?: Array<{ cluster?: string | undefined }> | undefined;
        conditions?: Array<Partial<Condition>> | undefined;
        endpointSliceObjects?: string | undefined;
      }
    | undefined;
}

/** Which parts of the stored ServiceImport differ from the desired one; `status` is written through the status subresource. */
export interface ServiceImportChanges {
  metadata: boolean;
  spec: boolean;
  status: boolean;
}

/**
 * Compares what this controller owns: labels and annotations exactly (only the controller writes ServiceImports, I6, and
 * an unexported label must disappear, E7), the spec fields we set (port order and unknown fields of newer peers do
 * not count), the exporting clusters as a set and our conditions without their lastTransitionTime.
 */
export function serviceImportNeedsUpdate(
  desired: DesiredServiceImport,
  existing: StoredServiceImport,
): ServiceImportChanges {
  return {
    metadata:
      !sameMap(desired.labels, existing.metadata?.labels) ||
      !sameMap(desired.annotations, existing.metadata?.annotations),
    spec: specKey(desired.spec) !== specKey(existing.spec ?? {}),
    status:
      statusKey(
        desired.status,
        desired.status.conditions.map((c) => c.type),
      ) !==
      statusKey(
        existing.status ?? {},
        desired.status.conditions.map((c) => c.type),
      ),
  };
}

function specKey(spec: NonNullable<StoredServiceImport['spec']>): string {
  return JSON.stringify([
    portListKey(spec.ports),
    spec.ips ?? [],
    spec.type ?? '',
    spec.sessionAffinity ?? 'None',
    spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? null,
    spec.ipFamilies ?? [],
    spec.internalTrafficPolicy ?? null,
    spec.trafficDistribution ?? null,
  ]);
}

function statusKey(status: NonNullable<StoredServiceImport['status']>, conditionTypes: readonly string[]): string {
  const clusters = (status.clusters ?? []).map((c) => c.cluster ?? '').sort();
  const conditions = conditionTypes.map((type) => {
    const c = status.conditions?.find((x) => x.type === type);
    return c === undefined ? null : [c.status, c.reason, c.message, c.observedGeneration ?? null];
  });
  return JSON.stringify([clusters, conditions, status.endpointSliceObjects ?? null]);
}

function sameMap(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>> | undefined): boolean {
  const other = b ?? {};
  return Object.keys(a).length === Object.keys(other).length && Object.entries(a).every(([k, v]) => other[k] === v);
}
