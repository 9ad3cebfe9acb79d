// A new ServiceExport gets the worker's clean-up finalizer at admission (E3), so its deletion always waits for the worker
// to remove this cluster's Cloud Map instances, even if the worker never saw the export. Idempotent: a re-invocation on
// an object that already carries it patches nothing.

import { SERVICE_EXPORT_FINALIZER } from '../../core/names.ts';
import type { ObjectMeta } from './objects.ts';
import { allow, type Decision } from './decision.ts';

export function addExportFinalizer(metadata: ObjectMeta): Decision {
  const finalizers = metadata.finalizers ?? [];
  if (finalizers.includes(SERVICE_EXPORT_FINALIZER)) return allow();
  if (metadata.finalizers === undefined || metadata.finalizers === null) {
    return allow([], [{ op: 'add', path: '/metadata/finalizers', value: [SERVICE_EXPORT_FINALIZER] }]);
  }
  return allow([], [{ op: 'add', path: '/metadata/finalizers/-', value: SERVICE_EXPORT_FINALIZER }]);
}
