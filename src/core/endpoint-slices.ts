// EndpointSlices on the importing side (S1–S4): the slices that should exist for one ServiceImport, and the creates,
// updates and deletes that bring the slices we manage there.
import { isIPv4, isIPv6 } from 'node:net';
import { compareText } from './cluster-export.ts';
import { hashedName, shortHash } from './hashed-names.ts';
import {
  CONTROLLER_NAME,
  LABEL_CREATED_BY,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
} from './names.ts';
import { comparePorts, portListKey, toPortSpec, type PortSpec, type ServedPorts, type StoredPort } from './ports.ts';
import type { OwnerReference } from './service-import.ts';
import type { ClusterExport, EndpointPort, IPFamily } from './types.ts';

/** S4: endpoints per slice (the API allows 1000; 100 is what the EndpointSlice controller uses and the spec asks). */
export const MAX_ENDPOINTS_PER_SLICE = 100;

export interface SliceEndpoint {
  addresses: [string];
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  hostname?: string;
  nodeName?: string;
  zone?: string;
  /** The endpoint's own zone, so kube-proxy prefers close endpoints: only under trafficDistribution PreferClose. */
  hints?: { forZones: [{ name: string }] };
}

/** A `discovery.k8s.io/v1` EndpointSlice as this controller writes it. */
export interface DesiredEndpointSlice {
  apiVersion: 'discovery.k8s.io/v1';
  kind: 'EndpointSlice';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    ownerReferences?: OwnerReference[];
    /** Set on updates (from the existing slice) so the write is refused if someone changed it meanwhile. */
    resourceVersion?: string;
  };
  addressType: IPFamily;
  endpoints: SliceEndpoint[];
  ports: PortSpec[];
}

/** An EndpointSlice read back from the API server (client-node's V1EndpointSlice fits). */
export interface StoredEndpointSlice {
  metadata?:
    | {
        name?: string | undefined;
        labels?: Record<string, string> | undefined;
        ownerReferences?: Array<{ uid: string }> | undefined;
        resourceVersion?: string | undefined;
      }
    | undefined;
  addressType?: string | undefined;
  endpoints?:
    | Array<{
        addresses?: string[] | undefined;
        conditions?:
          | { ready?: boolean | undefined; serving?: boolean | undefined; terminating?: boolean | undefined }
          | undefined;
        hostname?: string | undefined;
        nodeName?: string | undefined;
        zone?: string | undefined;
        hints?: { forZones?: Array<{ name: string }> | undefined } | undefined;
      }>
    | null
    | undefined;
  ports?: StoredPort[] | null | undefined;
}

export interface EndpointSlicePlanInput {
  namespace: string;
  importName: string;
  /** The derived Service kube-proxy should program with these endpoints (S2 `kubernetes.io/service-name`). */
  derivedServiceName: string;
  /** Usually the ServiceImport, so the slices go when it goes. */
  owner?: OwnerReference | undefined;
  exports: ReadonlyArray<Pick<ClusterExport, 'clusterId' | 'endpoints'>>;
  /**
   * X5, strict port conflicts: per cluster, the import's ports its endpoints serve (mergePorts' `served`). Other endpoint
   * ports are left out of its slices, and an endpoint left with none of its ports is left out, so no port reaches a
   * cluster whose Service does not expose it as the ServiceImport states it.
   */
  served: ServedPorts;
  /**
   * The import's trafficDistribution is PreferClose: each endpoint's zone becomes its zone hint. Only then, as
   * Kubernetes' own EndpointSlice controller does: kube-proxy (1.31 and later) follows hints wherever slices carry them,
   * so hints on every import would keep traffic in the node's zone although the exporter never asked for it.
   */
  zoneHints?: boolean;
}

/** Something in a peer's export the API server would refuse; it is left out and the rest is imported. */
export interface EndpointProblem {
  clusterId: string;
  address: string;
  problem: string;
}

export interface EndpointSlicePlan {
  slices: DesiredEndpointSlice[];
  problems: EndpointProblem[];
}

/** The endpoints of one cluster and IP family that serve the same ports, by address. */
interface PortGroup {
  ports: PortSpec[];
  endpoints: Map<string, SliceEndpoint>;
}

/**
 * S1–S4, X5: one slice per source cluster, IP family and set of endpoint ports (those the cluster serves), split in
 * chunks of at most 100 endpoints; every endpoint that serves a port is kept, whatever the total. Names are `<import>-<cluster>-<hash>-<n>`: the hash (of import, cluster
 * and family) keeps names unique when dashes make `<import>-<cluster>` ambiguous and lets the family's slices keep their
 * names (so their immutable addressType) across runs; n counts that family's slices in a fixed order, so a changed
 * endpoint updates a slice in place. Endpoints are ordered by address: inserting one can shift later endpoints into the
 * next slice of the same cluster, which costs a few updates on very large services but never a create or delete.
 */
