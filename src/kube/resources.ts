// The Kubernetes resources the worker and the webhook read and write, and the REST paths that address them.
// Every adapter in src/kube takes a ResourceType rather than a hand-written URL.

import {
  ABOUT_GROUP,
  CLUSTER_PROPERTY_PLURAL,
  MCS_GROUP,
  SERVICE_EXPORT_PLURAL,
  SERVICE_IMPORT_PLURAL,
  STORAGE_VERSION,
} from '../core/names.ts';
import type { OwnerReference } from '../core/service-import.ts';

/** Object metadata as far as the adapters need it; everything else passes through untouched. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [field: string]: unknown;
}

/** Any Kubernetes object: typed metadata, the rest left to the caller's own type. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export interface ResourceType {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Lower-case plural used in URLs. */
  readonly plural: string;
  readonly namespaced: boolean;
}

export function apiVersionOf(resource: ResourceType): string {
  return resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;
}

/**
 * REST path of a collection (no name), of one object, or of one of its subresources. A namespaced resource without a
 * namespace addresses the collection across all namespaces (list and watch only).
 */
export function resourcePath(resource: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const root = resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  if (resource.namespaced && name !== undefined && !namespace) {
    throw new Error(`${resource.kind} ${name}: a namespace is required to address a namespaced object`);
  }
  const ns = resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const obj = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  const sub = subresource === undefined ? '' : `/${subresource}`;
  return `${root}${ns}/${resource.plural}${obj}${sub}`;
}

/** `namespace/name`, or `name` for cluster-scoped objects: how logs and errors name an object. */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export const NAMESPACES: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
};
export const SERVICES: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Service',
  plural: 'services',
  namespaced: true,
};
export const ENDPOINT_SLICES: ResourceType = {
  group: 'discovery.k8s.io',
  version: 'v1',
  kind: 'EndpointSlice',
  plural: 'endpointslices',
  namespaced: true,
};
export const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
};
export const CONFIG_MAPS: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  namespaced: true,
};
export const EVENTS: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  plural: 'events',
  namespaced: true,
};
export const SERVICE_EXPORTS: ResourceType = {
  group: MCS_GROUP,
  version: STORAGE_VERSION,
  kind: 'ServiceExport',
  plural: SERVICE_EXPORT_PLURAL,
  namespaced: true,
};
export const SERVICE_IMPORTS: ResourceType = {
  group: MCS_GROUP,
  version: STORAGE_VERSION,
  kind: 'ServiceImport',
  plural: SERVICE_IMPORT_PLURAL,
  namespaced: true,
};
export const CLUSTER_PROPERTIES: ResourceType = {
  group: ABOUT_GROUP,
  version: STORAGE_VERSION,
  kind: 'ClusterProperty',
  plural: CLUSTER_PROPERTY_PLURAL,
  namespaced: false,
};
