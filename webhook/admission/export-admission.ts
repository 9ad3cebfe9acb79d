// Validation of the writes that change what this cluster exports: a ServiceExport created or updated (C1, E4, E5,
// X1–X3) and an exported Service updated (E5, X1–X3). Gathers the facts from the cluster view and runs the rules.

import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../../src/core/names.ts';
import { buildClusterExport } from '../../src/core/service-export.ts';
import type { ExportFacts } from '../../src/core/conflicts.ts';
import type { ClusterView } from '../cluster-view.ts';
import type { ServiceExportObject, ServiceObject } from '../objects.ts';
import type { ConflictPolicy } from '../options.ts';
import { checkClusterPropertiesPresent, type ClusterIdentity } from './cluster-properties-present.ts';
import { allow, combine, deny, type Decision } from './decision.ts';
import { checkExportConflicts } from './export-conflicts.ts';
import { checkExportedService, checkServiceTypeChange } from './exported-service.ts';

export interface ExportAdmission {
  view: ClusterView;
  policy: ConflictPolicy;
  /** Unix ms; the creation time a ServiceExport not yet stored will get. */
  now: number;
}

export function clusterIdentity(view: ClusterView): ClusterIdentity {
  return {
    clusterId: view.clusterProperties.get('', CLUSTER_ID_PROPERTY)?.spec?.value,
    clustersetId: view.clusterProperties.get('', CLUSTERSET_ID_PROPERTY)?.spec?.value,
  };
}

interface Target { namespace: string; name: string; ref: string }

/** The export that `service` and `serviceExport` make, as conflict resolution sees it; throws on a Service it cannot read. */
function exportFacts(target: Target, service: ServiceObject, serviceExport: ServiceExportObject, clusterId: string, createdMs: number): ExportFacts {
  return buildClusterExport({
    service: { ...service, metadata: { name: target.name, namespace: target.namespace } },
    serviceExport: { ...serviceExport, metadata: { creationTimestamp: new Date(createdMs) } },
    endpointSlices: [],
    clusterId,
    clustersetId: '',
  });
}

function creationMs(serviceExport: ServiceExportObject | undefined, now: number): number {
  const ms = Date.parse(serviceExport?.metadata?.creationTimestamp ?? '');
  return Number.isFinite(ms) ? ms : now;
}

interface ConflictInputs {
  target: Target;
  clusterId: string;
  service: ServiceObject;
  serviceExport: ServiceExportObject;
  /** What was exported before the write (stored Service and ServiceExport), when anything was. */
  before: { service: ServiceObject; serviceExport: ServiceExportObject } | undefined;
}

function conflicts(ctx: ExportAdmission, inputs: ConflictInputs): Decision {
  const { target, clusterId, service, serviceExport, before } = inputs;
  const created = creationMs(serviceExport, ctx.now);
  let candidate: ExportFacts;
  let previous: ExportFacts | undefined;
  try {
    candidate = exportFacts(target, service, serviceExport, clusterId, created);
    previous = before && before.service.spec?.type !== 'ExternalName'
      ? exportFacts(target, before.service, before.serviceExport, clusterId, created)
      : undefined;
  } catch (err) {
    return deny(`ServiceExport ${target.ref}: the Service cannot be read: ${(err as Error).message}`, 400);
  }
  return checkExportConflicts({
    clusterId, exportRef: target.ref, candidate, previous,
    serviceImport: ctx.view.serviceImports.get(target.namespace, target.name), policy: ctx.policy,
  });
}

/** A ServiceExport being created, or updated with a new spec. */
export function admitServiceExport(ctx: ExportAdmission, target: Target, serviceExport: ServiceExportObject, old: ServiceExportObject | undefined): Decision {
  const identity = clusterIdentity(ctx.view);
  const present = checkClusterPropertiesPresent(identity, target.ref);
  if (!present.allowed) return present;
  const service = ctx.view.services.get(target.namespace, target.name);
  const exported = checkExportedService(service, target.ref);
  if (!exported.allowed || service === undefined) return exported;
  const before = old ? { service, serviceExport: old } : undefined;
  return combine([exported, conflicts(ctx, { target, clusterId: identity.clusterId!, service, serviceExport, before })]);
}

/** A Service created or updated: only exported Services in a cluster with an identity are checked. */
export function admitService(ctx: ExportAdmission, target: Target, service: ServiceObject, old: ServiceObject | undefined): Decision {
  const serviceExport = ctx.view.serviceExports.get(target.namespace, target.name);
  const { clusterId, clustersetId } = clusterIdentity(ctx.view);
  if (serviceExport === undefined || clusterId === undefined || clustersetId === undefined) return allow();
  const typeChange = checkServiceTypeChange(service, target.ref);
  if (service.spec?.type === 'ExternalName') return typeChange;
  const before = old ? { service: old, serviceExport } : undefined;
  return combine([typeChange, conflicts(ctx, { target, clusterId, service, serviceExport, before })]);
}
