// The validating webhook: routes an AdmissionRequest to the rules of its kind. Objects of our kinds are checked against
// the CRD schema first, so the rules only ever see well-formed data; a request for a kind we do not handle is denied
// with a pointer to the webhook configuration rather than silently allowed.

import { isWellKnownPropertyName } from '../../core/cluster-id.ts';
import { ABOUT_GROUP, MCS_GROUP } from '../../core/names.ts';
import type { CacheName, ClusterView } from './cluster-view.ts';
import { customObjectError } from '../crd/object-validation.ts';
import type { CustomKind } from '../crd/schemas.ts';
import {
  metadataError,
  serviceError,
  type ClusterPropertyObject,
  type KubeObject,
  type ServiceExportObject,
  type ServiceObject,
} from './objects.ts';
import type { ConflictPolicy } from './export-conflicts.ts';
import type { ExternalNamePolicy } from './exported-service.ts';
import { checkClusterPropertyChange, type ClusterPropertyChange } from './cluster-property-change.ts';
import { allow, deny, type Decision } from './decision.ts';
import {
  admitService,
  admitServiceExport,
  serviceAsRead,
  serviceExportAsRead,
  type ExportAdmission,
  type Target,
} from './export-admission.ts';
import { checkExportName } from './export-name.ts';
import type { AdmissionRequest } from './review.ts';
import { checkWorkerOnlyWrite, type WriterIdentities } from './worker-only-writes.ts';

export interface ValidationContext {
  view: ClusterView;
  /** Caches still loading (see ../transport/server.ts: after a grace period the server serves before they are all synced). */
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
  return deny(
    `${what} cannot be checked yet: the mcs-cloudmap webhook is still loading its caches (${loading.join(', ')}); retry in a few seconds.`,
    503,
  );
}

