// The writer side of the ClusterSet change marker: once this cluster's writes in a namespace are submitted, bump this
// cluster's marker instance for that namespace. Bumps of one namespace run one at a time and at most one per
// interval; changes reported meanwhile are folded into the next bump, so a burst of writes costs a few bumps, not one
// each. A change after a quiet period is bumped at once. While changes keep coming (an initial sync of thousands of
// services), the interval doubles after each bump up to maxBumpIntervalMs: marker bumps are RegisterInstance calls and
// would otherwise take a large part of that quota from the instances themselves (M6). A bump that fails is tried
// again (backing off to FAILED_BUMP_RETRY_MAX_MS) until one lands or the writer stops: a change nobody announces is
// seen by peers only at their paced resync, minutes later.
// The marker service holds one instance per cluster and namespace it ever wrote in, so it meets Cloud Map's instance
// quotas (M8) before any service of a ClusterSet's own: when a new marker is refused for one, this cluster's marker
// bumped longest ago is deregistered to make room. Readers take a vanished marker as "re-read that namespace", so the
// cost is one listing of it per peer, and nothing is missed.
import type { CloudMapInstance } from '../core/types.ts';
import type { Logger } from '../observability/log.ts';
import type { Clock } from '../runtime/clock.ts';
import {
  appendBump,
  EMPTY_HISTORY,
  MARKER_SERVICE,
  markerInstance,
  markerInstanceId,
  markerNamespaceName,
  nextRevision,
  type BumpHistory,
  type MarkerEntry,
} from './change-marker.ts';
import { CloudMapCallError, isNotFound } from '../cloudmap/errors.ts';
import type { CloudMapInstances } from '../cloudmap/instances.ts';
import type { OperationWaiter } from '../cloudmap/operations.ts';
import type { Identity } from '../cloudmap/ownership.ts';
import type { CloudMapRegistry } from '../cloudmap/registry.ts';

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

interface NamespaceState {
  /** Services changed since the last bump started; 'all' when a caller did not say which. */
  pending: Set<string> | 'all' | undefined;
  waiters: Waiter[];
  running: boolean;
  lastBumpStart: number;
  /** Least time from this bump's start to the next one's: the base after a quiet period, doubled while busy. */
  interval: number;
  /** What this process last wrote; undefined until its first bump (then the last read marker is used). */
  written: { revision: string; history: BumpHistory } | undefined;
}

export interface ChangeMarkerWriterOptions {
  registry: CloudMapRegistry;
  instances: CloudMapInstances;
  operations: OperationWaiter;
  identity: Identity;
  clock: Clock;
  /** The marker instance as last read from Cloud Map (by the watcher), used after a restart. */
  lastSeen: (markerId: string) => MarkerEntry | undefined;
  /** Least time between the starts of two bumps of one namespace after a quiet period (default 200 ms). */
  minBumpIntervalMs?: number;
  /** Longest it becomes while changes keep coming (default 5 s). */
  maxBumpIntervalMs?: number;
  /** This cluster's markers as last read (by the watcher): those that can make room at the quota. */
  ownMarkers?: () => readonly MarkerEntry[];
  /** Least time since its last bump before a marker may be deregistered to make room. */
  markerEvictionMinAgeMs: number;
  logger?: Logger;
}

/** Cloud Map's refusal for a resource quota (here: instances per service or per namespace of the marker's). */
const RESOURCE_LIMIT_EXCEEDED = 'ResourceLimitExceeded';

/** Longest wait between attempts to land a bump that keeps failing. */
const FAILED_BUMP_RETRY_MAX_MS = 30_000;
const FAILED_BUMP_RETRY_MIN_MS = 1000;

export class ChangeMarkerWriter {
  readonly #options: ChangeMarkerWriterOptions;
  readonly #namespaces = new Map<string, NamespaceState>();
  /** Markers deregistered to make room, until this writer bumps them again (the watcher may still list them). */
  readonly #evicted = new Set<string>();
  #stopped = false;

  constructor(options: ChangeMarkerWriterOptions) {
    this.#options = options;
  }

  /**
   * Records that this cluster changed `services` (any service when omitted) of `namespace` and resolves once a marker
   * bump covering the change is in Cloud Map. Call it once the writes themselves are submitted (their operations and
   * the bump's then run side by side; readers recheck for the case the bump shows first). A rejection means the
   * bump failed; the change stays pending and is bumped again, with backoff, until a bump lands or stop().
   */
  markChanged(namespace: string, services?: readonly string[]): Promise<void> {
    if (this.#stopped)
      return Promise.reject(new Error(`the change marker writer is stopped; namespace ${namespace} not bumped`));
    let state = this.#namespaces.get(namespace);
    if (!state)
      this.#namespaces.set(
        namespace,
        (state = {
          pending: undefined,
          waiters: [],
          running: false,
          lastBumpStart: Number.NEGATIVE_INFINITY,
          interval: 0,
          written: undefined,
        }),
      );
    state.pending = merge(state.pending, services);
    const done = new Promise<void>((resolve, reject) => state.waiters.push({ resolve, reject }));
    if (!state.running) void this.#run(namespace, state);
    return done;
  }

