// The ClusterSet change marker (M6): a Cloud Map namespace per ClusterSet holding one service whose instances are
// one per (cluster, namespace). A cluster that changed anything in a namespace bumps its instance's REVISION, so the
// other clusters learn which namespaces (and often which services) to re-read from one DiscoverInstancesRevision
// poll instead of one DiscoverInstances per service. Pure naming, encoding and comparison live here.
import { createHash } from 'node:crypto';
import { MAX_INSTANCE_ID_LENGTH } from '../core/instance-id.ts';
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID } from '../core/names.ts';
import type { CloudMapInstance } from '../core/types.ts';

/**
 * The dot makes the name impossible as a Kubernetes namespace, so no cluster (ours or the AWS controller v0.3.1,
 * which maps Cloud Map namespaces to Kubernetes namespaces by name) ever imports from it.
 */
export const MARKER_NAMESPACE_PREFIX = 'mcs-cloudmap.';
export const MARKER_SERVICE = 'changes';

export const ATTR_NAMESPACE = 'NAMESPACE';
/** Differs from every earlier value of the same marker instance (readers compare for inequality only). */
export const ATTR_REVISION = 'REVISION';
/** The writer's recent bumps, oldest first: `<revision>:<service>,<service>;<revision>:...`, ending at REVISION. */
export const ATTR_CHANGES = 'CHANGES';
/** The revision just before the first bump listed in CHANGES. */
export const ATTR_CHANGES_BASE = 'CHANGES_BASE';

/** Cloud Map limits: instance ids of [0-9a-zA-Z_/:.@-] (at most MAX_INSTANCE_ID_LENGTH); attribute values 1024 characters. */
const INSTANCE_ID_PATTERN = /^[0-9a-zA-Z_/:.@-]+$/;
const MAX_ATTRIBUTE_VALUE = 1024;
/** HTTP namespace names: 1..1024 printable ASCII characters without spaces. */
const NAMESPACE_NAME_PATTERN = /^[!-~]{1,1024}$/;
/** Service names are DNS labels; anything else could not be encoded in CHANGES. */
const ENCODABLE_SERVICE = /^[^:;,\s]+$/;

