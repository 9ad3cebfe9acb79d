// Objects and AdmissionRequests for the webhook's unit tests, as the apiserver sends them.
import type { ExportFacts } from '../../src/core/conflicts.ts';
import { exportRecordAnnotations } from '../../src/core/export-record.ts';
import { ABOUT_GROUP, CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY, MCS_GROUP } from '../../src/core/names.ts';
import type { IPFamily, Protocol, ServiceType } from '../../src/core/types.ts';
import type { AdmissionRequest, Operation } from '../../src/webhook/admission/review.ts';
import type { ValidationContext } from '../../src/webhook/admission/validate.ts';
import type { CacheName } from '../../src/webhook/admission/cluster-view.ts';
import { memoryView } from '../../src/webhook/cluster-caches.ts';
import type {
  ClusterPropertyObject,
  ServiceExportObject,
  ServiceImportObject,
  ServiceObject,
} from '../../src/webhook/admission/objects.ts';

export const NOW = Date.parse('2026-01-01T12:00:00Z');
export const WORKER = 'system:serviceaccount:mcs-cloudmap-system:mcs-cloudmap-worker';

export function service(
  name: string,
  spec: NonNullable<ServiceObject['spec']> = {},
  namespace = 'demo',
): ServiceObject & { metadata: { name: string } } {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace },
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.0.0.1',
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      internalTrafficPolicy: 'Cluster',
      ...spec,
    },
  };
}

export function serviceExport(
  name: string,
  extra: Partial<ServiceExportObject> = {},
  namespace = 'demo',
): ServiceExportObject & { metadata: { name: string } } {
  return {
    apiVersion: `${MCS_GROUP}/v1beta1`,
    kind: 'ServiceExport',
    ...extra,
    metadata: { name, namespace, creationTimestamp: '2026-01-01T10:00:00Z', ...extra.metadata },
  };
}

/** When the peers of the fixtures exported: before this cluster's ServiceExports (10:00), so their values are the oldest. */
export const PEER_EXPORTED = Date.parse('2026-01-01T09:00:00Z');

/** A ServiceImport spec as the CRD schema guarantees it: ports and type present. */
type ImportSpec = Omit<
  NonNullable<ServiceImportObject['spec']>,
  'type' | 'ports' | 'sessionAffinity' | 'internalTrafficPolicy'
> & {
  internalTrafficPolicy?: 'Cluster' | 'Local';
  type: ServiceType;
  ports: Array<{ name?: string; protocol?: string; appProtocol?: string; port: number }>;
  sessionAffinity?: 'ClientIP' | 'None';
};

/**
 * A ServiceImport as the worker writes it when every one of `clusters` exported `spec`'s values at PEER_EXPORTED: the
 * spec, status.clusters and the export record annotation the webhook compares with (X1–X3).
 */
export function serviceImport(
  name: string,
  clusters: string[],
  spec: Partial<ImportSpec> = {},
  namespace = 'demo',
): ServiceImportObject & { metadata: { name: string } } {
  const full: ImportSpec = {
    type: 'ClusterSetIP',
    ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
    sessionAffinity: 'None',
    ipFamilies: ['IPv4'],
    ...spec,
  };
  const timeout = full.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  const exported = (clusterId: string): ExportFacts => ({
    clusterId,
    exportCreationTimestamp: PEER_EXPORTED,
    type: full.type,
    ports: full.ports.map((p) => ({
      name: p.name ?? '',
      protocol: (p.protocol ?? 'TCP') as Protocol,
      port: p.port,
      ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
    })),
    sessionAffinity: full.sessionAffinity ?? 'None',
    ...(timeout === undefined ? {} : { sessionAffinityTimeoutSeconds: timeout }),
    ...(full.internalTrafficPolicy === undefined ? {} : { internalTrafficPolicy: full.internalTrafficPolicy }),
    ...(full.trafficDistribution === undefined ? {} : { trafficDistribution: full.trafficDistribution }),
    ipFamilies: (full.ipFamilies ?? []) as IPFamily[],
    exportedLabels: {},
    exportedAnnotations: {},
  });
  return {
    apiVersion: `${MCS_GROUP}/v1beta1`,
    kind: 'ServiceImport',
    metadata: { name, namespace, annotations: exportRecordAnnotations(clusters.map(exported)) },
    spec: full,
    status: { clusters: clusters.map((cluster) => ({ cluster })) },
  };
}

export function clusterProperty(name: string, value: string): ClusterPropertyObject & { metadata: { name: string } } {
  return { apiVersion: `${ABOUT_GROUP}/v1beta1`, kind: 'ClusterProperty', metadata: { name }, spec: { value } };
}

/** A view holding this cluster's identity (east in ClusterSet set1) unless told otherwise. */
export function viewWith(
  objects: {
    services?: ServiceObject[];
    exports?: ServiceExportObject[];
    imports?: ServiceImportObject[];
    identity?: boolean;
  } = {},
) {
  const view = memoryView();
  if (objects.identity !== false) {
    view.clusterProperties.upsert(clusterProperty(CLUSTER_ID_PROPERTY, 'east'));
    view.clusterProperties.upsert(clusterProperty(CLUSTERSET_ID_PROPERTY, 'set1'));
  }
  for (const s of objects.services ?? []) view.services.upsert(s as never);
  for (const e of objects.exports ?? []) view.serviceExports.upsert(e as never);
  for (const i of objects.imports ?? []) view.serviceImports.upsert(i as never);
  return view;
}

export function context(
  view = viewWith(),
  policy: 'Warn' | 'Reject' = 'Warn',
  unsynced: CacheName[] = [],
): ValidationContext {
  return {
    view,
    unsynced: () => unsynced,
    policy,
    externalNamePolicy: 'Warn',
    writers: { worker: WORKER, deleters: ['system:serviceaccount:kube-system:namespace-controller'] },
    now: () => NOW,
  };
}

const KINDS: Record<string, { group: string; version: string }> = {
  ServiceExport: { group: MCS_GROUP, version: 'v1beta1' },
  ServiceImport: { group: MCS_GROUP, version: 'v1beta1' },
  ClusterProperty: { group: ABOUT_GROUP, version: 'v1beta1' },
  Service: { group: '', version: 'v1' },
  EndpointSlice: { group: 'discovery.k8s.io', version: 'v1' },
};

export function request(
  kind: string,
  operation: Operation,
  object: unknown,
  oldObject: unknown = null,
  extra: Partial<AdmissionRequest> = {},
): AdmissionRequest {
  const meta = ((object ?? oldObject) as { metadata?: { name?: string; namespace?: string } } | null)?.metadata;
  return {
    uid: 'uid-1',
    kind: { ...(KINDS[kind] ?? { group: 'example.com', version: 'v1' }), kind },
    subResource: '',
    name: meta?.name ?? '',
    namespace: meta?.namespace ?? '',
    operation,
    username: 'alice',
    object,
    oldObject,
    dryRun: false,
    ...extra,
  };
}
