// The keys of the worker's work queues, and the object shapes it reads (defined once, in src/kube/objects.ts).
export type {
  ClusterPropertyObject, EndpointSliceObject, NamespaceObject, ServiceExportObject, ServiceImportObject, ServiceObject,
} from '../kube/objects.ts';

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
