// The import controller: its keys are `namespace/name` of a multi-cluster service, and what queues one is its
// ServiceImport, the derived Service and EndpointSlices written for it, a Cloud Map change to the service, a namespace
// that appears (I1: it can now hold the imports Cloud Map has for it), and a peer that turned silent or was heard again
// while it has instances of the service.
import { ControllerBuilder, type ControllerSettings } from '../../../runtime/controller-builder.ts';
import type { Controller, EventSource } from '../../../runtime/controller.ts';
import { informerEvents } from '../../../runtime/event-sources.ts';
import type { WorkerInformers } from '../../informers.ts';
import {
  importOfService,
  importOfSlice,
  keptByUs,
  keyOf,
  type ServiceImportObject,
  type ServiceRef,
} from '../../objects.ts';

export interface ImportControllerOptions {
  settings: ControllerSettings<string>;
  informers: Pick<WorkerInformers, 'serviceImports' | 'services' | 'endpointSlices' | 'namespaces'>;
  /** Every service Cloud Map tells of a change to. */
  cloudMapChanges: EventSource<ServiceRef>;
  /** Clusters that turned silent or were heard again (dead-clusters.ts). */
  silenceChanges: EventSource<ReadonlySet<string>>;
  /** Every service with instances in some Region of the ClusterSet. */
  cloudMapServices: () => readonly ServiceRef[];
  /** The services in which some of `clusters` have instances. */
  servicesOf: (clusters: ReadonlySet<string>) => readonly ServiceRef[];
  reconcile: (key: string) => Promise<void>;
}

export function importController(o: ImportControllerOptions): Controller<string> {
  const { serviceImports, services, endpointSlices, namespaces } = o.informers;
  const keys = (refs: readonly ServiceRef[]) => refs.map(({ namespace, service }) => keyOf(namespace, service));
  const owner = (namespace: string | undefined, name: string | undefined) =>
    name === undefined ? undefined : keyOf(namespace ?? '', name);
  return new ControllerBuilder<string>('import', o.settings)
    .for(serviceImports, (si) => keyOf(si.metadata.namespace ?? '', si.metadata.name))
    .owns(services, (svc) => owner(svc.metadata.namespace, importOfService(svc)))
    .owns(endpointSlices, (slice) => owner(slice.metadata.namespace, importOfSlice(slice)))
    .watches(informerEvents(namespaces, ['added']), (ns) =>
      keys(o.cloudMapServices().filter((s) => s.namespace === ns.metadata.name)),
    )
    .watches(o.cloudMapChanges, ({ namespace, service }) => [keyOf(namespace, service)])
    .watches(o.silenceChanges, (clusters) => keys(o.servicesOf(clusters)))
    .complete(o.reconcile);
}

/** The key of every ServiceImport this worker keeps current. */
export function importKeys(serviceImports: { list(): ServiceImportObject[] }): string[] {
  return serviceImports
    .list()
    .filter(keptByUs)
    .map((si) => keyOf(si.metadata.namespace ?? '', si.metadata.name));
}