export function planEndpointSlices(input: EndpointSlicePlanInput): EndpointSlicePlan {
  const problems: EndpointProblem[] = [];
  // cluster → family → port list key → endpoints by address
  const groups = new Map<string, Map<IPFamily, Map<string, PortGroup>>>();

  for (const { clusterId, endpoints } of input.exports) {
    for (const endpoint of endpoints) {
      const family = isIPv4(endpoint.address) ? 'IPv4' : isIPv6(endpoint.address) ? 'IPv6' : undefined;
      if (family === undefined) {
        problems.push({
          clusterId,
          address: endpoint.address,
          problem: 'not an IPv4 or IPv6 address; endpoint left out',
        });
        continue;
      }
      const served = input.served.get(clusterId);
      const ports = slicePorts(
        clusterId,
        endpoint.ports.filter((p) => served?.has(p.name) === true),
        endpoint.address,
        problems,
      );
      // Not a problem to log: the cluster lost every port of this endpoint to a port conflict its condition reports.
      if (ports.length === 0 && endpoint.ports.length > 0) continue;
      const byFamily = getOrAdd(groups, clusterId, () => new Map<IPFamily, Map<string, PortGroup>>());
      const byPorts = getOrAdd(byFamily, family, () => new Map<string, PortGroup>());
      const group = getOrAdd(byPorts, portListKey(ports), () => ({
        ports,
        endpoints: new Map<string, SliceEndpoint>(),
      }));
      // The same address twice within a cluster and port set is one endpoint. Which report is kept must not depend on
      // the order Cloud Map listed them in, or the slice would flap between the two: the smaller JSON form wins.
      const candidate = sliceEndpoint(clusterId, endpoint, input.zoneHints === true, problems);
      const kept = group.endpoints.get(endpoint.address);
      if (kept === undefined || JSON.stringify(candidate) < JSON.stringify(kept))
        group.endpoints.set(endpoint.address, candidate);
    }
  }

  const slices: DesiredEndpointSlice[] = [];
  for (const clusterId of [...groups.keys()].sort()) {
    for (const [family, byPorts] of [...groups.get(clusterId)!].sort(([a], [b]) => compareText(a, b))) {
      const base = `${input.importName}-${clusterId}`;
      const hash = shortHash([input.importName, clusterId, family]);
      let n = 0;
      for (const [, group] of [...byPorts].sort(([a], [b]) => compareText(a, b))) {
        const endpoints = [...group.endpoints.values()].sort((a, b) => compareText(a.addresses[0], b.addresses[0]));
        for (let start = 0; start < endpoints.length; start += MAX_ENDPOINTS_PER_SLICE) {
          slices.push({
            apiVersion: 'discovery.k8s.io/v1',
            kind: 'EndpointSlice',
            metadata: {
              name: hashedName(base, hash, String(n++)),
              namespace: input.namespace,
              labels: sliceLabels(input, clusterId),
              ...(input.owner === undefined ? {} : { ownerReferences: [input.owner] }),
            },
            addressType: family,
            endpoints: endpoints.slice(start, start + MAX_ENDPOINTS_PER_SLICE),
            ports: group.ports,
          });
        }
      }
    }
  }
  return { slices, problems };
}

/** S2 labels, plus our created-by label. */
function sliceLabels(input: EndpointSlicePlanInput, clusterId: string): Record<string, string> {
  return {
    [LABEL_SERVICE_NAME]: input.importName,
    [LABEL_SOURCE_CLUSTER]: clusterId,
    [LABEL_MANAGED_BY]: CONTROLLER_NAME,
    [LABEL_KUBE_SERVICE_NAME]: input.derivedServiceName,
    [LABEL_CREATED_BY]: CONTROLLER_NAME,
  };
}

