// Warm-start checkpoints (M9, docs/design.md "Warm start"): one per Cloud Map namespace, what was read there and the
// namespace's change markers as of then (core/checkpoint.ts). At start, a checkpoint whose markers did not move since
// stands in for reading its services; afterwards each namespace's checkpoint is saved again once its cache or markers
// changed and everything its markers announced was read.
import {
  planWarmStart,
  type CheckpointMarker,
  type CheckpointService,
  type NamespaceCheckpoint,
  type WarmStartPlan,
} from '../core/checkpoint.ts';
import { changedNamespaces, type MarkerEntry } from './change-marker.ts';
import type { MarkerPolling } from './marker-polling.ts';
import { paceOf } from './paced-resync.ts';
import { resyncPeriodMs } from './resync-pace.ts';
import type { ServiceCache, ServiceKey } from './service-cache.ts';
import type { ServiceReads } from './service-reads.ts';
import type { WatchContext } from './watch-options.ts';

/**
 * Where the watcher keeps its checkpoints (M9): one per Cloud Map namespace, what it read there and the namespace's
 * change markers as of then (core/checkpoint.ts). load() returns only checkpoints of this cluster, ClusterSet and
 * Region that decode; a failed load costs a cold start, never a wrong one.
 */
export interface CheckpointStore {
  load(): Promise<NamespaceCheckpoint[]>;
  save(namespace: string, markers: readonly CheckpointMarker[], services: readonly CheckpointService[]): Promise<void>;
}

export class WarmStart {
  readonly #ctx: WatchContext;
  readonly #cache: ServiceCache;
  readonly #reads: ServiceReads;
  readonly #markers: MarkerPolling;
  /** The checkpoints found at start (loaded once per start); undefined until asked for. */
  #loaded: Promise<NamespaceCheckpoint[] | undefined> | undefined;
  /** Namespaces whose checkpoint no longer shows what the cache and the markers hold. */
  readonly #stale = new Set<string>();
  /** Namespaces that have a checkpoint (found at start or saved since). */
  readonly #checkpointed = new Set<string>();
  /** When each namespace's checkpoint was last saved (or its save failed). */
  readonly #savedAt = new Map<string, number>();
  #saving: Promise<void> | undefined;
  /** Namespaces whose services the last first read took from checkpoints. */
  #seeded = new Set<string>();

  constructor(ctx: WatchContext, cache: ServiceCache, reads: ServiceReads, markers: MarkerPolling) {
    this.#ctx = ctx;
    this.#cache = cache;
    this.#reads = reads;
    this.#markers = markers;
  }

  /** A new start: the checkpoints are loaded again, nothing taken from them yet. */
  restart(): void {
    this.#loaded = undefined;
    this.#seeded = new Set();
  }

  /** Namespaces whose services the last first read took from checkpoints. */
  get seededNamespaces(): ReadonlySet<string> {
    return this.#seeded;
  }

  /** What the namespace's checkpoint would hold changed. */
  markStale(namespace: string): void {
    this.#stale.add(namespace);
  }

  /** Resolves once a save in flight ended. */
  async stopped(): Promise<void> {
    await this.#saving;
  }

