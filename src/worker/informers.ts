// The worker's watches: one self-healing informer per kind it reads, across all namespaces. They run for the whole
// life of the process (a standby replica keeps warm caches for a fast take-over); reconcilers read only these caches,
// which keep of each object only what the reconcilers read (src/runtime/trim.ts).
import { createInformer, type Informer, type InformerMetrics } from '../runtime/informer.ts';
import {
  CLUSTER_PROPERTIES, ENDPOINT_SLICES, NAMESPACES, resourcePath, SERVICE_EXPORTS, SERVICE_IMPORTS, SERVICES, type KubeObject,
} from '../kube/resources.ts';
import { keepFields, trimMetadata, type ObjectTrim } from '../runtime/trim.ts';
import type { Logger } from '../observability/log.ts';
import type {
  ClusterPropertyObject, EndpointSliceObject, NamespaceObject, ServiceExportObject, ServiceImportObject, ServiceObject,
} from './objects.ts';
import type { KubeAccess } from '../kube/kube-access.ts';

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
  /** True while every cache follows its server (none is recovering from a failed list or watch). */
  current(): boolean;
  /** Resolves once every cache is current at the same time; rejects when `signal` aborts or an informer stops. */
  waitUntilCurrent(signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

export interface WorkerInformerOptions {
  kubeConfig: KubeAccess;
  /** Every cached object is handed to the handlers again this often, so nothing missed stays missed. */
  resyncMs: number;
  metrics?: InformerMetrics;
  logger?: Logger;
}

/**
 * An endpoint as the export (E1: addresses, readiness, hostname, nodeName, zone) and the import side (comparing our
 * own slices, zone hints included) read it; targetRef and deprecatedTopology of every Pod behind every Service are
 * dropped.
 */
export const trimEndpointSlice: ObjectTrim<EndpointSliceObject> = (slice) => ({
  apiVersion: slice.apiVersion, kind: slice.kind, metadata: trimMetadata(slice.metadata),
  addressType: slice.addressType,
  ...(slice.ports === undefined ? {} : { ports: slice.ports }),
  ...(slice.endpoints === undefined || slice.endpoints === null ? {} : {
    endpoints: slice.endpoints.map((e) => ({
      addresses: e.addresses,
      ...(e.conditions === undefined ? {} : { conditions: e.conditions }),
      ...(e.hostname === undefined ? {} : { hostname: e.hostname }),
      ...(e.nodeName === undefined ? {} : { nodeName: e.nodeName }),
      ...(e.zone === undefined ? {} : { zone: e.zone }),
      ...(e.hints === undefined ? {} : { hints: e.hints }),
    })),
  }),
});

/** A Namespace: metadata (deletionTimestamp) and its phase; no spec. */
export const trimNamespace: ObjectTrim<NamespaceObject> = (ns) => ({
  apiVersion: ns.apiVersion, kind: ns.kind, metadata: trimMetadata(ns.metadata),
  ...(ns.status?.phase === undefined ? {} : { status: { phase: ns.status.phase } }),
});

export function createWorkerInformers(opts: WorkerInformerOptions): WorkerInformers {
  const make = <T extends KubeObject>(path: string, trim: ObjectTrim<T>): Informer<T> => createInformer<T>({
    kubeConfig: opts.kubeConfig, path, resyncMs: opts.resyncMs, trim,
    ...(opts.metrics ? { metrics: opts.metrics } : {}), ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const informers = {
    serviceExports: make(resourcePath(SERVICE_EXPORTS), keepFields<ServiceExportObject>('spec', 'status')),
    // A Service's status (load balancer ingress, conditions) is never read.
    services: make(resourcePath(SERVICES), keepFields<ServiceObject>('spec')),
    endpointSlices: make(resourcePath(ENDPOINT_SLICES), trimEndpointSlice),
    serviceImports: make(resourcePath(SERVICE_IMPORTS), keepFields<ServiceImportObject>('spec', 'status')),
    namespaces: make(resourcePath(NAMESPACES), trimNamespace),
    clusterProperties: make(resourcePath(CLUSTER_PROPERTIES), keepFields<ClusterPropertyObject>('spec')),
  };
  const all: Informer<KubeObject>[] = Object.values(informers);
  return {
    ...informers,
    start: () => all.forEach((i) => i.start()),
    synced: () => all.every((i) => i.hasSynced()),
    waitForSync: async (signal) => {
      await Promise.all(all.map((i) => i.waitForSync(signal)));
    },
    current: () => all.every((i) => i.isCurrent()),
    waitUntilCurrent: async (signal) => {
      // One may fail again while waiting for another.
      while (!all.every((i) => i.isCurrent())) await Promise.all(all.map((i) => i.waitUntilCurrent(signal)));
    },
    stop: async () => {
      await Promise.all(all.map((i) => i.stop()));
    },
  };
}
