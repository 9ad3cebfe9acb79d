// The worker's watches: one self-healing informer per kind it reads, across all namespaces. They run for the whole
// life of the process (a standby replica keeps warm caches for a fast take-over); reconcilers read only these caches.
import type { KubeConfig } from '@kubernetes/client-node';
import { createInformer, type Informer, type InformerMetrics } from '../kube/informer.ts';
import {
  CLUSTER_PROPERTIES, ENDPOINT_SLICES, NAMESPACES, resourcePath, SERVICE_EXPORTS, SERVICE_IMPORTS, SERVICES, type KubeObject,
} from '../kube/resources.ts';
import type { Logger } from '../observability/log.ts';
import type {
  ClusterPropertyObject, EndpointSliceObject, NamespaceObject, ServiceExportObject, ServiceImportObject, ServiceObject,
} from './objects.ts';

export interface WorkerInformers {
  readonly serviceExports: Informer<ServiceExportObject>;
  readonly services: Informer<ServiceObject>;
  readonly endpointSlices: Informer<EndpointSliceObject>;
  readonly serviceImports: Informer<ServiceImportObject>;
  readonly namespaces: Informer<NamespaceObject>;
  readonly clusterProperties: Informer<ClusterPropertyObject>;
  start(): void;
  /** True once every informer has listed once. */
  synced(): boolean;
  waitForSync(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

export interface WorkerInformerOptions {
  kubeConfig: KubeConfig;
  /** Every cached object is handed to the handlers again this often, so nothing missed stays missed. */
  resyncMs: number;
  metrics?: InformerMetrics;
  logger?: Logger;
}

export function createWorkerInformers(opts: WorkerInformerOptions): WorkerInformers {
  const make = <T extends KubeObject>(path: string): Informer<T> => createInformer<T>({
    kubeConfig: opts.kubeConfig, path, resyncMs: opts.resyncMs,
    ...(opts.metrics ? { metrics: opts.metrics } : {}), ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const informers = {
    serviceExports: make<ServiceExportObject>(resourcePath(SERVICE_EXPORTS)),
    services: make<ServiceObject>(resourcePath(SERVICES)),
    endpointSlices: make<EndpointSliceObject>(resourcePath(ENDPOINT_SLICES)),
    serviceImports: make<ServiceImportObject>(resourcePath(SERVICE_IMPORTS)),
    namespaces: make<NamespaceObject>(resourcePath(NAMESPACES)),
    clusterProperties: make<ClusterPropertyObject>(resourcePath(CLUSTER_PROPERTIES)),
  };
  const all: Informer<KubeObject>[] = Object.values(informers);
  return {
    ...informers,
    start: () => all.forEach((i) => i.start()),
    synced: () => all.every((i) => i.hasSynced()),
    waitForSync: async (signal) => {
      await Promise.all(all.map((i) => i.waitForSync(signal)));
    },
    stop: async () => {
      await Promise.all(all.map((i) => i.stop()));
    },
  };
}