  /** The checkpoints, loaded once per start (undefined: none kept, or unreadable: the first read is then in full). */
  load(): Promise<NamespaceCheckpoint[] | undefined> {
    const store = this.#ctx.opts.checkpoints;
    if (store === undefined) return Promise.resolve(undefined);
    this.#loaded ??= store.load().catch((err: unknown) => {
      this.#ctx.log?.warn({ err: String(err) }, 'could not load the Cloud Map checkpoints; reading Cloud Map in full');
      return undefined;
    });
    return this.#loaded;
  }

  /**
   * With checkpoints (M9): loads them (once per start), compares their markers with the markers read at start, takes
   * the services of every trusted checkpoint into the cache and returns what is left to read. Undefined: no checkpoint
   * store, or the checkpoints could not be loaded (everything known is read, a cold start). `ownPending`: writes a
   * predecessor left pending, which its checkpoints may lack.
   */
  async plan(
    namespaces: ReadonlySet<string>,
    known: readonly ServiceKey[],
    ownPending: boolean,
  ): Promise<WarmStartPlan | undefined> {
    const { opts, counts, log } = this.#ctx;
    const checkpoints = await this.load();
    if (checkpoints === undefined) return undefined;
    for (const cp of checkpoints) this.#checkpointed.add(cp.namespace);
    // The markers as the checkpoints saw them, against the markers read at this start.
    const before = new Map<string, MarkerEntry>(
      checkpoints.flatMap((cp) =>
        cp.markers.map(
          (m) =>
            [
              m.id,
              {
                id: m.id,
                clusterId: m.clusterId,
                namespace: cp.namespace,
                revision: m.revision,
                base: undefined,
                bumps: [],
              },
            ] as const,
        ),
      ),
    );
    const plan = planWarmStart({
      checkpoints,
      namespaces,
      known,
      changed: changedNamespaces(before, [...this.#markers.markers()]),
      // Markers not read: nothing can be validated. Writes a predecessor left pending: its checkpoints may lack them.
      cold: !this.#markers.read || ownPending,
    });
    // The first poll found every marker new; what the checkpoints hold is not stale. What the reads below change is.
    this.#stale.clear();
    for (const k of plan.announced) this.#stale.add(k.namespace);
    const seeded: string[] = [];
    for (const [namespace, services] of plan.seed) {
      for (const s of services) {
        // Read since (a retried first read): newer than the checkpoint.
        if (this.#cache.seed(namespace, s.name, { revision: s.revision, instances: s.instances, revisionChecks: 0 }))
          seeded.push(`${namespace}/${s.name}`);
      }
      this.#seeded.add(namespace);
    }
    // Taken from a checkpoint, not read: the resync checks them at its steady pace, each within one period of this
    // start (spread over it, so a restart does not make every one of them due at once).
    const now = opts.clock.now();
    const period = resyncPeriodMs(seeded.length + plan.read.length, paceOf(opts));
    seeded.forEach((key, k) => {
      const slash = key.indexOf('/');
      this.#cache.readDone(
        key.slice(0, slash),
        key.slice(slash + 1),
        now - period + ((k + 1) / seeded.length) * period,
        false,
      );
    });
    if (seeded.length > 0) {
      counts.warmStarts++;
      counts.seededServices += seeded.length;
    }
    for (const [namespace, why] of plan.untrusted) {
      this.#stale.add(namespace);
      log?.info({ namespace, why }, 'Cloud Map checkpoint of the namespace not used; its services are read');
    }
    log?.info(
      {
        checkpoints: checkpoints.length,
        seeded: seeded.length,
        read: plan.read.length,
        announced: plan.announced.length,
        untrusted: plan.untrusted.size,
      },
      'Cloud Map checkpoints compared with the change markers',
    );
    return plan;
  }

  /**
   * Saves the checkpoint of every namespace whose cache or markers changed since its last one, once all that its
   * markers announced was read and checked again (nothing dirty, no recheck pending there): the markers saved then
   * vouch for the instances saved (M9). At most one save in flight, each namespace at most once an interval.
   */
  step(synced: boolean): void {
    const { opts, counts, log } = this.#ctx;
    const store = opts.checkpoints;
    if (store === undefined || !synced || !this.#markers.read || this.#saving !== undefined || this.#stale.size === 0)
      return;
    const now = opts.clock.now();
    const busy = this.#reads.busyNamespaces();
    const due = [...this.#stale].filter(
      (namespace) =>
        !busy.has(namespace) &&
        (this.#cache.hasNamespace(namespace) || this.#checkpointed.has(namespace)) &&
        now - (this.#savedAt.get(namespace) ?? Number.NEGATIVE_INFINITY) >= opts.checkpointIntervalMs,
    );
    if (due.length === 0) return;
    // Taken together now: markers and instances of one moment.
    const snapshots = due.map((namespace) => {
      this.#stale.delete(namespace);
      const markers = [...this.#markers.markers()]
        .filter((m) => m.namespace === namespace)
        .map((m) => ({ id: m.id, clusterId: m.clusterId, revision: m.revision }));
      const services = this.#cache
        .servicesIn(namespace)
        .map(([name, c]) => ({ name, revision: c.revision, instances: c.instances }));
      return { namespace, markers, services };
    });
    this.#saving = (async () => {
      for (const { namespace, markers, services } of snapshots) {
        if (this.#ctx.signal().aborted) {
          this.#stale.add(namespace);
          continue;
        }
        try {
          await store.save(namespace, markers, services);
          this.#checkpointed.add(namespace);
          counts.checkpointsSaved++;
        } catch (err) {
          this.#stale.add(namespace);
          log?.warn(
            { namespace, err: String(err) },
            'could not save the Cloud Map checkpoint of the namespace; retrying later',
          );
        } finally {
          this.#savedAt.set(namespace, opts.clock.now());
        }
      }
    })().finally(() => (this.#saving = undefined));
  }
}