/** `namespace/name` (or `name`) of the request's object, falling back to metadata.generateName for unnamed creates. */
export function requestRef(request: AdmissionRequest): string {
  const meta = (
    (request.object ?? request.oldObject) as { metadata?: { name?: unknown; generateName?: unknown } } | null
  )?.metadata;
  const name =
    request.name ||
    (typeof meta?.name === 'string' ? meta.name : '') ||
    `${typeof meta?.generateName === 'string' ? meta.generateName : ''}*`;
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

/**
 * What a validation still needs from the caches once everything the request alone settles is settled: the rule and the
 * request's data it reads. `projectLookup` cuts it to exactly what `decideLookup` reads, so a large review can be read in
 * a worker thread and only this crosses to the main thread, where the caches are (W6).
 */
export type Lookup =
  | { rule: 'ServiceExport'; target: Target; serviceExport: ServiceExportObject }
  | { rule: 'Service'; target: Target; service: ServiceObject }
  | { rule: 'ClusterProperty'; needsExports: boolean; change: Omit<ClusterPropertyChange, 'exports'> };

/** A decision made from the request alone, or what is left to look up. */
export type Reading = { decision: Decision } | { lookup: Lookup };

const decided = (decision: Decision): Reading => ({ decision });

function readServiceExport(request: AdmissionRequest): Reading {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return decided(allow());
  const unnamed = objectError(request, metadataError);
  if (unnamed !== undefined) return decided(unreadable(request, unnamed));
  const object = request.object as ServiceExportObject & { metadata: { deletionTimestamp?: string } };
  const old = request.oldObject as ServiceExportObject | null;
  // Status writes and updates during a deletion (the worker removing its finalizer) export nothing new and must never
  // be blocked, whatever else the object holds.
  if (request.subResource !== '' || object.metadata.deletionTimestamp !== undefined) return decided(allow());
  const error = objectError(request, customCheck('ServiceExport'));
  if (error !== undefined) return decided(unreadable(request, error));
  if (old !== null && JSON.stringify(old.spec ?? {}) === JSON.stringify(object.spec ?? {})) return decided(allow());
  const target = {
    namespace: request.namespace,
    name: request.name || object.metadata?.name || '',
    ref: requestRef(request),
  };
  if (request.operation === 'CREATE') {
    const named = checkExportName(target.name, target.ref);
    if (!named.allowed) return decided(named);
  }
  return { lookup: { rule: 'ServiceExport', target, serviceExport: object } };
}

function readService(request: AdmissionRequest): Reading {
  if ((request.operation !== 'CREATE' && request.operation !== 'UPDATE') || request.subResource !== '')
    return decided(allow());
  const error = objectError(request, serviceError);
  if (error !== undefined) return decided(unreadable(request, error));
  return {
    lookup: {
      rule: 'Service',
      target: { namespace: request.namespace, name: request.name, ref: requestRef(request) },
      service: request.object as ServiceObject,
    },
  };
}

function readClusterProperty(request: AdmissionRequest): Reading {
  if (request.subResource !== '') return decided(allow());
  const error = objectError(request, customCheck('ClusterProperty'));
  if (error !== undefined) return decided(unreadable(request, error));
  // A stored object is only known to have metadata (objectError); its value may be anything.
  const value = (o: unknown) => {
    const v = (o as Partial<ClusterPropertyObject> | null)?.spec?.value;
    return typeof v === 'string' ? v : undefined;
  };
  const name = request.name || ((request.object ?? request.oldObject) as KubeObject).metadata?.name || '';
  return {
    lookup: {
      rule: 'ClusterProperty',
      needsExports: request.operation !== 'CREATE' && isWellKnownPropertyName(name),
      change: { operation: request.operation, name, value: value(request.object), oldValue: value(request.oldObject) },
    },
  };
}

function guardWorkerWrite(
  request: AdmissionRequest,
  writers: WriterIdentities,
  kind: 'ServiceImport' | 'EndpointSlice',
): Decision {
  const error = objectError(request, metadataError);
  if (error !== undefined) return unreadable(request, error);
  const labels = (o: unknown) => (o as KubeObject | null)?.metadata?.labels ?? undefined;
  return checkWorkerOnlyWrite(
    {
      kind,
      target: requestRef(request),
      operation: request.operation,
      username: request.username,
      labels: labels(request.object),
      oldLabels: labels(request.oldObject),
    },
    writers,
  );
}

/** Everything the request alone decides (schemas, names, I6 writers); needs no cache. */
export function readValidation(request: AdmissionRequest, writers: WriterIdentities): Reading {
  const { group, kind } = request.kind;
  if (group === MCS_GROUP && kind === 'ServiceExport') return readServiceExport(request);
  if (group === MCS_GROUP && kind === 'ServiceImport')
    return decided(guardWorkerWrite(request, writers, 'ServiceImport'));
  if (group === 'discovery.k8s.io' && kind === 'EndpointSlice')
    return decided(guardWorkerWrite(request, writers, 'EndpointSlice'));
  if (group === ABOUT_GROUP && kind === 'ClusterProperty') return readClusterProperty(request);
  if (group === '' && kind === 'Service') return readService(request);
  return decided(unhandled(request, 'validate'));
}

/** Only the fields of a lookup's objects that `decideLookup` reads (export-admission.ts says which). */
export function projectLookup(lookup: Lookup): Lookup {
  switch (lookup.rule) {
    case 'ServiceExport':
      return { ...lookup, serviceExport: serviceExportAsRead(lookup.serviceExport) };
    case 'Service':
      return { ...lookup, service: serviceAsRead(lookup.service) };
    case 'ClusterProperty':
      return lookup;
  }
}

/** The rest of a validation, against the caches. */
export function decideLookup(lookup: Lookup, ctx: ValidationContext): Decision {
  switch (lookup.rule) {
    case 'ServiceExport': {
      const loading = stillLoading(
        ctx,
        ['clusterProperties', 'services', 'serviceImports'],
        `ServiceExport ${lookup.target.ref}`,
      );
      return loading ?? admitServiceExport(exportAdmission(ctx), lookup.target, lookup.serviceExport);
    }
    case 'Service':
      // Services are guarded with failurePolicy Ignore: while the caches load they pass, as when the webhook is away.
      if (ctx.unsynced().length > 0) return allow();
      return admitService(exportAdmission(ctx), lookup.target, lookup.service);
    case 'ClusterProperty': {
      const loading = lookup.needsExports
        ? stillLoading(ctx, ['serviceExports'], `ClusterProperty ${lookup.change.name}`)
        : undefined;
      return (
        loading ?? checkClusterPropertyChange({ ...lookup.change, exports: ctx.view.serviceExports.list().length })
      );
    }
  }
}

export function validateAdmission(request: AdmissionRequest, ctx: ValidationContext): Decision {
  const reading = readValidation(request, ctx.writers);
  return 'decision' in reading ? reading.decision : decideLookup(reading.lookup, ctx);
}

export function unhandled(request: AdmissionRequest, webhook: string): Decision {
  const gk = request.kind.group ? `${request.kind.kind}.${request.kind.group}` : request.kind.kind;
  return deny(
    `the mcs-cloudmap ${webhook} webhook does not handle ${gk}: remove it from the webhook configuration's rules`,
    400,
  );
}
