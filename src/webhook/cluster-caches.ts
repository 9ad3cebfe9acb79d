// The caches behind the admission rules' view of the cluster (admission/cluster-view.ts): informers on Services,
// ServiceExports, ServiceImports and ClusterProperties, trimmed to what the rules read. Tests and the benchmark fill
// ObjectCaches directly.

import { createInformerSet } from '../runtime/informer-set.ts';
import { ObjectCache } from '../runtime/object-cache.ts';
import { CLUSTER_PROPERTIES, SERVICE_EXPORTS, SERVICE_IMPORTS, SERVICES, type KubeObject } from '../kube/resources.ts';
import { keepFields, keepMetadata, type ObjectTrim } from '../runtime/trim.ts';
import { EXPORT_RECORD_ANNOTATION } from '../core/names.ts';
import { serviceAsRead, serviceExportAsRead } from './admission/export-admission.ts';
import type { Logger } from '../observability/log.ts';
import type { CacheName, CacheState, ClusterView, Store } from './admission/cluster-view.ts';
import type { ServiceExportObject, ServiceImportObject, ServiceObject } from './admission/objects.ts';
import type { KubeAccess } from '../kube/kube-access.ts';

/** For caches filled by the caller: always synced. */
export const ALWAYS_SYNCED: CacheState = { unsynced: () => [] };

/** A view over plain caches, filled by the caller (unit tests, benchmark). */
export function memoryView(): { [K in CacheName]: ObjectCache<WebhookKinds[K]> } {
  return {
    services: new ObjectCache(),
    serviceExports: new ObjectCache(),
    serviceImports: new ObjectCache(),
    clusterProperties: new ObjectCache(),
  };
}

export interface InformerView extends CacheState {
  view: ClusterView;
  start(): void;
  stop(): Promise<void>;
}

// The caches keep what the admission rules read (admission/export-admission.ts, admission/export-conflicts.ts) and
// nothing else: with 10,000 Services the rest of each object was about a third of the webhook server's JavaScript heap
// (docs/benchmarks.md).

/** A Service as the admission rules read it (serviceAsRead): not its selector, labels or status. */
export const trimService: ObjectTrim<ServiceObject & KubeObject> = (service) => ({
  ...serviceAsRead(service),
  apiVersion: service.apiVersion,
  kind: service.kind,
  metadata: keepMetadata(service.metadata),
});

/** A ServiceExport as the X1–X3 checks read it (serviceExportAsRead): its creation time and what it exports. */
export const trimServiceExport: ObjectTrim<ServiceExportObject & KubeObject> = (serviceExport) => {
  const { spec } = serviceExportAsRead(serviceExport);
  return {
    apiVersion: serviceExport.apiVersion,
    kind: serviceExport.kind,
    metadata: keepMetadata(serviceExport.metadata, 'creationTimestamp'),
    ...(spec === undefined ? {} : { spec }),
  };
};

/** A ServiceImport as the X1–X3 checks read it: only the worker's export record. */
export const trimServiceImport: ObjectTrim<ServiceImportObject & KubeObject> = (si) => {
  const metadata = keepMetadata(si.metadata);
  const record = si.metadata.annotations?.[EXPORT_RECORD_ANNOTATION];
  if (record !== undefined) metadata.annotations = { [EXPORT_RECORD_ANNOTATION]: record };
  return { apiVersion: si.apiVersion, kind: si.kind, metadata };
};

/** The kinds the admission rules read, by cache name, as the informers store them. */
type WebhookKinds = { [K in CacheName]: ClusterView[K] extends Store<infer T> ? T & KubeObject : never };

/**
 * Self-healing informers (src/runtime/informer-set.ts) on the four resources; no periodic resync (the webhook only
 * reads). The caches keep what the admission rules read (the trims above).
 */
export function informerView(kubeConfig: KubeAccess, logger: Logger): InformerView {
  const set = createInformerSet<WebhookKinds>(
    {
      services: { resource: SERVICES, trim: trimService },
      serviceExports: { resource: SERVICE_EXPORTS, trim: trimServiceExport },
      serviceImports: { resource: SERVICE_IMPORTS, trim: trimServiceImport },
      clusterProperties: { resource: CLUSTER_PROPERTIES, trim: keepFields<WebhookKinds['clusterProperties']>('spec') },
    },
    { kubeConfig, resyncMs: 0, logger },
  );
  return { view: set.informers, unsynced: set.unsynced, start: set.start, stop: set.stop };
}
