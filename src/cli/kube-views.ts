// Pure conversions from Kubernetes objects (plain JSON as the apiserver returns them) to the views of status-model.ts.
import type { Condition, ServiceType } from '../core/types.ts';
import {
  CONTROLLER_NAME,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
} from '../core/names.ts';
import type { EndpointCount, ExportView, ImportView } from './status-model.ts';

interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}
interface PortJson {
  name?: string;
  port: number;
  protocol?: string;
}
export interface ServiceJson {
  metadata: Meta;
  spec?: { type?: string; clusterIP?: string; ports?: PortJson[] };
}
export interface ServiceExportJson {
  metadata: Meta;
  status?: { conditions?: Condition[] };
}
export interface ServiceImportJson {
  metadata: Meta;
  spec?: { type?: string; ips?: string[]; ports?: PortJson[] };
  status?: { clusters?: { cluster: string }[]; conditions?: Condition[]; endpointSliceObjects?: string };
}
export interface EndpointSliceJson {
  metadata: Meta;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean } }[] | null;
}

export function formatPort(p: PortJson): string {
  const base = `${p.port}/${p.protocol ?? 'TCP'}`;
  return p.name ? `${p.name}:${base}` : base;
}

/** E5/E6: ExternalName cannot be exported; `clusterIP: None` exports as Headless; every other type as ClusterSetIP. */
export function exportedType(svc: ServiceJson): ServiceType | undefined {
  if (svc.spec?.type === 'ExternalName') return undefined;
  return svc.spec?.clusterIP === 'None' ? 'Headless' : 'ClusterSetIP';
}

/** Ready/total distinct addresses; an endpoint whose `ready` is unset counts as ready, as the EndpointSlice API says. */
export function countEndpoints(slices: readonly EndpointSliceJson[]): EndpointCount {
  const ready = new Set<string>();
  const all = new Set<string>();
  for (const slice of slices) {
    for (const ep of slice.endpoints ?? []) {
      const address = ep.addresses?.[0];
      if (address === undefined) continue;
      all.add(address);
      if (ep.conditions?.ready !== false) ready.add(address);
    }
  }
  return { ready: ready.size, total: all.size };
}

/** The Service's own slices (written by Kubernetes' EndpointSlice controller), never the MCS slices we write. */
function localSlicesOf(name: string, slices: readonly EndpointSliceJson[]): EndpointSliceJson[] {
  return slices.filter(
    (s) =>
      s.metadata.labels?.[LABEL_KUBE_SERVICE_NAME] === name &&
      s.metadata.labels?.[LABEL_MANAGED_BY] !== CONTROLLER_NAME,
  );
}

export function exportView(
  se: ServiceExportJson,
  service: ServiceJson | undefined,
  slices: readonly EndpointSliceJson[],
): ExportView {
  const name = se.metadata.name;
  const type = service === undefined ? undefined : exportedType(service);
  return {
    namespace: se.metadata.namespace ?? '',
    name,
    ...(type === undefined ? {} : { type }),
    ports: (service?.spec?.ports ?? []).map(formatPort),
    endpoints: countEndpoints(localSlicesOf(name, slices)),
    conditions: se.status?.conditions ?? [],
  };
}

export function importView(si: ServiceImportJson, slices: readonly EndpointSliceJson[]): ImportView {
  const name = si.metadata.name;
  const byCluster = new Map<string, EndpointSliceJson[]>();
  for (const s of slices) {
    if (s.metadata.labels?.[LABEL_SERVICE_NAME] !== name) continue;
    const cluster = s.metadata.labels[LABEL_SOURCE_CLUSTER] ?? '?';
    byCluster.set(cluster, [...(byCluster.get(cluster) ?? []), s]);
  }
  return {
    namespace: si.metadata.namespace ?? '',
    name,
    type: si.spec?.type === 'Headless' ? 'Headless' : 'ClusterSetIP',
    ips: si.spec?.ips ?? [],
    ports: (si.spec?.ports ?? []).map(formatPort),
    clusters: (si.status?.clusters ?? []).map((c) => c.cluster).sort(),
    endpointsByCluster: Object.fromEntries([...byCluster].map(([cluster, s]) => [cluster, countEndpoints(s)])),
    ...(si.status?.endpointSliceObjects === undefined ? {} : { endpointSliceObjects: si.status.endpointSliceObjects }),
    conditions: si.status?.conditions ?? [],
  };
}
