// The objects the admission rules read, as they arrive in a review, and the checks that make them safe to read. Objects of our own kinds are checked against
// the CRD schema before they are treated as these types; Services and EndpointSlices only need well-formed metadata.

import type * as Stored from '../../kube/objects.ts';
import type { ObjectMeta as StoredObjectMeta } from '../../kube/resources.ts';

/** Metadata as in src/kube, but a request may not name its object yet (generateName). */
export type ObjectMeta = Partial<StoredObjectMeta>;

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

/** An object of a kind as src/kube/objects.ts reads it, as it arrives in a review: its metadata may be partial. */
export type Incoming<
  T extends
    | Stored.ServiceObject
    | Stored.ServiceExportObject
    | Stored.ServiceImportObject
    | Stored.ClusterPropertyObject,
> = Omit<T, 'metadata'> & KubeObject;

export type ServiceExportObject = Incoming<Stored.ServiceExportObject>;
export type ServiceImportObject = Incoming<Stored.ServiceImportObject>;
export type ClusterPropertyObject = Incoming<Stored.ClusterPropertyObject>;
export type ServiceObject = Incoming<Stored.ServiceObject>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Undefined when `object` has the metadata a rule relies on (an object with string name/namespace, string-map labels, a
 * string list of finalizers, when present); otherwise what is wrong with it.
 */
export function metadataError(object: unknown): string | undefined {
  if (!isRecord(object)) return 'the object is not a JSON object';
  const m = object.metadata;
  if (!isRecord(m)) return 'metadata: must be an object';
  for (const field of ['name', 'namespace', 'creationTimestamp'] as const) {
    if (m[field] !== undefined && typeof m[field] !== 'string') return `metadata.${field}: must be a string`;
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = m[field];
    if (
      map !== undefined &&
      map !== null &&
      (!isRecord(map) || Object.values(map).some((v) => typeof v !== 'string'))
    ) {
      return `metadata.${field}: must map strings to strings`;
    }
  }
  if (
    m.finalizers !== undefined &&
    m.finalizers !== null &&
    (!Array.isArray(m.finalizers) || m.finalizers.some((f) => typeof f !== 'string'))
  ) {
    return 'metadata.finalizers: must be a list of strings';
  }
  return undefined;
}

/** Undefined when `object` is a Service the rules can read (types as the apiserver guarantees them); else what is wrong. */
export function serviceError(object: unknown): string | undefined {
  const meta = metadataError(object);
  if (meta !== undefined) return meta;
  const spec = (object as Record<string, unknown>).spec;
  if (spec === undefined) return undefined;
  if (!isRecord(spec)) return 'spec: must be an object';
  for (const field of [
    'type',
    'clusterIP',
    'sessionAffinity',
    'internalTrafficPolicy',
    'trafficDistribution',
  ] as const) {
    if (spec[field] !== undefined && spec[field] !== null && typeof spec[field] !== 'string')
      return `spec.${field}: must be a string`;
  }
  if (spec.ports !== undefined && spec.ports !== null) {
    if (!Array.isArray(spec.ports)) return 'spec.ports: must be a list';
    const bad = spec.ports.findIndex(
      (p) =>
        !isRecord(p) ||
        !Number.isInteger(p.port) ||
        (p.name !== undefined && typeof p.name !== 'string') ||
        (p.protocol !== undefined && typeof p.protocol !== 'string'),
    );
    if (bad >= 0) return `spec.ports[${bad}]: must have an integer port and string name and protocol`;
  }
  if (
    spec.ipFamilies !== undefined &&
    spec.ipFamilies !== null &&
    (!Array.isArray(spec.ipFamilies) || spec.ipFamilies.some((f) => typeof f !== 'string'))
  ) {
    return 'spec.ipFamilies: must be a list of strings';
  }
  const clientIP =
    isRecord(spec.sessionAffinityConfig) && isRecord(spec.sessionAffinityConfig.clientIP)
      ? spec.sessionAffinityConfig.clientIP
      : undefined;
  if (clientIP?.timeoutSeconds !== undefined && !Number.isInteger(clientIP.timeoutSeconds))
    return 'spec.sessionAffinityConfig.clientIP.timeoutSeconds: must be an integer';
  return undefined;
}
