// Warm start (M9, docs/design.md "Warm start"): what a worker keeps in its cluster of what it read from Cloud Map, and
// what a starting worker may trust of it. Pure: the watcher reads the change markers and Cloud Map's namespaces, the
// worker's store reads and writes the objects; this decides.
//
// A checkpoint covers one Cloud Map namespace: every service of it the watcher had read, with its instances and
// DiscoverInstancesRevision, and the ClusterSet change markers of that namespace (one per cluster) as they were when
// every change they announced had been read and re-checked. So a starting worker that finds a marker unchanged knows
// no announcing writer changed the namespace since; a marker that moved names the services it changed since (its
// history), or, when its history does not reach back, makes the whole namespace untrusted. Anything not trusted is
// read as at a cold start, so a stale, corrupted or missing checkpoint costs reads, never an import.
import { namespacesWithNonAnnouncing } from './announcing-writers.ts';
import type { CloudMapInstance } from './types.ts';

export const CHECKPOINT_VERSION = 1;

export interface CheckpointMarker {
  /** The marker instance's id (`<clusterId>/<namespace>` or its hash). */
  readonly id: string;
  readonly clusterId: string;
  readonly revision: string;
}

export interface CheckpointService {
  readonly name: string;
  /** DiscoverInstancesRevision as last read; undefined when Cloud Map gave none. */
  readonly revision: number | undefined;
  readonly instances: readonly CloudMapInstance[];
}

export interface CheckpointOwner {
  readonly clusterId: string;
  readonly clustersetId: string;
  readonly region: string;
}

export interface NamespaceCheckpoint extends CheckpointOwner {
  readonly version: number;
  /** The Cloud Map namespace. */
  readonly namespace: string;
  /** When it was written (writer's clock, ms): for logs only, never compared. */
  readonly writtenAt: number;
  readonly markers: readonly CheckpointMarker[];
  readonly services: readonly CheckpointService[];
}

export function encodeCheckpoint(checkpoint: NamespaceCheckpoint): string {
  return JSON.stringify(checkpoint);
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function instanceOf(v: unknown): CloudMapInstance | undefined {
  if (!isRecord(v) || !isString(v.id) || v.id === '' || !isRecord(v.attributes)) return undefined;
  // Checked in place and kept, not copied: it is a fresh object of JSON.parse's, with own properties only, and a start
  // decodes tens of thousands of them (M9).
  const attributes = v.attributes;
  for (const key in attributes) if (!isString(attributes[key])) return undefined;
  return { id: v.id, attributes: attributes as Record<string, string> };
}

function serviceOf(v: unknown): CheckpointService | undefined {
  if (!isRecord(v) || !isString(v.name) || v.name === '' || !Array.isArray(v.instances)) return undefined;
  if (v.revision !== undefined && !(typeof v.revision === 'number' && Number.isFinite(v.revision))) return undefined;
  const instances: CloudMapInstance[] = [];
  for (const raw of v.instances) {
    const instance = instanceOf(raw);
    if (instance === undefined) return undefined;
    instances.push(instance);
  }
  return { name: v.name, revision: v.revision, instances };
}

function markerOf(v: unknown): CheckpointMarker | undefined {
  if (
    !isRecord(v) ||
    !isString(v.id) ||
    v.id === '' ||
    !isString(v.clusterId) ||
    !isString(v.revision) ||
    v.revision === ''
  )
    return undefined;
  return { id: v.id, clusterId: v.clusterId, revision: v.revision };
}

/**
 * A checkpoint read back: every field checked, and it must be this cluster's, of this ClusterSet and Region. Returns
 * why it cannot be used instead of throwing: a checkpoint that does not decode is ignored (its namespace read in full).
 */
export function decodeCheckpoint(text: string, owner: CheckpointOwner): NamespaceCheckpoint | { invalid: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { invalid: 'not JSON' };
  }
  if (!isRecord(raw)) return { invalid: 'not an object' };
  if (raw.version !== CHECKPOINT_VERSION)
    return { invalid: `version ${String(raw.version)}, expected ${CHECKPOINT_VERSION}` };
  for (const field of ['clusterId', 'clustersetId', 'region'] as const) {
    if (raw[field] !== owner[field])
      return {
        invalid: `written for ${field} ${JSON.stringify(raw[field])}, this worker has ${JSON.stringify(owner[field])}`,
      };
  }
  if (!isString(raw.namespace) || raw.namespace === '') return { invalid: 'no namespace' };
  if (typeof raw.writtenAt !== 'number' || !Number.isFinite(raw.writtenAt)) return { invalid: 'no time written' };
  if (!Array.isArray(raw.markers) || !Array.isArray(raw.services)) return { invalid: 'no markers or services' };
  const markers: CheckpointMarker[] = [];
  for (const m of raw.markers) {
    const marker = markerOf(m);
    if (marker === undefined) return { invalid: 'a malformed marker' };
    markers.push(marker);
  }
  const services: CheckpointService[] = [];
  const names = new Set<string>();
  for (const s of raw.services) {
    const service = serviceOf(s);
    if (service === undefined) return { invalid: 'a malformed service' };
    if (names.has(service.name)) return { invalid: `service ${service.name} twice` };
    names.add(service.name);
    services.push(service);
  }
  if (new Set(markers.map((m) => m.id)).size !== markers.length) return { invalid: 'a marker twice' };
  return {
    version: CHECKPOINT_VERSION,
    clusterId: owner.clusterId,
    clustersetId: owner.clustersetId,
    region: owner.region,
    namespace: raw.namespace,
    writtenAt: raw.writtenAt,
    markers,
    services,
  };
}

