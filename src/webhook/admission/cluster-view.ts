// What the admission rules may look up: Services, ServiceExports, ServiceImports and ClusterProperties of this cluster,
// always from caches (never a live API call per request). The caches behind it are set up in ../cluster-caches.ts.

import type { ClusterPropertyObject, ServiceExportObject, ServiceImportObject, ServiceObject } from './objects.ts';

export interface Store<T> {
  /** '' as namespace for cluster-scoped objects. */
  get(namespace: string, name: string): T | undefined;
  list(namespace?: string): T[];
}

export interface ClusterView {
  services: Store<ServiceObject>;
  serviceExports: Store<ServiceExportObject>;
  serviceImports: Store<ServiceImportObject>;
  clusterProperties: Store<ClusterPropertyObject>;
}

export type CacheName = keyof ClusterView;

export interface CacheState {
  /** The caches whose first list has not completed yet; empty once all are synced. */
  unsynced(): CacheName[];
}
