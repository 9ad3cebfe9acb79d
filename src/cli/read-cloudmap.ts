// Reads, for each service the clusters export or import, the Cloud Map instances of the ClusterSet (M1, M5) and counts
// them per CLUSTER_ID. Read-only. Namespaces and services are found by name (M1) and confirmed with GetService,
// because ListServices filters are not honoured everywhere (the emulator ignores them).
import {
  GetServiceCommand, paginateListInstances, paginateListNamespaces, paginateListServices, type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { createCloudMapClient } from '../cloudmap/client.ts';
import { CloudMapCaller } from '../cloudmap/call.ts';
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID } from '../core/names.ts';
import { explainCloudMapError } from './explain-error.ts';
import type { CloudMapServiceView, CloudMapView, EndpointCount } from './status-model.ts';

export interface CloudMapReadOptions {
  /** Empty: AWS_REGION / AWS_DEFAULT_REGION from the environment. */
  region: string;
  endpoint?: string;
  /** Only instances with this CLUSTERSET_ID are counted (M5); all instances when undefined. */
  clustersetId?: string;
}

const READY_ATTRIBUTE = 'READY';

/** Instances per CLUSTER_ID of the ClusterSet; an instance without READY (older writers) counts as ready. */
export function countInstances(instances: readonly Record<string, string>[], clustersetId: string | undefined): Record<string, EndpointCount> {
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

async function namespaceIds(client: ServiceDiscoveryClient, caller: CloudMapCaller): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  await caller.call('ListNamespaces', {}, async () => {
    for await (const page of paginateListNamespaces({ client }, {})) {
      for (const ns of page.Namespaces ?? []) if (ns.Name && ns.Id) ids.set(ns.Name, ns.Id);
    }
  });
  return ids;
}

async function serviceId(client: ServiceDiscoveryClient, caller: CloudMapCaller, namespace: string, namespaceId: string, name: string): Promise<string | undefined> {
  const candidates: string[] = [];
  await caller.call('ListServices', { namespace, namespaceId }, async () => {
    const filter = { Name: 'NAMESPACE_ID' as const, Values: [namespaceId], Condition: 'EQ' as const };
    for await (const page of paginateListServices({ client }, { Filters: [filter] })) {
      for (const s of page.Services ?? []) if (s.Name === name && s.Id) candidates.push(s.Id);
    }
  });
  for (const id of candidates) {
    const got = await caller.call('GetService', { namespace, service: name, serviceId: id }, () => client.send(new GetServiceCommand({ Id: id })));
    if (got.Service?.NamespaceId === namespaceId) return id;
  }
  return undefined;
}

async function instanceAttributes(client: ServiceDiscoveryClient, caller: CloudMapCaller, namespace: string, service: string, id: string): Promise<Record<string, string>[]> {
  const out: Record<string, string>[] = [];
  await caller.call('ListInstances', { namespace, service, serviceId: id }, async () => {
    out.length = 0; // a retried call starts over
    for await (const page of paginateListInstances({ client }, { ServiceId: id })) {
      for (const i of page.Instances ?? []) out.push(i.Attributes ?? {});
    }
  });
  return out;
}

export async function readCloudMap(options: CloudMapReadOptions, services: readonly { namespace: string; name: string }[]): Promise<CloudMapView> {
  const region = options.region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || '';
  const base: CloudMapView = {
    region: region || '(none)',
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.clustersetId ? { clustersetId: options.clustersetId } : {}),
    services: [],
  };
  if (!region) return { ...base, error: 'no AWS region for Cloud Map; pass --region or set AWS_REGION.' };
  const client = createCloudMapClient({ region, ...(options.endpoint ? { endpoint: options.endpoint } : {}) });
  const caller = new CloudMapCaller({ maxAttempts: 4 });
  try {
    let namespaces: Map<string, string>;
    try {
      namespaces = await namespaceIds(client, caller);
    } catch (err) {
      return { ...base, error: explainCloudMapError(err, options.endpoint, 'ListNamespaces') };
    }
    const views: CloudMapServiceView[] = [];
    for (const { namespace, name } of services) {
      const view: CloudMapServiceView = { namespace, name, found: false, instancesByCluster: {} };
      views.push(view);
      const nsId = namespaces.get(namespace);
      if (nsId === undefined) continue;
      try {
        const id = await serviceId(client, caller, namespace, nsId, name);
        if (id === undefined) continue;
        view.found = true;
        view.instancesByCluster = countInstances(await instanceAttributes(client, caller, namespace, name, id), options.clustersetId);
      } catch (err) {
        view.error = explainCloudMapError(err, options.endpoint, `reading ${namespace}/${name}`);
      }
    }
    return { ...base, services: views };
  } finally {
    client.destroy();
  }
}