function digest(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** `mcs-cloudmap.<clustersetId>`, or a hash of the id when it cannot appear in a namespace name. */
export function markerNamespaceName(clustersetId: string): string {
  const readable = MARKER_NAMESPACE_PREFIX + clustersetId;
  return NAMESPACE_NAME_PATTERN.test(readable) ? readable : `${MARKER_NAMESPACE_PREFIX}h-${digest(clustersetId, 32)}`;
}

/**
 * `<clusterId>/<namespace>` when that is a valid instance id, else `m-<hash>`. Cluster ids and namespaces are DNS
 * labels, which hold no '/', so the readable form cannot collide with another pair nor with the hashed form.
 */
export function markerInstanceId(clusterId: string, namespace: string): string {
  const readable = `${clusterId}/${namespace}`;
  const unambiguous = !clusterId.includes('/') && !namespace.includes('/');
  if (unambiguous && readable.length <= MAX_INSTANCE_ID_LENGTH && INSTANCE_ID_PATTERN.test(readable)) return readable;
  return `m-${digest(`${clusterId}\n${namespace}`, 40)}`;
}

/**
 * The id of a cluster's one instance of `kind` in the marker service (its heartbeat, its notice of a coming change):
 * `<kind>@<clusterId>`, or `<kind>@h-<hash>` when the cluster id does not fit. '@' never appears in a DNS label, so it
 * cannot collide with a marker's `<clusterId>/<namespace>` or `m-<hash>`, nor with another kind.
 */
export function clusterInstanceId(kind: string, clusterId: string): string {
  const readable = `${kind}@${clusterId}`;
  if (readable.length <= MAX_INSTANCE_ID_LENGTH && /^[0-9a-zA-Z_.-]+$/.test(clusterId)) return readable;
  return `${kind}@h-${digest(clusterId, 40)}`;
}

/** A cluster's one instance of `kind` in the marker service, carrying one time (Unix ms) in `attribute`. */
export function clusterTimeInstance(
  kind: string,
  attribute: string,
  clusterId: string,
  clustersetId: string,
  time: number,
): CloudMapInstance {
  return {
    id: clusterInstanceId(kind, clusterId),
    attributes: {
      [ATTR_CLUSTER_ID]: clusterId,
      [ATTR_CLUSTERSET_ID]: clustersetId,
      [attribute]: String(Math.floor(time)),
    },
  };
}

/** The cluster and time of such an instance, or undefined when it is not its cluster's `kind` or the time is malformed. */
export function parseClusterTime(
  kind: string,
  attribute: string,
  instance: CloudMapInstance,
): { clusterId: string; time: number } | undefined {
  const clusterId = instance.attributes[ATTR_CLUSTER_ID];
  const raw = instance.attributes[attribute];
  const time = raw === undefined || !/^\d{1,16}$/.test(raw) ? Number.NaN : Number(raw);
  if (clusterId === undefined || !Number.isSafeInteger(time) || instance.id !== clusterInstanceId(kind, clusterId))
    return undefined;
  return { clusterId, time };
}

/** One bump: its revision and the services it changed. */
export interface Bump {
  readonly revision: string;
  readonly services: readonly string[];
}

/** A writer's recent bumps of one marker, oldest first, and the revision before the first of them. */
export interface BumpHistory {
  readonly base: string | undefined;
  readonly bumps: readonly Bump[];
}

export const EMPTY_HISTORY: BumpHistory = { base: undefined, bumps: [] };

/**
 * The base of a history that starts at a marker's first bump: revisions are times in ms, so none is '0'. A reader that
 * meets a marker it never saw whose history starts here learns every service its writer changed in the namespace, so a
 * cluster's first export in a new namespace costs peers one read of that service, not a listing of the namespace
 * (ListNamespaces and ListServices, the scarcest quotas; M6, M7).
 */
export const HISTORY_ORIGIN = '0';

/** One cluster's marker for one namespace, as read from Cloud Map. */
export interface MarkerEntry extends BumpHistory {
  readonly id: string;
  readonly clusterId: string;
  readonly namespace: string;
  readonly revision: string;
}

/** The next REVISION for a writer: above its last one and, after a restart, above anything it wrote before. */
export function nextRevision(last: string | undefined, now: number): string {
  const lastNumber = last === undefined ? 0 : Number(last);
  return String(Math.max(Math.floor(now), (Number.isFinite(lastNumber) ? lastNumber : 0) + 1));
}

function encodeBumps(bumps: readonly Bump[]): string {
  return bumps.map((b) => `${b.revision}:${b.services.join(',')}`).join(';');
}

function decodeBumps(text: string): Bump[] | undefined {
  const bumps: Bump[] = [];
  for (const part of text.split(';')) {
    const colon = part.indexOf(':');
    if (colon <= 0) return undefined;
    const services = part.slice(colon + 1);
    bumps.push({ revision: part.slice(0, colon), services: services === '' ? [] : services.split(',') });
  }
  return bumps;
}

/**
 * The history after a bump from `previous` (undefined: the marker's first bump) to `revision`. `services` undefined
 * means "any service": the history restarts after this bump, so readers that missed it re-read the whole namespace.
 * The oldest bumps are dropped until the encoding fits one attribute value.
 */
export function appendBump(
  history: BumpHistory,
  previous: string | undefined,
  revision: string,
  services: readonly string[] | undefined,
): BumpHistory {
  if (services === undefined || !services.every((s) => ENCODABLE_SERVICE.test(s))) {
    return { base: revision, bumps: [] };
  }
  const from = previous ?? HISTORY_ORIGIN;
  const last = history.bumps.at(-1)?.revision ?? history.base;
  const kept = last === from ? [...history.bumps] : [];
  let base = last === from ? history.base : from;
  kept.push({ revision, services: [...new Set(services)].sort() });
  while (kept.length > 0 && encodeBumps(kept).length > MAX_ATTRIBUTE_VALUE) base = kept.shift()!.revision;
  return { base, bumps: kept };
}

export function markerInstance(
  clusterId: string,
  clustersetId: string,
  namespace: string,
  revision: string,
  history: BumpHistory,
): CloudMapInstance {
  const attributes: Record<string, string> = {
    [ATTR_CLUSTER_ID]: clusterId,
    [ATTR_CLUSTERSET_ID]: clustersetId,
    [ATTR_NAMESPACE]: namespace,
    [ATTR_REVISION]: revision,
  };
  if (history.base !== undefined && history.bumps.length > 0) {
    attributes[ATTR_CHANGES_BASE] = history.base;
    attributes[ATTR_CHANGES] = encodeBumps(history.bumps);
  }
  return { id: markerInstanceId(clusterId, namespace), attributes };
}

/** The marker an instance of the marker service encodes, or undefined when it is not one. */
export function parseMarker(instance: CloudMapInstance): MarkerEntry | undefined {
  const a = instance.attributes;
  const clusterId = a[ATTR_CLUSTER_ID];
  const namespace = a[ATTR_NAMESPACE];
  const revision = a[ATTR_REVISION];
  if (clusterId === undefined || namespace === undefined || revision === undefined) return undefined;
  const base = a[ATTR_CHANGES_BASE];
  const bumps = a[ATTR_CHANGES] === undefined ? undefined : decodeBumps(a[ATTR_CHANGES]);
  const history =
    base !== undefined && bumps !== undefined && bumps.at(-1)?.revision === revision
      ? { base, bumps }
      : { base: undefined, bumps: [] };
  return { id: instance.id, clusterId, namespace, revision, ...history };
}

/** The services changed since a reader saw `seen`, or undefined when the history does not reach back that far. */
export function servicesSince(entry: MarkerEntry, seen: string): string[] | undefined {
  if (seen === entry.revision) return [];
  const start = seen === entry.base ? 0 : entry.bumps.findIndex((b) => b.revision === seen) + 1;
  if (start === 0 && seen !== entry.base) return undefined;
  return [...new Set(entry.bumps.slice(start).flatMap((b) => b.services))];
}

/** Per namespace: the services to re-read, or 'all' to re-read every service of the namespace. */
export type DirtyNamespaces = Map<string, Set<string> | 'all'>;

/** Adds `services` (or 'all') for `namespace` to `dirty`; 'all' absorbs any set. */
export function markDirty(dirty: DirtyNamespaces, namespace: string, services: Iterable<string> | 'all'): void {
  const current = dirty.get(namespace);
  if (current === 'all') return;
  if (services === 'all') {
    dirty.set(namespace, 'all');
    return;
  }
  const set = current ?? new Set<string>();
  for (const s of services) set.add(s);
  dirty.set(namespace, set);
}

/**
 * What moved between two reads of the marker service. A marker whose history reaches back to the revision seen
 * before (for a new marker: to its first bump) narrows the re-read to the services it names; anything else (a vanished
 * marker, a history that was cut short, a restarted writer) marks the whole namespace.
 */
export function changedNamespaces(
  before: ReadonlyMap<string, MarkerEntry>,
  now: readonly MarkerEntry[],
): DirtyNamespaces {
  const dirty: DirtyNamespaces = new Map();
  const present = new Set<string>();
  for (const entry of now) {
    present.add(entry.id);
    const prev = before.get(entry.id);
    if (prev !== undefined && prev.revision === entry.revision && prev.namespace === entry.namespace) continue;
    // A marker new to this reader names its services only when its history reaches back to its first bump.
    const services =
      prev === undefined
        ? servicesSince(entry, HISTORY_ORIGIN)
        : prev.namespace === entry.namespace
          ? servicesSince(entry, prev.revision)
          : undefined;
    markDirty(dirty, entry.namespace, services ?? 'all');
  }
  for (const [id, prev] of before) if (!present.has(id)) markDirty(dirty, prev.namespace, 'all');
  return dirty;
}

/**
 * Since when (Unix ms) writes of `clusterId` may be unknown to its peers: its last marker bump (REVISION is the bump's
 * time in ms), but no further back than `maxAgeMs` before `now` (older writes are the safety-net resync's).
 */
export function unannouncedSince(
  markers: Iterable<MarkerEntry>,
  clusterId: string,
  now: number,
  maxAgeMs: number,
): number {
  let last = Number.NEGATIVE_INFINITY;
  for (const m of markers) {
    const revision = Number(m.revision);
    if (m.clusterId === clusterId && Number.isFinite(revision)) last = Math.max(last, revision);
  }
  return Math.max(last, now - maxAgeMs);
}
