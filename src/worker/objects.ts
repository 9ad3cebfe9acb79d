// The Kubernetes objects the worker watches, as the JSON the informers deliver (timestamps are strings). Each shape is
// the adapter's KubeObject plus the structural inputs the core functions take, so no client types reach the core.
import type { Condition } from '../core/types.ts';
import type { EndpointSliceLike, ServiceExportLike, ServiceLike } from '../core/service-export.ts';
import type { StoredEndpointSlice } from '../core/endpoint-slices.ts';
import type { StoredService } from '../core/derived-service.ts';
import type { StoredServiceImport } from '../core/service-import.ts';
import type { KubeObject } from '../kube/resources.ts';

export type ServiceExportObject = KubeObject & {
  spec?: NonNullable<ServiceExportLike['spec']>;
  status?: { conditions?: Condition[] };
};

export type ServiceObject = KubeObject & {
  spec?: NonNullable<ServiceLike['spec']> & NonNullable<StoredService['spec']> & { clusterIPs?: string[] };
};

export type EndpointSliceObject = KubeObject & Omit<EndpointSliceLike, 'metadata'> & Omit<StoredEndpointSlice, 'metadata'>;

export type ServiceImportObject = KubeObject & Omit<StoredServiceImport, 'metadata' | 'status'> & {
  status?: { clusters?: Array<{ cluster: string }>; conditions?: Condition[] };
};

export type ClusterPropertyObject = KubeObject & { spec?: { value?: string } };

export type NamespaceObject = KubeObject & { status?: { phase?: string } };

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
