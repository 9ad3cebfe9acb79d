// The keys of the worker's work queues, which objects are the worker's own, and the object shapes it reads (defined
// once, in src/kube/objects.ts).
import { CONTROLLER_NAME, LABEL_CREATED_BY, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '../core/names.ts';
import { serviceImportKeeper } from '../core/service-import.ts';
import type { EndpointSliceObject, ServiceObject } from '../kube/objects.ts';

export type {
  ClusterPropertyObject,
  EndpointSliceObject,
  NamespaceObject,
  ServiceExportObject,
  ServiceImportObject,
  ServiceObject,
} from '../kube/objects.ts';

/** A service as Cloud Map names it: a Kubernetes namespace and Service name. */
export interface ServiceRef {
  readonly namespace: string;
  readonly service: string;
}

/** `namespace/name`, the key of both work queues. */
export function keyOf(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** The namespace and name of a queue key; throws on a key without a namespace (a bug in the caller). */
export function parseKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  if (slash <= 0 || slash === key.length - 1) throw new Error(`work queue key "${key}" is not namespace/name`);
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export function createdByUs(object: { metadata: { labels?: Record<string, string> } } | undefined): boolean {
  return object?.metadata.labels?.[LABEL_CREATED_BY] === CONTROLLER_NAME;
}

/** ServiceImports this worker keeps current: its own and those it takes over from v0.3.1 (M3). */
export function keptByUs(object: {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
}): boolean {
  return serviceImportKeeper(object.metadata) !== 'other';
}

/** The name of the ServiceImport a derived Service of ours belongs to; undefined for any other Service. */
export function importOfService(service: ServiceObject): string | undefined {
  return createdByUs(service) ? service.metadata.labels?.[LABEL_SERVICE_NAME] : undefined;
}

/** The name of the ServiceImport an EndpointSlice we manage belongs to; undefined for any other slice. */
export function importOfSlice(slice: EndpointSliceObject): string | undefined {
  const labels = slice.metadata.labels ?? {};
  return labels[LABEL_MANAGED_BY] === CONTROLLER_NAME ? labels[LABEL_SERVICE_NAME] : undefined;
}