  async #run(namespace: string, state: NamespaceState): Promise<void> {
    state.running = true;
    const { clock, minBumpIntervalMs = 200, maxBumpIntervalMs = 5000 } = this.#options;
    state.interval = minBumpIntervalMs;
    while (!this.#stopped && (state.waiters.length > 0 || state.pending !== undefined)) {
      await clock.sleep(state.lastBumpStart + state.interval - clock.now());
      if (this.#stopped) break;
      state.lastBumpStart = clock.now();
      const waiters = state.waiters.splice(0);
      const pending = state.pending;
      state.pending = undefined;
      try {
        await this.#bump(namespace, state, pending);
        for (const w of waiters) w.resolve();
        if (state.waiters.length > 0) state.interval = Math.min(maxBumpIntervalMs, state.interval * 2);
      } catch (err) {
        state.pending = merge(state.pending, pending === 'all' || pending === undefined ? undefined : [...pending]);
        state.interval = Math.min(FAILED_BUMP_RETRY_MAX_MS, Math.max(FAILED_BUMP_RETRY_MIN_MS, state.interval * 2));
        this.#options.logger?.warn(
          { namespace, err: String(err), retryInMs: state.interval },
          'could not bump the ClusterSet change marker; trying again',
        );
        for (const w of waiters) w.reject(err);
      }
    }
    for (const w of state.waiters.splice(0))
      w.reject(new Error(`the change marker writer stopped before namespace ${namespace} was bumped`));
    state.running = false;
  }

  /** Stops bumping: pending changes are left to the peers' resync (a successor announces its writes at start). */
  stop(): void {
    this.#stopped = true;
  }

  /** Bumps again after stop() (a watcher started again). */
  resume(): void {
    this.#stopped = false;
  }

  async #bump(namespace: string, state: NamespaceState, pending: Set<string> | 'all' | undefined): Promise<void> {
    const { identity, clock } = this.#options;
    const seen =
      state.written === undefined ? this.#options.lastSeen(markerInstanceId(identity.clusterId, namespace)) : undefined;
    const previous = state.written?.revision ?? seen?.revision;
    const revision = nextRevision(previous, clock.now());
    const history = appendBump(
      state.written?.history ?? seen ?? EMPTY_HISTORY,
      previous,
      revision,
      pending === 'all' || pending === undefined ? undefined : [...pending],
    );
    const instance = markerInstance(identity.clusterId, identity.clustersetId, namespace, revision, history);
    try {
      await registerInMarkerService(this.#options, instance);
    } catch (err) {
      if (
        !(err instanceof CloudMapCallError && err.code === RESOURCE_LIMIT_EXCEEDED) ||
        !(await this.#makeRoom(namespace))
      )
        throw err;
      await registerInMarkerService(this.#options, instance);
    }
    this.#evicted.delete(instance.id);
    state.written = { revision, history };
  }

  /**
   * Deregisters this cluster's marker bumped longest ago (not `namespace`'s, and none bumped within the minimum age, so
   * that two busy namespaces do not take turns); false when there is none to take.
   */
  async #makeRoom(namespace: string): Promise<boolean> {
    const { identity, clock, registry, instances, operations, ownMarkers, markerEvictionMinAgeMs } = this.#options;
    const oldest = clock.now() - markerEvictionMinAgeMs;
    const bumpedAt = (m: MarkerEntry) =>
      Math.max(Number(m.revision) || 0, this.#namespaces.get(m.namespace)?.lastBumpStart ?? 0);
    const candidate = (ownMarkers?.() ?? [])
      .filter(
        (m) =>
          m.clusterId === identity.clusterId &&
          m.namespace !== namespace &&
          !this.#evicted.has(m.id) &&
          bumpedAt(m) < oldest,
      )
      .sort((a, b) => bumpedAt(a) - bumpedAt(b))[0];
    if (candidate === undefined) return false;
    const serviceId = await registry.ensureService(
      await registry.ensureNamespace(markerNamespaceName(identity.clustersetId)),
      MARKER_SERVICE,
    );
    await operations.wait(await instances.deregisterInstance(serviceId, candidate.id));
    this.#evicted.add(candidate.id);
    this.#options.logger?.info(
      { namespace, evicted: candidate.namespace, lastBumpAgeS: Math.round((clock.now() - bumpedAt(candidate)) / 1000) },
      "the change marker service is at a Cloud Map instance quota: this cluster's marker bumped longest ago was deregistered to make room (its peers re-read that namespace once)",
    );
    return true;
  }
}

/**
 * Registers one of this cluster's instances of the marker service (a marker, or a signal to the peers: the heartbeat,
 * a notice of a coming change); the marker namespace and service are created when missing. A marker's operation is
 * waited for. A signal's is not (its readers see it when it lands, and polling its operation would cost more calls
 * than the signal), and a signal goes ahead of this cluster's registrations waiting for the rate limit: a heartbeat
 * queued behind a large sync's registrations for longer than the peers' --dead-cluster-ttl would have them withdraw
 * this cluster's endpoints.
 */
export async function registerInMarkerService(
  deps: Pick<ChangeMarkerWriterOptions, 'registry' | 'instances' | 'operations' | 'identity'>,
  instance: CloudMapInstance,
  signal = false,
): Promise<void> {
  const { registry, instances, operations, identity } = deps;
  for (let attempt = 0; ; attempt++) {
    const namespaceId = await registry.ensureNamespace(markerNamespaceName(identity.clustersetId));
    const serviceId = await registry.ensureService(namespaceId, MARKER_SERVICE);
    try {
      const operation = await instances.registerInstance(serviceId, instance, signal);
      if (!signal) await operations.wait([operation]);
      return;
    } catch (err) {
      // The marker service was deleted under us: its cached id is dropped, so the next attempt recreates it.
      if (attempt > 0 || !isNotFound(err, 'ServiceNotFound')) throw err;
    }
  }
}

function merge(pending: Set<string> | 'all' | undefined, services: readonly string[] | undefined): Set<string> | 'all' {
  if (pending === 'all' || services === undefined) return 'all';
  return new Set([...(pending ?? []), ...services]);
}
