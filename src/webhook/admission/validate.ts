// The validating webhook: routes an AdmissionRequest to the rules of its kind. Objects of our kinds are checked against
// the CRD schema first, so the rules only ever see well-formed data; a request for a kind we do not handle is denied
// with a pointer to the webhook configuration rather than silently allowed.

import { isWellKnownPropertyName } from '../../core/cluster-id.ts';
import { ABOUT_GROUP, MCS_GROUP } from '../../core/names.ts';
import type { CacheName, ClusterView } from '../cluster-view.ts';
import { customObjectError } from '../crd/object-validation.ts';
import type { CustomKind } from '../crd/schemas.ts';
import { metadataError, serviceError, type ClusterPropertyObject, type KubeObject, type ServiceExportObject, type ServiceObject } from '../objects.ts';
import type { ConflictPolicy, ExternalNamePolicy } from '../options.ts';
import { checkClusterPropertyChange } from './cluster-property-change.ts';
import { allow, deny, type Decision } from './decision.ts';
import { admitService, admitServiceExport, type ExportAdmission } from './export-admission.ts';
import { checkExportName } from './export-name.ts';
import type { AdmissionRequest } from './review.ts';
import { checkWorkerOnlyWrite, type WriterIdentities } from './worker-only-writes.ts';

export interface ValidationContext {
  view: ClusterView;
  /** Caches still loading (see server.ts: after a grace period the server serves before they are all synced). */
  unsynced: () => readonly CacheName[];
  policy: ConflictPolicy;
  externalNamePolicy: ExternalNamePolicy;
  writers: WriterIdentities;
  now: () => number;
}

/**
 * A denial for a decision that needs caches that are still loading: the only honest answer, since an empty cache would
 * mean "no ClusterProperty", "no exports" and the like. Undefined when all of `needed` are synced.
 */
function stillLoading(ctx: ValidationContext, needed: readonly CacheName[], what: string): Decision | undefined {
  const loading = ctx.unsynced().filter((name) => needed.includes(name));
  if (loading.length === 0) return undefined;
  return deny(`${what} cannot be checked yet: the mcs-cloudmap webhook is still loading its caches (${loading.join(', ')}); retry in a few seconds.`, 503);
}

/** `namespace/name` (or `name`) of the request's object, falling back to metadata.generateName for unnamed creates. */
export function requestRef(request: AdmissionRequest): string {
  const meta = ((request.object ?? request.oldObject) as { metadata?: { name?: unknown; generateName?: unknown } } | null)?.metadata;
  const name = request.name || (typeof meta?.name === 'string' ? meta.name : '') || `${typeof meta?.generateName === 'string' ? meta.generateName : ''}*`;
  return request.namespace ? `${request.namespace}/${name}` : name;
}

/**
 * Why the object being written fails `check`, or the stored one (UPDATE, DELETE) lacks readable metadata; undefined when
 * both can be read. Stored objects are not held to the full schema: a legacy object must stay updatable.
 */
function objectError(request: AdmissionRequest, check: (object: unknown) => string | undefined): string | undefined {
  const written = request.operation === 'DELETE' ? undefined : check(request.object);
  const stored = request.operation === 'CREATE' ? undefined : metadataError(request.oldObject);
  return written ?? (stored === undefined ? undefined : `stored object: ${stored}`);
}

function unreadable(request: AdmissionRequest, error: string): Decision {
  return deny(`${request.kind.kind} ${requestRef(request)} does not parse: ${error}`, 400);
}

const customCheck = (kind: CustomKind) => (object: unknown) => metadataError(object) ?? customObjectError(kind, object);

function exportAdmission(ctx: ValidationContext): ExportAdmission {
  return { view: ctx.view, policy: ctx.policy, externalNamePolicy: ctx.externalNamePolicy, now: ctx.now() };
}

