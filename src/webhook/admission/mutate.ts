// The mutating webhook: a new ServiceExport gets the worker's clean-up finalizer. Nothing else is changed, so the patch is
// the same on every (re-)invocation and on dry-run requests (no side effects).

import { MCS_GROUP } from '../../core/names.ts';
import { metadataError, type KubeObject } from './objects.ts';
import { allow, deny, type Decision } from './decision.ts';
import { addExportFinalizer } from './export-finalizer.ts';
import type { AdmissionRequest } from './review.ts';
import { requestRef, unhandled } from './validate.ts';

export function mutateAdmission(request: AdmissionRequest): Decision {
  if (request.kind.group !== MCS_GROUP || request.kind.kind !== 'ServiceExport') return unhandled(request, 'mutate');
  if (request.operation !== 'CREATE' || request.subResource !== '') return allow();
  const error = metadataError(request.object);
  if (error !== undefined) return deny(`ServiceExport ${requestRef(request)} does not parse: ${error}`, 400);
  return addExportFinalizer((request.object as KubeObject).metadata ?? {});
}
