// What an informer cache keeps of an object. A cache holds every object of its kind for the life of the process, and
// most of what the apiserver sends is never read: managedFields (often larger than the rest of the object), kubectl's
// last-applied-configuration annotation (a second copy of the object) and fields of the spec or status no reader looks
// at. The worker and the webhook trim each kind to what their readers use before it is stored (docs/benchmarks.md).
// Trimmed objects are only read, never written back: every write is a server-side apply or patch of the fields we own.
import type { KubeObject, ObjectMeta } from '../kube/resources.ts';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Applied to every listed or watched object before the cache stores it and the handlers see it. */
export type ObjectTrim<T> = (object: T) => T;

/** The metadata without managedFields and without the last-applied-configuration annotation. */
export function trimMetadata(metadata: ObjectMeta): ObjectMeta {
  const { managedFields: _managedFields, annotations, ...kept } = metadata;
  if (annotations === undefined || annotations === null) return kept;
  if (!(LAST_APPLIED_ANNOTATION in annotations)) return { ...kept, annotations };
  const { [LAST_APPLIED_ANNOTATION]: _lastApplied, ...rest } = annotations;
  return Object.keys(rest).length === 0 ? kept : { ...kept, annotations: rest };
}

/** apiVersion, kind and trimmed metadata, plus the named top-level fields where present (e.g. 'spec'). */
export function keepFields<T extends KubeObject>(
  ...fields: ReadonlyArray<Exclude<keyof T, keyof KubeObject> & string>
): ObjectTrim<T> {
  return (object) => {
    const trimmed: Record<string, unknown> = {
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata: trimMetadata(object.metadata),
    };
    for (const field of fields) if (object[field] !== undefined) trimmed[field] = object[field];
    return trimmed as T;
  };
}

/**
 * Only name, namespace and resourceVersion (what the cache itself uses: its key, and whether a watch event is news),
 * plus the named fields where present: for a cache whose readers look at little of the metadata.
 */
export function keepMetadata(metadata: ObjectMeta, ...fields: ReadonlyArray<keyof ObjectMeta & string>): ObjectMeta {
  const kept: ObjectMeta = { name: metadata.name };
  for (const field of ['namespace', 'resourceVersion', ...fields])
    if (metadata[field] !== undefined) kept[field] = metadata[field];
  return kept;
}

/** The named fields of `object` that are present. */
export function pick<T extends object>(object: T, fields: ReadonlyArray<keyof T>): Partial<T> {
  const picked: Partial<T> = {};
  for (const field of fields) if (object[field] !== undefined) picked[field] = object[field];
  return picked;
}