function validateServiceExport(request: AdmissionRequest, ctx: ValidationContext): Decision {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const unnamed = objectError(request, metadataError);
  if (unnamed !== undefined) return unreadable(request, unnamed);
  const object = request.object as ServiceExportObject & { metadata: { deletionTimestamp?: string } };
  const old = request.oldObject as ServiceExportObject | null;
  // Status writes and updates during a deletion (the worker removing its finalizer) export nothing new and must never
  // be blocked, whatever else the object holds.
  if (request.subResource !== '' || object.metadata.deletionTimestamp !== undefined) return allow();
  const error = objectError(request, customCheck('ServiceExport'));
  if (error !== undefined) return unreadable(request, error);
  if (old !== null && JSON.stringify(old.spec ?? {}) === JSON.stringify(object.spec ?? {})) return allow();
  const target = { namespace: request.namespace, name: request.name || object.metadata?.name || '', ref: requestRef(request) };
  if (request.operation === 'CREATE') {
    const named = checkExportName(target.name, target.ref);
    if (!named.allowed) return named;
  }
  const loading = stillLoading(ctx, ['clusterProperties', 'services', 'serviceImports'], `ServiceExport ${target.ref}`);
  if (loading) return loading;
  return admitServiceExport(exportAdmission(ctx), target, object);
}

function validateService(request: AdmissionRequest, ctx: ValidationContext): Decision {
  if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || request.subResource !== '') return allow();
  const error = objectError(request, serviceError);
  if (error !== undefined) return unreadable(request, error);
  // Services are guarded with failurePolicy Ignore: while the caches load they pass, as when the webhook is away.
  if (ctx.unsynced().length > 0) return allow();
  const target = { namespace: request.namespace, name: request.name, ref: requestRef(request) };
  return admitService(exportAdmission(ctx), target, request.object as ServiceObject);
}

function validateClusterProperty(request: AdmissionRequest, ctx: ValidationContext): Decision {
  if (request.subResource !== '') return allow();
  const error = objectError(request, customCheck('ClusterProperty'));
  if (error !== undefined) return unreadable(request, error);
  // A stored object is only known to have metadata (objectError); its value may be anything.
  const value = (o: unknown) => {
    const v = (o as Partial<ClusterPropertyObject> | null)?.spec?.value;
    return typeof v === 'string' ? v : undefined;
  };
  const name = request.name || ((request.object ?? request.oldObject) as KubeObject).metadata?.name || '';
  if (request.operation !== 'CREATE' && isWellKnownPropertyName(name)) {
    const loading = stillLoading(ctx, ['serviceExports'], `ClusterProperty ${name}`);
    if (loading) return loading;
  }
  return checkClusterPropertyChange({
    operation: request.operation,
    name,
    value: value(request.object),
    oldValue: value(request.oldObject),
    exports: ctx.view.serviceExports.list().length,
  });
}

function guardWorkerWrite(request: AdmissionRequest, ctx: ValidationContext, kind: 'ServiceImport' | 'EndpointSlice'): Decision {
  const error = objectError(request, metadataError);
  if (error !== undefined) return unreadable(request, error);
  const labels = (o: unknown) => (o as KubeObject | null)?.metadata?.labels ?? undefined;
  return checkWorkerOnlyWrite({
    kind, target: requestRef(request), operation: request.operation, username: request.username,
    labels: labels(request.object), oldLabels: labels(request.oldObject),
  }, ctx.writers);
}

export function validateAdmission(request: AdmissionRequest, ctx: ValidationContext): Decision {
  const { group, kind } = request.kind;
  if (group === MCS_GROUP && kind === 'ServiceExport') return validateServiceExport(request, ctx);
  if (group === MCS_GROUP && kind === 'ServiceImport') return guardWorkerWrite(request, ctx, 'ServiceImport');
  if (group === 'discovery.k8s.io' && kind === 'EndpointSlice') return guardWorkerWrite(request, ctx, 'EndpointSlice');
  if (group === ABOUT_GROUP && kind === 'ClusterProperty') return validateClusterProperty(request, ctx);
  if (group === '' && kind === 'Service') return validateService(request, ctx);
  return unhandled(request, 'validate');
}

export function unhandled(request: AdmissionRequest, webhook: string): Decision {
  const gk = request.kind.group ? `${request.kind.kind}.${request.kind.group}` : request.kind.kind;
  return deny(`the mcs-cloudmap ${webhook} webhook does not handle ${gk}: remove it from the webhook configuration's rules`, 400);
}
