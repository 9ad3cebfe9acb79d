// The export record: what every exporting cluster exports for one multi-cluster service (the facts conflict resolution
// reads, X1–X3), as the worker leaves it on the ServiceImport in one annotation. The webhook sees only its own cluster,
// and the ServiceImport's spec holds the merged result, not who exported what or when; with the record it runs the
// worker's own resolveImport at admission, so its warnings name the same winner and the same reasons as the Conflict
// condition the worker sets later.
import type { ExportFacts } from './conflicts.ts';
import { EXPORT_RECORD_ANNOTATION } from './names.ts';
import type { IPFamily, Protocol, ServicePort, ServiceType } from './types.ts';

/**
 * Largest record written, in characters. Each cluster's entry is bounded by Cloud Map's attribute limits (exported
 * labels and annotations at most 1024 characters each), so about 50 clusters fit; past this the annotation is left
 * out rather than let the ServiceImport exceed the API server's 256 KiB limit on annotations (nothing is imported
 * less for it; the webhook then leaves conflicts to the worker's condition).
 */
export const EXPORT_RECORD_MAX = 128 * 1024;

/** The annotation carrying the record of `exports`; none when it would be larger than EXPORT_RECORD_MAX. */
export function exportRecordAnnotations(exports: readonly ExportFacts[]): Record<string, string> {
  const text = JSON.stringify(exports.map(recordEntry));
  return text.length <= EXPORT_RECORD_MAX ? { [EXPORT_RECORD_ANNOTATION]: text } : {};
}

/** The record read back from an annotation value; undefined when absent or malformed (never throws). */
export function decodeExportRecord(text: string | undefined): ExportFacts[] | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const entries = parsed.map(readEntry);
  return entries.every((e): e is ExportFacts => e !== undefined) ? entries : undefined;
}

function recordEntry(e: ExportFacts): ExportFacts {
  return {
    clusterId: e.clusterId,
    exportCreationTimestamp: e.exportCreationTimestamp,
    type: e.type,
    // targetPort is not part of the merge (X2) and stays out of the record.
    ports: e.ports.map((p) => ({
      name: p.name,
      protocol: p.protocol,
      port: p.port,
      ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
    })),
    sessionAffinity: e.sessionAffinity,
    ...(e.sessionAffinityTimeoutSeconds === undefined
      ? {}
      : { sessionAffinityTimeoutSeconds: e.sessionAffinityTimeoutSeconds }),
    ...(e.internalTrafficPolicy === undefined ? {} : { internalTrafficPolicy: e.internalTrafficPolicy }),
    ...(e.trafficDistribution === undefined ? {} : { trafficDistribution: e.trafficDistribution }),
    ipFamilies: [...e.ipFamilies],
    exportedLabels: { ...e.exportedLabels },
    exportedAnnotations: { ...e.exportedAnnotations },
  };
}

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const oneOf =
  <T extends string>(values: readonly T[]) =>
  (v: unknown): v is T =>
    typeof v === 'string' && (values as readonly string[]).includes(v);
const isType = oneOf<ServiceType>(['ClusterSetIP', 'Headless']);
const isProtocol = oneOf<Protocol>(['TCP', 'UDP', 'SCTP']);
const isFamily = oneOf<IPFamily>(['IPv4', 'IPv6']);
const isAffinity = oneOf(['ClientIP', 'None'] as const);
const isPolicy = oneOf(['Cluster', 'Local'] as const);
const isStringMap = (v: unknown): v is Record<string, string> =>
  isRecord(v) && Object.values(v).every((x) => typeof x === 'string');
const optional = <T>(v: unknown, is: (x: unknown) => x is T): boolean => v === undefined || is(v);
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isString = (v: unknown): v is string => typeof v === 'string';

function readPort(v: unknown): ServicePort | undefined {
  if (
    !isRecord(v) ||
    !isString(v.name) ||
    !isProtocol(v.protocol) ||
    !Number.isInteger(v.port) ||
    !optional(v.appProtocol, isString)
  )
    return undefined;
  return {
    name: v.name,
    protocol: v.protocol,
    port: v.port as number,
    ...(v.appProtocol === undefined ? {} : { appProtocol: v.appProtocol as string }),
  };
}

function readEntry(v: unknown): ExportFacts | undefined {
  if (
    !isRecord(v) ||
    !isString(v.clusterId) ||
    !isNumber(v.exportCreationTimestamp) ||
    !isType(v.type) ||
    !isAffinity(v.sessionAffinity)
  )
    return undefined;
  if (!Array.isArray(v.ports) || !Array.isArray(v.ipFamilies) || !v.ipFamilies.every(isFamily)) return undefined;
  if (!isStringMap(v.exportedLabels) || !isStringMap(v.exportedAnnotations)) return undefined;
  if (
    !optional(v.sessionAffinityTimeoutSeconds, isNumber) ||
    !optional(v.internalTrafficPolicy, isPolicy) ||
    !optional(v.trafficDistribution, isString)
  )
    return undefined;
  const ports = v.ports.map(readPort);
  if (!ports.every((p): p is ServicePort => p !== undefined)) return undefined;
  return recordEntry({
    clusterId: v.clusterId,
    exportCreationTimestamp: v.exportCreationTimestamp,
    type: v.type,
    ports,
    sessionAffinity: v.sessionAffinity,
    ...(v.sessionAffinityTimeoutSeconds === undefined
      ? {}
      : { sessionAffinityTimeoutSeconds: v.sessionAffinityTimeoutSeconds as number }),
    ...(v.internalTrafficPolicy === undefined
      ? {}
      : { internalTrafficPolicy: v.internalTrafficPolicy as 'Cluster' | 'Local' }),
    ...(v.trafficDistribution === undefined ? {} : { trafficDistribution: v.trafficDistribution as string }),
    ipFamilies: v.ipFamilies,
    exportedLabels: v.exportedLabels,
    exportedAnnotations: v.exportedAnnotations,
  });
}
