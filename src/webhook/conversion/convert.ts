// v1alpha1 ⇄ v1beta1 for ServiceExport, ServiceImport and ClusterProperty. Both versions have the same schema, so a
// conversion only sets apiVersion: every field, known or not, is kept, and kind/name/namespace/uid never change.
// Objects written by older controllers are normalised on the way so they validate on their next write.

import { ABOUT_GROUP, MCS_GROUP, VERSIONS } from '../../core/names.ts';

const GROUP_OF_KIND: Record<string, string> = {
  ServiceExport: MCS_GROUP,
  ServiceImport: MCS_GROUP,
  ClusterProperty: ABOUT_GROUP,
};

/** lastTransitionTime of a legacy condition without one, when the object has no creationTimestamp either. */
export const EPOCH = '1970-01-01T00:00:00Z';
/** reason of a legacy condition without one (metav1.Condition requires a non-empty CamelCase reason). */
export const LEGACY_REASON = 'Unknown';

export type Converted = { ok: true; object: Record<string, unknown> } | { ok: false; message: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `group/version` split, or undefined when it is not one of our served versions of `group`. */
function servedVersion(apiVersion: unknown, group: string): string | undefined {
  if (typeof apiVersion !== 'string') return undefined;
  const [g, v, extra] = apiVersion.split('/');
  return g === group && extra === undefined && (VERSIONS as readonly string[]).includes(v ?? '') ? v : undefined;
}

/**
 * metav1.Condition requires status, reason, message and lastTransitionTime. Conditions written by the AWS controller
 * v0.3.1 could omit all but type; they get Unknown / Unknown / '' / the object's creation time.
 */
function normaliseCondition(condition: unknown, fallbackTime: string): unknown {
  if (!isRecord(condition)) return condition;
  const missing = (field: string) =>
    condition[field] === undefined || condition[field] === null || condition[field] === '';
  if (!['status', 'reason', 'lastTransitionTime'].some(missing) && typeof condition.message === 'string')
    return condition;
  return {
    ...condition,
    status: missing('status') ? 'Unknown' : condition.status,
    reason: missing('reason') ? LEGACY_REASON : condition.reason,
    message: typeof condition.message === 'string' ? condition.message : '',
    lastTransitionTime: missing('lastTransitionTime') ? fallbackTime : condition.lastTransitionTime,
  };
}

function normaliseStatus(object: Record<string, unknown>): Record<string, unknown> {
  const status = object.status;
  if (!isRecord(status) || !Array.isArray(status.conditions)) return object;
  const metadata = isRecord(object.metadata) ? object.metadata : {};
  const fallbackTime = typeof metadata.creationTimestamp === 'string' ? metadata.creationTimestamp : EPOCH;
  const conditions = status.conditions.map((c) => normaliseCondition(c, fallbackTime));
  if (conditions.every((c, i) => c === (status.conditions as unknown[])[i])) return object;
  return { ...object, status: { ...status, conditions } };
}

/** `object` as `desiredAPIVersion`, or why that cannot be done (not one of our kinds, versions or groups). */
export function convertObject(object: unknown, desiredAPIVersion: string): Converted {
  if (!isRecord(object)) return { ok: false, message: 'an object to convert is not a JSON object' };
  const kind = typeof object.kind === 'string' ? object.kind : '';
  const group = GROUP_OF_KIND[kind];
  if (group === undefined)
    return {
      ok: false,
      message: `cannot convert kind "${kind}": expected ServiceExport, ServiceImport or ClusterProperty`,
    };
  if (servedVersion(object.apiVersion, group) === undefined) {
    return {
      ok: false,
      message: `cannot convert ${kind} from apiVersion "${String(object.apiVersion)}": expected ${VERSIONS.map((v) => `${group}/${v}`).join(' or ')}`,
    };
  }
  if (servedVersion(desiredAPIVersion, group) === undefined) {
    return {
      ok: false,
      message: `cannot convert ${kind} to "${desiredAPIVersion}": expected ${VERSIONS.map((v) => `${group}/${v}`).join(' or ')}`,
    };
  }
  return { ok: true, object: { ...normaliseStatus(object), apiVersion: desiredAPIVersion } };
}
