// Change detection at low cost (M6, docs/design.md "Change detection and Cloud Map cost"). The watcher keeps every
// Cloud Map service of the ClusterSet's namespaces in a cache (service-cache.ts) and calls back with
// { namespace, service } whenever a service's instances (of this ClusterSet, all clusters) change, appear or disappear.
// This file composes its parts and runs their loop; each part says what it does:
// - marker-polling.ts: every poll (default 0.75 s), the ClusterSet's change marker; service-reads.ts reads what it named.
// - first-read.ts, with predecessor-writes.ts and warm-start.ts: the first read of each start.
// - paced-resync.ts: the safety-net resync; non-announcing-writers.ts and operation-watch.ts: writers that never bump
//   the marker.
// - close-watch.ts: notices of a coming change; liveness.ts: heartbeats.
import type { CloudMapAdapter } from '../cloudmap/adapter.ts';
import type { CloudMapInstance } from '../core/types.ts';
import { sleep } from '../runtime/backoff.ts';
import { ChangeMarkerWriter } from './change-marker-writer.ts';
import { CloseWatch } from './close-watch.ts';
import { FirstRead } from './first-read.ts';
import { Liveness, type HeartbeatView } from './liveness.ts';
import { MarkerPolling, type Reachability } from './marker-polling.ts';
import { NonAnnouncingWriters } from './non-announcing-writers.ts';
import { OperationWatch } from './operation-watch.ts';
import { PacedResync } from './paced-resync.ts';
import { PredecessorWrites } from './predecessor-writes.ts';
import { ServiceCache, type ServiceKey } from './service-cache.ts';
import { ServiceReads } from './service-reads.ts';
import { WarmStart } from './warm-start.ts';
import {
  noStats,
  withDefaults,
  type CloudMapWatcherOptions,
  type WatchContext,
  type WatcherStats,
} from './watch-options.ts';

export type WatchOptions = Omit<
  CloudMapWatcherOptions,
  'registry' | 'instances' | 'operations' | 'identity' | 'clock' | 'logger'
>;

/** A change watcher over the ClusterSet's namespaces of `adapter`'s Cloud Map (not started). */
export function watchCloudMap(adapter: CloudMapAdapter, options: WatchOptions): CloudMapWatcher {
  return new CloudMapWatcher({
    ...options,
    registry: adapter.registry,
    instances: adapter.instances,
    operations: adapter.operations,
    identity: adapter.identity,
    clock: adapter.clock,
    ...(adapter.logger ? { logger: adapter.logger } : {}),
  });
}

export class CloudMapWatcher {
  readonly #ctx: WatchContext;
  readonly #cache: ServiceCache;
  readonly #reads: ServiceReads;
  readonly #markers: MarkerPolling;
  readonly #closeWatch: CloseWatch;
  readonly #liveness: Liveness;
  readonly #warmStart: WarmStart;
  readonly #resync: PacedResync;
  readonly #nonAnnouncing: NonAnnouncingWriters;
  readonly #predecessor: PredecessorWrites;
  readonly #operationWatch: OperationWatch;
  readonly #first: FirstRead;
  readonly #writer: ChangeMarkerWriter;
  #abort = new AbortController();
  #loop: Promise<void> | undefined;
  #firstSync: Promise<void> | undefined;
  /** When the loop last finished a step or a read of a service, failed ones included (liveness). */
  #progressAt: number;