export interface WarmStartInput {
  /** Checkpoints decoded for this cluster (at most one per namespace is used: the one written last). */
  readonly checkpoints: readonly NamespaceCheckpoint[];
  /** The Cloud Map namespaces that exist now (listed at start). */
  readonly namespaces: ReadonlySet<string>;
  /**
   * What the change markers announced since the checkpoints' markers, per namespace: the services named, or 'all'
   * when a marker's history does not reach back (or a marker vanished).
   */
  readonly changed: ReadonlyMap<string, ReadonlySet<string> | 'all'>;
  /** Services this cluster exports or imports: each is read unless a trusted checkpoint holds it. */
  readonly known: readonly { readonly namespace: string; readonly service: string }[];
  /** Nothing may be trusted (the markers could not be read, or a predecessor left writes of its own pending). */
  readonly cold: boolean;
}

export interface WarmStartPlan {
  /** Services whose instances come from a checkpoint, per namespace. */
  readonly seed: ReadonlyMap<string, readonly CheckpointService[]>;
  /** Services to read now (DiscoverInstances), as at a cold start. */
  readonly read: readonly { readonly namespace: string; readonly service: string }[];
  /** Of `read`, those a marker named: read again a little later (Cloud Map's reads are eventually consistent). */
  readonly announced: readonly { readonly namespace: string; readonly service: string }[];
  /** Checkpoints not used, with why (a namespace deleted while the worker was down is one). */
  readonly untrusted: ReadonlyMap<string, string>;
}

/**
 * What a starting worker takes from its checkpoints and what it reads. A checkpoint is trusted when its namespace
 * still exists, no marker of it lost its history (`changed` is not 'all'), and no writer that never bumps a marker
 * (the AWS controller v0.3.1) had instances in it; then its services are taken as they are, except those a marker
 * named since, which are read. Every known service that no trusted checkpoint holds is read, and so is every service
 * of an untrusted checkpoint whose namespace still exists.
 */
export function planWarmStart(input: WarmStartInput): WarmStartPlan {
  const latest = new Map<string, NamespaceCheckpoint>();
  for (const cp of input.checkpoints) {
    const before = latest.get(cp.namespace);
    if (before === undefined || cp.writtenAt > before.writtenAt) latest.set(cp.namespace, cp);
  }
  const seed = new Map<string, CheckpointService[]>();
  const untrusted = new Map<string, string>();
  const read = new Map<string, { namespace: string; service: string }>();
  const announced: { namespace: string; service: string }[] = [];
  const toRead = (namespace: string, service: string) => {
    if (input.namespaces.has(namespace)) read.set(`${namespace}/${service}`, { namespace, service });
  };
  const nonAnnouncing = namespacesWithNonAnnouncing(
    [...latest.values()].flatMap((cp) => cp.services.map((s) => ({ namespace: cp.namespace, instances: s.instances }))),
  );
  for (const cp of latest.values()) {
    const changed = input.changed.get(cp.namespace);
    const why = input.cold
      ? 'cold start'
      : !input.namespaces.has(cp.namespace)
        ? 'namespace no longer in Cloud Map'
        : changed === 'all'
          ? 'a change marker of the namespace moved beyond its history'
          : nonAnnouncing.has(cp.namespace)
            ? 'a writer that does not bump the change marker has instances there'
            : undefined;
    if (why !== undefined) {
      untrusted.set(cp.namespace, why);
      for (const s of cp.services) toRead(cp.namespace, s.name);
      continue;
    }
    const named: ReadonlySet<string> = changed === undefined || changed === 'all' ? new Set() : changed;
    seed.set(
      cp.namespace,
      cp.services.filter((s) => !named.has(s.name)),
    );
    for (const service of named) {
      toRead(cp.namespace, service);
      announced.push({ namespace: cp.namespace, service });
    }
  }
  for (const k of input.known) {
    if (!seed.get(k.namespace)?.some((s) => s.name === k.service)) toRead(k.namespace, k.service);
  }
  return { seed, read: [...read.values()], announced, untrusted };
}
