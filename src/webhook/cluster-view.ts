// What the admission rules may look up: Services, ServiceExports, ServiceImports and ClusterProperties of this cluster,
// always from informer caches (never a live API call per request). Tests and the benchmark fill ObjectCaches directly.

import { createInformerSet } from '../runtime/informer-set.ts';
import { ObjectCache } from '../runtime/object-cache.ts';
import { CLUSTER_PROPERTIES, SERVICE_EXPORTS, SERVICE_IMPORTS, SERVICES, type KubeObject } from '../kube/resources.ts';
import { keepFields, trimMetadata, type ObjectTrim } from '../runtime/trim.ts';
import type { Logger } from '../observability/log.ts';
import type { ClusterPropertyObject, ServiceExportObject, ServiceImportObject, ServiceObject } from './objects.ts';
import type { KubeAccess } from '../kube/kube-access.ts';

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

/** For caches filled by the caller: always synced. */
export const ALWAYS_SYNCED: CacheState = { unsynced: () => [] };

/** A view over plain caches, filled by the caller (unit tests, benchmark). */
export function memoryView(): { [K in CacheName]: ObjectCache<WebhookKinds[K]> } {
  return { services: new ObjectCache(), serviceExports: new ObjectCache(), serviceImports: new ObjectCache(), clusterProperties: new ObjectCache() };
}

export interface InformerView extends CacheState {
  view: ClusterView;
  start(): void;
  stop(): Promise<void>;
}

/** A ServiceImport as the X1–X3 checks read it: spec and the clusters of its status (not its conditions). */
export const trimServiceImport: ObjectTrim<ServiceImportObject & KubeObject> = (si) => ({
  apiVersion: si.apiVersion, kind: si.kind, metadata: trimMetadata(si.metadata), spec: si.spec,
  ...(si.status?.clusters === undefined ? {} : { status: { clusters: si.status.clusters } }),
});

/** The kinds the admission rules read, by cache name, as the informers store them. */
type WebhookKinds = { [K in CacheName]: ClusterView[K] extends Store<infer T> ? T & KubeObject : never };

/**
 * Self-healing informers (src/runtime/informer-set.ts) on the four resources; no periodic resync (the webhook only
 * reads). The caches keep what the admission rules read: metadata without managedFields, specs, and the ServiceImport's
 * clusters.
 */
export function informerView(kubeConfig: KubeAccess, logger: Logger): InformerView {
  const set = createInformerSet<WebhookKinds>({
    services: { resource: SERVICES, trim: keepFields<WebhookKinds['services']>('spec') },
    serviceExports: { resource: SERVICE_EXPORTS, trim: keepFields<WebhookKinds['serviceExports']>('spec') },
    serviceImports: { resource: SERVICE_IMPORTS, trim: trimServiceImport },
    clusterProperties: { resource: CLUSTER_PROPERTIES, trim: keepFields<WebhookKinds['clusterProperties']>('spec') },
  }, { kubeConfig, resyncMs: 0, logger });
  return { view: set.informers, unsynced: set.unsynced, start: set.start, stop: set.stop };
}