/** Endpoint ports in a fixed order; a slice cannot hold two ports of the same name, so only the first is kept. */
function slicePorts(
  clusterId: string,
  ports: readonly EndpointPort[],
  address: string,
  problems: EndpointProblem[],
): PortSpec[] {
  const byName = new Map<string, PortSpec>();
  for (const port of ports.map(toPortSpec).sort(comparePorts)) {
    const seen = byName.get(port.name ?? '');
    if (seen === undefined) byName.set(port.name ?? '', port);
    else if (comparePorts(seen, port) !== 0) {
      problems.push({
        clusterId,
        address,
        problem: `two ports named "${port.name ?? ''}"; only ${seen.protocol}/${seen.port} kept`,
      });
    }
  }
  return [...byName.values()];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
/** A Kubernetes label value (zones are the Nodes' topology.kubernetes.io/zone label). */
const LABEL_VALUE = /^(?=.{1,63}$)[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function sliceEndpoint(
  clusterId: string,
  endpoint: ClusterExport['endpoints'][number],
  zoneHints: boolean,
  problems: EndpointProblem[],
): SliceEndpoint {
  const out: SliceEndpoint = {
    addresses: [endpoint.address],
    // Cloud Map carries readiness only (M2): a ready endpoint is serving, and terminating endpoints are not exported.
    conditions: { ready: endpoint.ready, serving: endpoint.ready, terminating: false },
  };
  if (endpoint.hostname !== undefined && endpoint.hostname !== '') {
    if (DNS_LABEL.test(endpoint.hostname)) out.hostname = endpoint.hostname;
    else
      problems.push({
        clusterId,
        address: endpoint.address,
        problem: `hostname "${endpoint.hostname}" is not a DNS label; hostname left out`,
      });
  }
  if (endpoint.nodeName !== undefined && endpoint.nodeName !== '') {
    if (DNS_SUBDOMAIN.test(endpoint.nodeName)) out.nodeName = endpoint.nodeName;
    else
      problems.push({
        clusterId,
        address: endpoint.address,
        problem: `node name "${endpoint.nodeName}" is not a DNS subdomain; node name left out`,
      });
  }
  if (endpoint.zone !== undefined && endpoint.zone !== '') {
    if (LABEL_VALUE.test(endpoint.zone)) {
      out.zone = endpoint.zone;
      if (zoneHints) out.hints = { forZones: [{ name: endpoint.zone }] };
    } else
      problems.push({
        clusterId,
        address: endpoint.address,
        problem: `zone "${endpoint.zone}" is not a label value; zone left out`,
      });
  }
  return out;
}

export interface EndpointSliceDiff {
  create: DesiredEndpointSlice[];
  /** Full objects to write, carrying the existing slice's resourceVersion. */
  update: DesiredEndpointSlice[];
  /** Names of slices to delete. Apply deletes before creates: a slice whose addressType must change is deleted and created under the same name. */
  delete: string[];
}

/**
 * The writes that turn `existing` into `desired` (S3: slices of clusters that stopped exporting are deleted). Only
 * existing slices managed by this controller are considered, so nobody else's slice is ever touched. Slices are
 * compared semantically: endpoint and port order, server-set fields and labels we do not set do not count.
 */
export function diffEndpointSlices(
  desired: readonly DesiredEndpointSlice[],
  existing: readonly StoredEndpointSlice[],
): EndpointSliceDiff {
  const ours = new Map<string, StoredEndpointSlice>();
  for (const slice of existing) {
    const name = slice.metadata?.name;
    if (name !== undefined && slice.metadata?.labels?.[LABEL_MANAGED_BY] === CONTROLLER_NAME) ours.set(name, slice);
  }
  const diff: EndpointSliceDiff = { create: [], update: [], delete: [] };
  const wanted = new Set<string>();
  for (const slice of desired) {
    wanted.add(slice.metadata.name);
    const current = ours.get(slice.metadata.name);
    if (current === undefined) {
      diff.create.push(slice);
    } else if (current.addressType !== slice.addressType) {
      diff.delete.push(slice.metadata.name);
      diff.create.push(slice);
    } else if (!sameSlice(slice, current)) {
      const resourceVersion = current.metadata?.resourceVersion;
      diff.update.push(
        resourceVersion === undefined ? slice : { ...slice, metadata: { ...slice.metadata, resourceVersion } },
      );
    }
  }
  for (const name of ours.keys()) if (!wanted.has(name)) diff.delete.push(name);
  return diff;
}

function sameSlice(desired: DesiredEndpointSlice, current: StoredEndpointSlice): boolean {
  const labels = current.metadata?.labels ?? {};
  const owners = new Set((current.metadata?.ownerReferences ?? []).map((o) => o.uid));
  return (
    Object.entries(desired.metadata.labels).every(([k, v]) => labels[k] === v) &&
    (desired.metadata.ownerReferences ?? []).every((o) => owners.has(o.uid)) &&
    portListKey(desired.ports) === portListKey(current.ports) &&
    endpointListKey(desired.endpoints) === endpointListKey(current.endpoints)
  );
}

/** Order-insensitive identity of endpoints, with the API's meaning of unset conditions (ready and serving true, terminating false). */
function endpointListKey(endpoints: StoredEndpointSlice['endpoints']): string {
  return JSON.stringify(
    (endpoints ?? [])
      .map((e) => {
        const ready = e.conditions?.ready ?? true;
        return JSON.stringify([
          [...(e.addresses ?? [])].sort(),
          ready,
          e.conditions?.serving ?? ready,
          e.conditions?.terminating ?? false,
          e.hostname ?? '',
          e.nodeName ?? '',
          e.zone ?? '',
          (e.hints?.forZones ?? []).map((z) => z.name).sort(),
        ]);
      })
      .sort(),
  );
}

function getOrAdd<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