  constructor(options: CloudMapWatcherOptions) {
    const opts = withDefaults(options);
    const log = opts.logger;
    this.#ctx = {
      opts,
      log,
      counts: noStats(),
      signal: () => this.#abort.signal,
      progressed: () => (this.#progressAt = opts.clock.now()),
      guard: async (what, step) => {
        try {
          await step();
          return undefined;
        } catch (err) {
          log?.warn({ err: String(err) }, `could not ${what}; retrying at the next poll`);
          return err ?? new Error(`could not ${what}`);
        } finally {
          this.#progressAt = opts.clock.now();
        }
      },
    };
    this.#progressAt = opts.clock.now();
    const markStale = (namespace: string) => this.#warmStart.markStale(namespace);
    const listed = () => this.#first.listed();
    this.#cache = new ServiceCache({ onChange: opts.onChange, onNamespaceChanged: markStale, logger: log });
    this.#reads = new ServiceReads(this.#ctx, this.#cache);
    this.#closeWatch = new CloseWatch(this.#ctx, listed);
    this.#liveness = new Liveness(this.#ctx, listed);
    this.#markers = new MarkerPolling(this.#ctx, {
      reads: this.#reads,
      closeWatch: this.#closeWatch,
      liveness: this.#liveness,
      onNamespaceChanged: markStale,
    });
    this.#warmStart = new WarmStart(this.#ctx, this.#cache, this.#reads, this.#markers);
    this.#resync = new PacedResync(this.#ctx, this.#cache, this.#reads);
    this.#nonAnnouncing = new NonAnnouncingWriters(this.#ctx, this.#cache, this.#reads);
    this.#operationWatch = new OperationWatch(this.#ctx, this.#cache, this.#reads);
    this.#writer = new ChangeMarkerWriter({
      registry: opts.registry,
      instances: opts.instances,
      operations: opts.operations,
      identity: opts.identity,
      clock: opts.clock,
      lastSeen: (id) => this.#markers.marker(id),
      ownMarkers: () => [...this.#markers.markers()].filter((m) => m.clusterId === opts.identity.clusterId),
      markerEvictionMinAgeMs: opts.markerEvictionMinAgeMs,
      minBumpIntervalMs: opts.minBumpIntervalMs,
      ...(log ? { logger: log } : {}),
    });
    this.#predecessor = new PredecessorWrites(this.#ctx, this.#cache, this.#markers, this.#writer);
    this.#first = new FirstRead(this.#ctx, {
      cache: this.#cache,
      reads: this.#reads,
      warmStart: this.#warmStart,
      predecessor: this.#predecessor,
      resync: this.#resync,
      operationWatch: this.#operationWatch,
    });
  }

  /** Starts polling; resolves once the first full read of Cloud Map completed (retried until it does). */
  start(): Promise<void> {
    if (!this.#firstSync) {
      this.#abort = new AbortController();
      this.#writer.resume();
      this.#resync.restart();
      this.#warmStart.restart();
      this.#operationWatch.restart();
      this.#progressAt = this.#ctx.opts.clock.now();
      this.#firstSync = this.#first.restart(); // a restart reads everything again before it resolves
      this.#loop = this.#run();
    }
    return this.#firstSync;
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    this.#first.stop();
    this.#writer.stop();
    await this.#loop;
    await this.#liveness.stopped();
    await this.#warmStart.stopped();
    this.#loop = undefined;
    this.#firstSync = undefined;
  }

  /**
   * Whether the loop runs, and when it last finished a step or a read of one service (failed ones too: during an
   * outage every call still ends at its deadline). A running loop whose progressAt grows old is stuck.
   */
  get progress(): { busy: boolean; progressAt: number } {
    return { busy: this.#loop !== undefined && !this.#first.waitingForCaller, progressAt: this.#progressAt };
  }

  /** True once the first full read of Cloud Map completed. */
  get synced(): boolean {
    return this.#first.synced;
  }

  /** The instances of `namespace/service` in this ClusterSet, all clusters, as last read (empty when none). */
  snapshot(namespace: string, service: string): readonly CloudMapInstance[] {
    return this.#cache.snapshot(namespace, service);
  }

  /**
   * When (watcher clock) the last read of the service that completed began, whether it found the service or not:
   * the snapshot shows every write that had settled by then.
   */
  readAt(namespace: string, service: string): number | undefined {
    return this.#cache.readAt(namespace, service);
  }

  /**
   * Whether a writer that does not bump the change marker has instances anywhere in this Cloud Map, as last read (the
   * AWS controller v0.3.1 during a migration). Such a controller reads every namespace of its cluster through a 10 s
   * cache of their services, and fails a namespace's whole import while a cached service is gone.
   */
  nonAnnouncingWriterSeen(): boolean {
    return this.#nonAnnouncing.namespaces().size > 0;
  }

  /** The watcher's clock. */
  now(): number {
    return this.#ctx.opts.clock.now();
  }

  /** The heartbeats of the ClusterSet's clusters as last read (this cluster's included). */
  heartbeats(): HeartbeatView {
    return this.#liveness.heartbeats();
  }

  /** Whether this Cloud Map answered the last poll of the change marker. */
  get reachability(): Reachability {
    return this.#markers.reachability;
  }

  get stats(): Readonly<WatcherStats> {
    return { ...this.#ctx.counts };
  }

  /** Every service that has instances in this ClusterSet. */
  services(): ServiceKey[] {
    return this.#cache.services();
  }

  /**
   * For the writer side: this cluster changed `services` (any when omitted) in `namespace`; those writes have been
   * submitted. Resolves once the ClusterSet change marker says so.
   */
  markChanged(namespace: string, services?: readonly string[]): Promise<void> {
    if (this.#ctx.opts.readOnly)
      return Promise.reject(
        new Error(`the change marker of namespace ${namespace} is only written in this cluster's own Region`),
      );
    return this.#writer.markChanged(namespace, services);
  }

  /** Tells the peers a bump of this cluster's marker is coming after a wait Cloud Map imposes (close-watch.ts, M7). */
  announceComing(): void {
    this.#closeWatch.announce();
  }

  async #run(): Promise<void> {
    const { opts, guard } = this.#ctx;
    const signal = this.#abort.signal;
    await this.#markers.pollGuarded('read the change marker', false);
    // Only in this cluster's own Region: a Region read only is never written to (its readers read every Region).
    if (!opts.readOnly) {
      this.#liveness.start(signal);
      await guard('look for writes a previous process left pending or unannounced', () => this.#predecessor.settle());
    }
    // Polls start every interval, however long a tick took: the marker's delay to a reader is at most one interval
    // (export-to-import latency is the writers' operation plus that delay).
    while (!signal.aborted) {
      const began = opts.clock.now();
      await this.#tick();
      await this.#closeWatch.watchClosely(
        began + opts.pollIntervalMs,
        signal,
        () => this.#first.synced,
        async () => {
          await this.#markers.pollGuarded('poll the change marker', true);
          await guard('re-read changed services', () => this.#reads.processDirty());
        },
      );
      await sleep(Math.max(0, opts.pollIntervalMs - (opts.clock.now() - began)), signal);
    }
  }

  async #tick(): Promise<void> {
    const { guard } = this.#ctx;
    await this.#markers.pollGuarded('poll the change marker', true);
    if (this.#first.due) await guard('read Cloud Map', () => this.#first.read());
    else {
      await guard('list the registrations no marker announced', () => this.#operationWatch.step());
      await guard('re-read changed services', () => this.#reads.processDirty());
    }
    await guard('recheck changed services', () => this.#reads.processRechecks());
    if (this.#first.synced) await guard('resync with Cloud Map', () => this.#resync.step());
    if (this.#first.synced)
      await guard('check the services of writers that do not bump the marker', () => this.#nonAnnouncing.step());
    this.#warmStart.step(this.#first.synced);
  }
}
