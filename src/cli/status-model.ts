// Plain data read by `mcs-cloudmap status` and the pure rules that turn it into one report: what each cluster exports
// and imports, what Cloud Map holds for the same services, and the problems an operator should look at first.
import { missingIdentityMessage, missingIdentityProperties } from '../core/cluster-id.ts';
import type { Condition, ServiceType } from '../core/types.ts';

export interface EndpointCount {
  ready: number;
  total: number;
}

/** Where a cluster id's Cloud Map instances are: the Regions, and the AWS accounts that registered them. */
export interface ClusterPlaces {
  regions: string[];
  /** CreatedByAccount of the instances; one cluster id registered by two accounts is a duplicate cluster id (C4). */
  accounts: string[];
}

/** A ServiceExport joined with its Service and the Service's own EndpointSlices. */
export interface ExportView {
  namespace: string;
  name: string;
  /** From the Service; undefined when the Service is missing (E4) or has a type that cannot be exported (E5). */
  type?: ServiceType;
  /** `name:port/protocol` of the Service ports (`port/protocol` when unnamed). */
  ports: string[];
  endpoints: EndpointCount;
  conditions: Condition[];
}

/** A ServiceImport joined with the MCS EndpointSlices of each source cluster (S1, S2). */
export interface ImportView {
  namespace: string;
  name: string;
  type: ServiceType;
  ips: string[];
  ports: string[];
  /** status.clusters (I3). */
  clusters: string[];
  /** Keyed by the multicluster.kubernetes.io/source-cluster label of the slices. */
  endpointsByCluster: Record<string, EndpointCount>;
  /** status.endpointSliceObjects (I8, mcs-api v0.5.1): Present or Absent; unset when written by an older controller. */
  endpointSliceObjects?: string;
  conditions: Condition[];
}

/** What one kubeconfig context showed; `error` says what to do when it could not be read. */
export interface ClusterView {
  context: string;
  server: string;
  clusterId?: string;
  clustersetId?: string;
  exports: ExportView[];
  imports: ImportView[];
  error?: string;
}

/** Instances of one Cloud Map service, counted per CLUSTER_ID, for the ClusterSet being inspected (M5). */
export interface CloudMapServiceView {
  namespace: string;
  name: string;
  /** False when Cloud Map has no such namespace or service. */
  found: boolean;
  instancesByCluster: Record<string, EndpointCount>;
  placesByCluster?: Record<string, ClusterPlaces>;
  error?: string;
}

export interface CloudMapView {
  /** Every Region read, comma-separated. */
  region: string;
  endpoint?: string;
  clustersetId?: string;
  /** The account owning the namespaces, when it is not the caller's. */
  namespaceOwner?: string;
  services: CloudMapServiceView[];
  /** Set when Cloud Map could not be asked at all (credentials, region, network). */
  error?: string;
}

export interface Problem {
  /** Context name, or `cloudmap`. */
  where: string;
  /** `namespace/name`, or empty for problems of a whole cluster. */
  service: string;
  message: string;
}

export interface StatusReport {
  clusters: ClusterView[];
  cloudMap?: CloudMapView;
  problems: Problem[];
}

/** Status value that means healthy for each condition type the controller writes (X4, I5, X3). */
const HEALTHY_STATUS: Record<string, Condition['status']> = { Valid: 'True', Ready: 'True', Conflict: 'False' };

export function isHealthy(condition: Condition): boolean {
  const want = HEALTHY_STATUS[condition.type];
  return want === undefined || condition.status === want;
}

export function serviceKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Every namespace/name that any cluster exports or imports, sorted: the services the Cloud Map side is asked about. */
export function servicesOf(clusters: readonly ClusterView[]): { namespace: string; name: string }[] {
  const seen = new Map<string, { namespace: string; name: string }>();
  for (const c of clusters) {
    for (const s of [...c.exports, ...c.imports])
      seen.set(serviceKey(s.namespace, s.name), { namespace: s.namespace, name: s.name });
  }
  return [...seen.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => v);
}

function conditionProblems(where: string, service: string, conditions: readonly Condition[]): Problem[] {
  return conditions
    .filter((c) => !isHealthy(c))
    .map((c) => ({ where, service, message: `${c.type}=${c.status} (${c.reason}): ${c.message}` }));
}

function clusterProblems(c: ClusterView): Problem[] {
  if (c.error !== undefined) return [{ where: c.context, service: '', message: c.error }];
  const out: Problem[] = [];
  const missing = missingIdentityProperties(c.clusterId, c.clustersetId);
  if (missing.length > 0) out.push({ where: c.context, service: '', message: missingIdentityMessage(missing) });
  for (const e of c.exports) out.push(...conditionProblems(c.context, serviceKey(e.namespace, e.name), e.conditions));
  for (const i of c.imports) out.push(...conditionProblems(c.context, serviceKey(i.namespace, i.name), i.conditions));
  return out;
}

