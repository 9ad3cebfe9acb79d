// Reads, for each service the clusters export or import, the Cloud Map instances of the ClusterSet (M1, M5) in every
// Region asked for and counts them per CLUSTER_ID, with the Regions and the registering accounts (CreatedByAccount)
// each cluster id was seen in. Read-only. Namespaces and services are found by name (M1) and confirmed with
// GetService, because ListServices filters are not honoured everywhere (the emulator ignores them); namespaces of
// another account (shared through AWS RAM) are named by ARN.
import {
  GetServiceCommand,
  paginateListInstances,
  paginateListNamespaces,
  paginateListServices,
  type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { createCloudMapClient } from '../cloudmap/client.ts';
import { CloudMapCaller } from '../cloudmap/call.ts';
import { resourceReference, sameResource } from '../cloudmap/shared-namespaces.ts';
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID } from '../core/names.ts';
import { HTTP_NAMING, type NamespaceNaming } from '../core/namespace-naming.ts';
import { explainCloudMapError } from './explain-error.ts';
import type { CloudMapServiceView, CloudMapView, ClusterPlaces, EndpointCount } from './status-model.ts';

export interface CloudMapReadOptions {
  /** Empty: AWS_REGION / AWS_DEFAULT_REGION from the environment. */
  region: string;
  /** Further Regions of the ClusterSet, read as well. */
  regions?: readonly string[];
  /** The account owning the namespaces when it is not the caller's (shared namespaces). */
  namespaceOwner?: string;
  endpoint?: string;
  /** Only instances with this CLUSTERSET_ID are counted (M5); all instances when undefined. */
  clustersetId?: string;
  /** Which Cloud Map namespace holds each Kubernetes namespace; default: the HTTP namespace of the same name. */
  naming?: NamespaceNaming;
}

const READY_ATTRIBUTE = 'READY';

/** Instances per CLUSTER_ID of the ClusterSet; an instance without READY (older writers) counts as ready. */
export function countInstances(
  instances: readonly Record<string, string>[],
  clustersetId: string | undefined,
): Record<string, EndpointCount> {
  const out: Record<string, EndpointCount> = {};
  for (const attrs of instances) {
    if (clustersetId !== undefined && attrs[ATTR_CLUSTERSET_ID] !== clustersetId) continue;
    const id = attrs[ATTR_CLUSTER_ID] ?? '?';
    const c = (out[id] ??= { ready: 0, total: 0 });
    c.total++;
    if (attrs[READY_ATTRIBUTE] !== 'false') c.ready++;
  }
  return out;
}

/** One instance as ListInstances shows it. */
interface ListedInstance {
  attributes: Record<string, string>;
  createdByAccount?: string;
}

/** Where each cluster id of the ClusterSet has instances: this Region, and the accounts that registered them. */
export function clusterPlaces(
  instances: readonly ListedInstance[],
  clustersetId: string | undefined,
  region: string,
): Record<string, ClusterPlaces> {
  const out: Record<string, ClusterPlaces> = {};
  for (const { attributes, createdByAccount } of instances) {
    if (clustersetId !== undefined && attributes[ATTR_CLUSTERSET_ID] !== clustersetId) continue;
    const place = (out[attributes[ATTR_CLUSTER_ID] ?? '?'] ??= { regions: [region], accounts: [] });
    if (createdByAccount !== undefined && !place.accounts.includes(createdByAccount))
      place.accounts.push(createdByAccount);
  }
  for (const place of Object.values(out)) place.accounts.sort();
  return out;
}

/** Namespace name → the reference calls need: its id, or its ARN when another account owns it. */
async function namespaceIds(
  client: ServiceDiscoveryClient,
  caller: CloudMapCaller,
  owner: string | undefined,
): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  await caller.call('ListNamespaces', {}, async () => {
    for await (const page of paginateListNamespaces({ client }, {})) {
      for (const ns of page.Namespaces ?? []) {
        if (owner !== undefined && ns.ResourceOwner !== owner) continue;
        const ref = resourceReference(ns, owner !== undefined);
        if (ns.Name && ref) ids.set(ns.Name, ref);
      }
    }
  });
  return ids;
}

async function serviceId(
  client: ServiceDiscoveryClient,
  caller: CloudMapCaller,
  namespace: string,
  namespaceId: string,
  name: string,
): Promise<string | undefined> {
  const candidates: string[] = [];
  await caller.call('ListServices', { namespace, namespaceId }, async () => {
    const filter = { Name: 'NAMESPACE_ID' as const, Values: [namespaceId], Condition: 'EQ' as const };
    for await (const page of paginateListServices({ client }, { Filters: [filter] })) {
      for (const s of page.Services ?? [])
        if (s.Name === name && s.Id) candidates.push(namespaceId.startsWith('arn:') ? (s.Arn ?? s.Id) : s.Id);
    }
  });
  for (const id of candidates) {
    const got = await caller.call('GetService', { namespace, service: name, serviceId: id }, (abortSignal) =>
      client.send(new GetServiceCommand({ Id: id }), { abortSignal }),
    );
    if (got.Service?.NamespaceId !== undefined && sameResource(got.Service.NamespaceId, namespaceId)) return id;
  }
  return undefined;
}

