// The worker's watches: one self-healing informer per kind it reads, across all namespaces. They run for the whole
// life of the process (a standby replica keeps warm caches for a fast take-over); reconcilers read only these caches,
// which keep of each object only what the reconcilers read (src/runtime/trim.ts).
import { createInformerSet, type InformerSet, type InformerSetOptions } from '../runtime/informer-set.ts';
import {
  CLUSTER_PROPERTIES,
  ENDPOINT_SLICES,
  NAMESPACES,
  SERVICE_EXPORTS,
  SERVICE_IMPORTS,
  SERVICES,
  type KubeObject,
  type ResourceType,
} from '../kube/resources.ts';
import { keepFields, trimMetadata, type ObjectTrim } from '../runtime/trim.ts';
import type {
  ClusterPropertyObject,
  EndpointSliceObject,
  NamespaceObject,
  ServiceExportObject,
  ServiceImportObject,
  ServiceObject,
} from './objects.ts';

/** The kinds the worker reads, by informer name. */
interface WorkerKinds {
  serviceExports: ServiceExportObject;
  services: ServiceObject;
  endpointSlices: EndpointSliceObject;
  serviceImports: ServiceImportObject;
  namespaces: NamespaceObject;
  clusterProperties: ClusterPropertyObject;
}

/** Each informer by name, and the set's start, sync and stop. */
export type WorkerInformers = InformerSet<WorkerKinds>['informers'] &
  Omit<InformerSet<WorkerKinds>, 'informers' | 'unsynced'>;

/** resyncMs: every cached object is handed to the handlers again this often, so nothing missed stays missed. */
export type WorkerInformerOptions = InformerSetOptions;

/**
 * An endpoint as the export (E1: addresses, readiness, hostname, nodeName, zone) and the import side (comparing our
 * own slices, zone hints included) read it; targetRef and deprecatedTopology of every Pod behind every Service are
 * dropped.
 */
export const trimEndpointSlice: ObjectTrim<EndpointSliceObject> = (slice) => ({
  apiVersion: slice.apiVersion,
  kind: slice.kind,
  metadata: trimMetadata(slice.metadata),
  addressType: slice.addressType,
  ...(slice.ports === undefined ? {} : { ports: slice.ports }),
  ...(slice.endpoints === undefined || slice.endpoints === null
    ? {}
    : {
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
  apiVersion: ns.apiVersion,
  kind: ns.kind,
  metadata: trimMetadata(ns.metadata),
  ...(ns.status?.phase === undefined ? {} : { status: { phase: ns.status.phase } }),
});

export function createWorkerInformers(opts: WorkerInformerOptions): WorkerInformers {
  const {
    informers,
    unsynced: _unsynced,
    ...lifecycle
  } = createInformerSet<WorkerKinds>(
    {
      serviceExports: { resource: SERVICE_EXPORTS, trim: keepFields<ServiceExportObject>('spec', 'status') },
      // A Service's status (load balancer ingress, conditions) is never read.
      services: { resource: SERVICES, trim: keepFields<ServiceObject>('spec') },
      endpointSlices: { resource: ENDPOINT_SLICES, trim: trimEndpointSlice },
      serviceImports: { resource: SERVICE_IMPORTS, trim: keepFields<ServiceImportObject>('spec', 'status') },
      namespaces: { resource: NAMESPACES, trim: trimNamespace },
      clusterProperties: { resource: CLUSTER_PROPERTIES, trim: keepFields<ClusterPropertyObject>('spec') },
    },
    opts,
  );
  return { ...informers, ...lifecycle };
}

/**
 * Hands an object one of our writes returned to the informer of its kind, which caches it ahead of its watch event: a
 * reconcile queued again by the events of its own writes then finds them done instead of writing them again.
 */
export function observeWritten(informers: WorkerInformers, resource: ResourceType, written: KubeObject): void {
  const kinds: ReadonlyArray<[ResourceType, { observe(o: KubeObject): void }]> = [
    [SERVICE_EXPORTS, informers.serviceExports],
    [SERVICE_IMPORTS, informers.serviceImports],
    [SERVICES, informers.services],
    [ENDPOINT_SLICES, informers.endpointSlices],
  ];
  kinds.find(([r]) => r === resource)?.[1].observe(written);
}