/** Cross-checks between clusters and Cloud Map that no single object shows. */
function crossProblems(clusters: readonly ClusterView[], cloudMap: CloudMapView | undefined): Problem[] {
  const out: Problem[] = [];
  const readable = clusters.filter((c) => c.error === undefined);
  const ids = new Map<string, string[]>();
  for (const c of readable)
    if (c.clusterId !== undefined) ids.set(c.clusterId, [...(ids.get(c.clusterId) ?? []), c.context]);
  for (const [id, contexts] of ids) {
    if (contexts.length > 1)
      out.push({
        where: contexts.join(','),
        service: '',
        message: `cluster id "${id}" is claimed by several clusters; give each a unique cluster.clusterset.k8s.io (C4).`,
      });
  }
  const setIds = new Set(readable.map((c) => c.clustersetId).filter((v) => v !== undefined));
  if (setIds.size > 1)
    out.push({
      where: readable.map((c) => c.context).join(','),
      service: '',
      message: `the contexts belong to different ClusterSets (${[...setIds].sort().join(', ')}); inspect one ClusterSet at a time.`,
    });

  if (cloudMap === undefined) return out;
  if (cloudMap.error !== undefined) return [...out, { where: 'cloudmap', service: '', message: cloudMap.error }];
  const cm = new Map(cloudMap.services.map((s) => [serviceKey(s.namespace, s.name), s]));
  for (const c of readable) {
    if (c.clusterId === undefined) continue;
    for (const e of c.exports) {
      const key = serviceKey(e.namespace, e.name);
      const s = cm.get(key);
      if (s === undefined || s.error !== undefined) continue;
      const ready = e.conditions.some((x) => x.type === 'Ready' && x.status === 'True');
      const registered = s.instancesByCluster[c.clusterId];
      if (ready && e.endpoints.total > 0 && registered === undefined) {
        out.push({
          where: c.context,
          service: key,
          message: `export is Ready but Cloud Map has no instances with CLUSTER_ID=${c.clusterId}; check the worker's logs in this cluster.`,
        });
      }
    }
    // Instances of an inspected cluster for a service it no longer exports are left over (E3).
    for (const s of cloudMap.services) {
      const key = serviceKey(s.namespace, s.name);
      const count = s.instancesByCluster[c.clusterId];
      if (count !== undefined && count.total > 0 && !c.exports.some((e) => serviceKey(e.namespace, e.name) === key)) {
        out.push({
          where: c.context,
          service: key,
          message: `Cloud Map still holds ${count.total} instance(s) with CLUSTER_ID=${c.clusterId} but this cluster has no ServiceExport; the worker should deregister them (E3): check its logs in this cluster.`,
        });
      }
    }
  }
  for (const s of cloudMap.services)
    if (s.error !== undefined)
      out.push({ where: 'cloudmap', service: serviceKey(s.namespace, s.name), message: s.error });
  for (const [id, place] of Object.entries(clusterPlacesOf(cloudMap))) {
    if (place.accounts.length > 1) {
      out.push({
        where: 'cloudmap',
        service: '',
        message: `instances of cluster id "${id}" were registered by accounts ${place.accounts.join(', ')}: two clusters use the id "${id}"; give each cluster its own (C4).`,
      });
    }
    if (place.regions.length > 1) {
      out.push({
        where: 'cloudmap',
        service: '',
        message: `cluster id "${id}" has instances in Regions ${place.regions.join(', ')}: a cluster registers in its own Region only; two clusters may use the id "${id}" (C4), or a cluster moved Regions and left instances behind.`,
      });
    }
  }
  return out;
}

/** Every cluster id's Regions and registering accounts, over all services read. */
export function clusterPlacesOf(cloudMap: CloudMapView): Record<string, ClusterPlaces> {
  const out: Record<string, ClusterPlaces> = {};
  for (const s of cloudMap.services) {
    for (const [id, p] of Object.entries(s.placesByCluster ?? {})) {
      const place = (out[id] ??= { regions: [], accounts: [] });
      place.regions = [...new Set([...place.regions, ...p.regions])].sort();
      place.accounts = [...new Set([...place.accounts, ...p.accounts])].sort();
    }
  }
  return out;
}

export function buildStatusReport(clusters: ClusterView[], cloudMap?: CloudMapView): StatusReport {
  const problems = [...clusters.flatMap(clusterProblems), ...crossProblems(clusters, cloudMap)];
  return cloudMap === undefined ? { clusters, problems } : { clusters, cloudMap, problems };
}
