// The export controller: its keys are `namespace/name` of a ServiceExport, and what queues one is the ServiceExport,
// its Service and EndpointSlices (not those the import side derived), and a Cloud Map change to the service while it
// is exported or this cluster still has instances in it (a withdrawal left to finish).
import { ControllerBuilder, type ControllerSettings } from '../../../runtime/controller-builder.ts';
import type { Controller, EventSource } from '../../../runtime/controller.ts';
import { informerEvents } from '../../../runtime/event-sources.ts';
import { LABEL_KUBE_SERVICE_NAME } from '../../../core/names.ts';
import type { WorkerInformers } from '../../informers.ts';
import { importOfService, importOfSlice, keyOf, type ServiceExportObject, type ServiceRef } from '../../objects.ts';

export interface ExportControllerOptions {
  settings: ControllerSettings<string>;
  informers: Pick<WorkerInformers, 'serviceExports' | 'services' | 'endpointSlices'>;
  /** Every service Cloud Map tells of a change to. */
  cloudMapChanges: EventSource<ServiceRef>;
  /** Whether this cluster has instances of the service in Cloud Map. */
  ours: (namespace: string, service: string) => boolean;
  reconcile: (key: string) => Promise<void>;
}

export function exportController(o: ExportControllerOptions): Controller<string> {
  const { serviceExports, services, endpointSlices } = o.informers;
  /** The key of the ServiceExport `namespace/name`, if there is one. */
  const exported = (namespace: string | undefined, name: string | undefined) =>
    name !== undefined && serviceExports.get(namespace ?? '', name) !== undefined ? [keyOf(namespace ?? '', name)] : [];
  return new ControllerBuilder<string>('export', o.settings)
    .for(serviceExports, (se) => keyOf(se.metadata.namespace ?? '', se.metadata.name))
    .watches(informerEvents(services), (svc) =>
      importOfService(svc) === undefined ? exported(svc.metadata.namespace, svc.metadata.name) : [],
    )
    .watches(informerEvents(endpointSlices), (slice) =>
      importOfSlice(slice) === undefined
        ? exported(slice.metadata.namespace, slice.metadata.labels?.[LABEL_KUBE_SERVICE_NAME])
        : [],
    )
    .watches(o.cloudMapChanges, ({ namespace, service }) =>
      serviceExports.get(namespace, service) !== undefined || o.ours(namespace, service)
        ? [keyOf(namespace, service)]
        : [],
    )
    .complete(o.reconcile);
}

/** Every ServiceExport's key, in the informer's order. */
export function exportKeys(serviceExports: { list(): ServiceExportObject[] }): string[] {
  return serviceExports.list().map((se) => keyOf(se.metadata.namespace ?? '', se.metadata.name));
}