async function listInstances(
  client: ServiceDiscoveryClient,
  caller: CloudMapCaller,
  namespace: string,
  service: string,
  id: string,
): Promise<ListedInstance[]> {
  const out: ListedInstance[] = [];
  await caller.call('ListInstances', { namespace, service, serviceId: id }, async () => {
    out.length = 0; // a retried call starts over
    for await (const page of paginateListInstances({ client }, { ServiceId: id })) {
      for (const i of page.Instances ?? [])
        out.push({
          attributes: i.Attributes ?? {},
          ...(i.CreatedByAccount ? { createdByAccount: i.CreatedByAccount } : {}),
        });
    }
  });
  return out;
}

/** Every Region of the ClusterSet read, its services merged: a cluster's counts add up, its Regions and accounts join. */
export async function readCloudMap(
  options: CloudMapReadOptions,
  services: readonly { namespace: string; name: string }[],
): Promise<CloudMapView> {
  const own = options.region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || '';
  const regions = [...new Set([own, ...(options.regions ?? [])].filter(Boolean))];
  const views = await Promise.all(regions.map((region) => readRegion(options, region, services)));
  const base: CloudMapView = {
    region: regions.join(', ') || '(none)',
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.clustersetId ? { clustersetId: options.clustersetId } : {}),
    ...(options.namespaceOwner ? { namespaceOwner: options.namespaceOwner } : {}),
    services: [],
  };
  if (!own) return { ...base, error: 'no AWS region for Cloud Map; pass --region or set AWS_REGION.' };
  const errors = views.flatMap((v, i) =>
    v.error === undefined ? [] : [regions.length > 1 ? `${regions[i]}: ${v.error}` : v.error],
  );
  if (errors.length > 0) return { ...base, error: errors.join(' ') };
  return { ...base, services: services.map((_, i) => mergeServiceViews(views.map((v) => v.services[i]!))) };
}

function mergeServiceViews(views: readonly CloudMapServiceView[]): CloudMapServiceView {
  const merged: CloudMapServiceView = {
    namespace: views[0]!.namespace,
    name: views[0]!.name,
    found: views.some((v) => v.found),
    instancesByCluster: {},
    placesByCluster: {},
  };
  for (const v of views) {
    for (const [id, c] of Object.entries(v.instancesByCluster)) {
      const sum = (merged.instancesByCluster[id] ??= { ready: 0, total: 0 });
      sum.ready += c.ready;
      sum.total += c.total;
    }
    for (const [id, p] of Object.entries(v.placesByCluster ?? {})) {
      const place = (merged.placesByCluster![id] ??= { regions: [], accounts: [] });
      place.regions = [...new Set([...place.regions, ...p.regions])];
      place.accounts = [...new Set([...place.accounts, ...p.accounts])].sort();
    }
  }
  const errors = views.flatMap((v) => (v.error === undefined ? [] : [v.error]));
  if (errors.length > 0) merged.error = errors.join(' ');
  return merged;
}

async function readRegion(
  options: CloudMapReadOptions,
  region: string,
  services: readonly { namespace: string; name: string }[],
): Promise<CloudMapView> {
  const base: CloudMapView = { region, services: [] };
  const client = createCloudMapClient({ region, ...(options.endpoint ? { endpoint: options.endpoint } : {}) });
  const caller = new CloudMapCaller({ maxAttempts: 4 });
  try {
    let namespaces: Map<string, string>;
    try {
      namespaces = await namespaceIds(client, caller, options.namespaceOwner);
    } catch (err) {
      return { ...base, error: explainCloudMapError(err, options.endpoint, 'ListNamespaces') };
    }
    const views: CloudMapServiceView[] = [];
    for (const { namespace, name } of services) {
      const view: CloudMapServiceView = { namespace, name, found: false, instancesByCluster: {} };
      views.push(view);
      const nsId = namespaces.get((options.naming ?? HTTP_NAMING).cloudMapName(namespace));
      if (nsId === undefined) continue;
      try {
        const id = await serviceId(client, caller, namespace, nsId, name);
        if (id === undefined) continue;
        view.found = true;
        const instances = await listInstances(client, caller, namespace, name, id);
        view.instancesByCluster = countInstances(
          instances.map((i) => i.attributes),
          options.clustersetId,
        );
        view.placesByCluster = clusterPlaces(instances, options.clustersetId, region);
      } catch (err) {
        view.error = explainCloudMapError(err, options.endpoint, `reading ${namespace}/${name} in ${region}`);
      }
    }
    return { ...base, services: views };
  } finally {
    client.destroy();
  }
}
