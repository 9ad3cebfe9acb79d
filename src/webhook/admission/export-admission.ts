// Validation of the writes that change what this cluster exports: a ServiceExport created or updated (C1, E4, E5,
// X1–X3) and an exported Service updated (E5, X1–X3). Gathers the facts from the cluster view and runs the rules.

import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../../core/names.ts';
import { buildClusterExport, type ServiceLike } from '../../core/service-export.ts';
import { pick } from '../../runtime/trim.ts';
import type { ExportFacts } from '../../core/conflicts.ts';
import type { ClusterView } from './cluster-view.ts';
import type { ServiceExportObject, ServiceObject } from './objects.ts';
import { checkClusterPropertiesPresent, type ClusterIdentity } from './cluster-properties-present.ts';
import { allow, combine, deny, type Decision } from './decision.ts';
import { checkExportConflicts, type ConflictPolicy } from './export-conflicts.ts';
import { checkExportedService, checkServiceTypeChange, type ExternalNamePolicy } from './exported-service.ts';

export interface ExportAdmission {
  view: ClusterView;
  policy: ConflictPolicy;
  externalNamePolicy: ExternalNamePolicy;
  /** Unix ms; the creation time a ServiceExport not yet stored will get. */
  now: number;
}

export function clusterIdentity(view: ClusterView): ClusterIdentity {
  return {
    clusterId: view.clusterProperties.get('', CLUSTER_ID_PROPERTY)?.spec?.value,
    clustersetId: view.clusterProperties.get('', CLUSTERSET_ID_PROPERTY)?.spec?.value,
  };
}

export interface Target {
  namespace: string;
  name: string;
  ref: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

type ServiceSpec = Required<NonNullable<ServiceLike['spec']>>;
/** Every spec field buildClusterExport reads: a field added to ServiceLike fails to compile until it is listed here. */
const SERVICE_SPEC_READ: { [K in keyof ServiceSpec]: true } = {
  type: true,
  clusterIP: true,
  ports: true,
  sessionAffinity: true,
  sessionAffinityConfig: true,
  internalTrafficPolicy: true,
  trafficDistribution: true,
  ipFamilies: true,
};
/** Taken as they are; ports and sessionAffinityConfig are cut further below. */
const SERVICE_SPEC_FIELDS = (Object.keys(SERVICE_SPEC_READ) as Array<keyof ServiceSpec>).filter(
  (f) => f !== 'sessionAffinityConfig',
);

/**
 * A Service cut to what these rules read of one: its type (E5) and what buildClusterExport reads (X1–X3). Exact, so a
 * large review can be read in a worker thread and only this cut sent back (W6; test/unit/webhook/lookup-projection.test.ts),
 * and the webhook's Service cache keeps no more (../cluster-caches.ts).
 */
export function serviceAsRead(service: ServiceObject): ServiceObject {
  const spec = service.spec;
  if (!isRecord(spec)) return spec === undefined ? {} : { spec };
  const cut = pick(spec, SERVICE_SPEC_FIELDS);
  if (Array.isArray(spec.ports))
    cut.ports = spec.ports.map(
      (p) => (isRecord(p) ? pick(p, ['name', 'protocol', 'port', 'targetPort', 'appProtocol']) : p) as typeof p,
    );
  const timeoutSeconds = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  if (timeoutSeconds !== undefined) cut.sessionAffinityConfig = { clientIP: { timeoutSeconds } };
  return { spec: cut };
}

/** A ServiceExport cut to what these rules read of one: its creation time and what it exports (E7). */
export function serviceExportAsRead(serviceExport: ServiceExportObject): ServiceExportObject {
  const creationTimestamp = serviceExport.metadata?.creationTimestamp;
  const spec = serviceExport.spec;
  return {
    ...(creationTimestamp === undefined ? {} : { metadata: { creationTimestamp } }),
    ...(spec === undefined
      ? {}
      : { spec: isRecord(spec) ? pick(spec, ['exportedLabels', 'exportedAnnotations']) : spec }),
  };
}

/** The export that `service` and `serviceExport` make, as conflict resolution sees it; throws on a Service it cannot read. */
function exportFacts(
  target: Target,
  service: ServiceObject,
  serviceExport: ServiceExportObject,
  clusterId: string,
  createdMs: number,
): ExportFacts {
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

/** X1–X3 for the export `service` and `serviceExport` make once written (the ServiceExport's own creation time counts). */
function conflicts(
  ctx: ExportAdmission,
  target: Target,
  clusterId: string,
  service: ServiceObject,
  serviceExport: ServiceExportObject,
): Decision {
  let candidate: ExportFacts;
  try {
    candidate = exportFacts(target, service, serviceExport, clusterId, creationMs(serviceExport, ctx.now));
  } catch (err) {
    return deny(`ServiceExport ${target.ref}: the Service cannot be read: ${(err as Error).message}`, 400);
  }
  return checkExportConflicts({
    clusterId,
    exportRef: target.ref,
    candidate,
    serviceImport: ctx.view.serviceImports.get(target.namespace, target.name),
    policy: ctx.policy,
  });
}

/** A ServiceExport being created, or updated with a new spec. */
export function admitServiceExport(ctx: ExportAdmission, target: Target, serviceExport: ServiceExportObject): Decision {
  const identity = clusterIdentity(ctx.view);
  const present = checkClusterPropertiesPresent(identity, target.ref);
  if (!present.allowed) return present;
  const service = ctx.view.services.get(target.namespace, target.name);
  const exported = checkExportedService(service, target.ref, ctx.externalNamePolicy);
  // E5: an ExternalName Service exports nothing, so there is nothing to compare with the ClusterSet.
  if (!exported.allowed || service === undefined || service.spec?.type === 'ExternalName') return exported;
  return combine([exported, conflicts(ctx, target, identity.clusterId!, service, serviceExport)]);
}

/** A Service created or updated: only exported Services in a cluster with an identity are checked. */
export function admitService(ctx: ExportAdmission, target: Target, service: ServiceObject): Decision {
  const serviceExport = ctx.view.serviceExports.get(target.namespace, target.name);
  const { clusterId, clustersetId } = clusterIdentity(ctx.view);
  if (serviceExport === undefined || clusterId === undefined || clustersetId === undefined) return allow();
  const typeChange = checkServiceTypeChange(service, target.ref);
  if (service.spec?.type === 'ExternalName') return typeChange;
  return combine([typeChange, conflicts(ctx, target, clusterId, service, serviceExport)]);
}
