// Change detection at low cost (M6, docs/design.md "Change detection and Cloud Map cost"). The watcher keeps every
// Cloud Map service of the ClusterSet's namespaces in a cache and calls back with { namespace, service } whenever a
// service's instances (of this ClusterSet, all clusters) change, appear or disappear.
//
// - Every poll (default 0.75 s): one DiscoverInstancesRevision of the ClusterSet's change marker. Only when it moved:
//   read the markers, re-read the services their histories name (DiscoverInstances), or, for a namespace whose
//   history does not reach back far enough, compare every service's DiscoverInstancesRevision and read those that
//   moved. Marker-driven reads are checked again 1 s and a few seconds later (Cloud Map reads are eventually
//   consistent, and writers announce a change when its operations are submitted, so a marker can show before the
//   instances it announces).
// - At start: the operations a previous process left pending are waited for, then everything is read once (one
//   paged ListNamespaces, one paged ListServices per namespace, every service's instances).
// - Then a safety-net resync, paced by resync-pace.ts: services are checked one by one, longest unread first
//   (revision first; every few checks of a service, its instances regardless of revision, since revisions can repeat),
//   every service within the resync interval of its previous read while that fits the call budget, slower beyond;
//   every namespace's services are listed again once an interval, so a service no marker named is read within one
//   interval of its creation. This catches writers that never bump the marker (the AWS controller v0.3.1), vanished
//   services and anything missed, at a cost that does not grow with the number of services.
// - Optionally, every service of a namespace where a writer that never bumps the marker has instances is checked (revision
//   first) and the namespace's services listed each short interval, so that writer's changes and new services show
//   within seconds, at a cost per such namespace and service only.
// - While another cluster's notice of a coming change (coming-change.ts) is new and not expired, the marker is also
//   polled every close-watch interval (0.1 s) between polls, and what it names read at once: the first export of a
//   namespace then reaches peers within a tenth of a second of Cloud Map creating it and the instances (M7).
// - Every heartbeat interval: this cluster's heartbeat (heartbeat.ts) is re-registered next to the markers; every poll
//   that reads the markers reads the heartbeats too, and keeps when each cluster's was last seen to change.
import { sleep } from '../runtime/backoff.ts';
import { namespacesWithNonAnnouncing } from '../core/announcing-writers.ts';
import { clusterTag } from '../core/instance-id.ts';
import { ATTR_CLUSTER_ID } from '../core/names.ts';
import { planWarmStart, type CheckpointMarker, type CheckpointService, type NamespaceCheckpoint, type WarmStartPlan } from '../core/checkpoint.ts';
import type { CloudMapInstance } from '../core/types.ts';
import type { Logger } from '../observability/log.ts';
import { observeHeartbeats, type HeartbeatSighting } from '../core/cluster-liveness.ts';
import { ChangeMarkerWriter, registerInMarkerService } from './change-marker-writer.ts';
import {
  changedNamespaces, markDirty, MARKER_SERVICE, markerNamespaceName, parseMarker, unannouncedSince, type DirtyNamespaces, type MarkerEntry,
} from './change-marker.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import { forEachLimited } from '../runtime/for-each-limited.ts';
import { CallCancelledError, LeaseLostError } from './errors.ts';
import { closeWatchUntil, comingInstance, parseComing } from './coming-change.ts';
import { heartbeatInstance, parseHeartbeat } from './heartbeat.ts';
import { sameInstances } from './instance-set.ts';
import type { CloudMapInstances } from './instances.ts';
import type { OperationWaiter } from './operations.ts';
import type { Identity } from './ownership.ts';
import type { CloudMapRegistry } from './registry.ts';
import { dueChecks, listingDue, resyncPeriodMs } from './resync-pace.ts';

export interface ServiceKey {
  readonly namespace: string;
  readonly service: string;
}

/**
 * Where the watcher keeps its checkpoints (M9): one per Cloud Map namespace, what it read there and the namespace's
 * change markers as of then (core/checkpoint.ts). load() returns only checkpoints of this cluster, ClusterSet and
 * Region that decode; a failed load costs a cold start, never a wrong one.
 */
export interface CheckpointStore {
  load(): Promise<NamespaceCheckpoint[]>;
  save(namespace: string, markers: readonly CheckpointMarker[], services: readonly CheckpointService[]): Promise<void>;
}

export interface CloudMapWatcherOptions {
  registry: CloudMapRegistry;
  instances: CloudMapInstances;
  operations: OperationWaiter;
  identity: Identity;
  /** Called (synchronously, never concurrently) when a service's instances changed; read them with snapshot(). */
  onChange: (change: ServiceKey) => void;
  pollIntervalMs?: number;
  /** Longest time from a service's read (or creation) to its next read by the safety-net resync, within the budget. */
  fullResyncIntervalMs?: number;
  /**
   * How often every service of a namespace where a writer that does not bump the marker has instances (v0.3.1) is
   * checked, revision first; 0: never (left to the resync).
   */
  nonAnnouncingPollIntervalMs?: number;
  /** Most calls per minute the safety-net resync spends (its pass takes longer instead). */
  resyncBudgetPerMinute?: number;
  /** Every n-th check of a service (its last read of instances included) reads its instances regardless of revision. */
  deepResyncEvery?: number;
  /** Longest wait at start for operations a previous process left pending. */
  settleTimeoutMs?: number;
  /**
   * Services the caller knows of (its exports and imports). When given, the first read reads these directly and the
   * listing of every service (ListServices is the scarcest quota: 2/s per account) runs in the background after
   * start; services it finds that were not read yet are read at once. Without it, the first read lists every
   * namespace's services before it completes. A promise lets the first read begin before the caller knows them all:
   * the namespaces, the markers and the checkpoints are read meanwhile (M9).
   */
  knownServices?: () => readonly ServiceKey[] | Promise<readonly ServiceKey[]>;
  /** Marker-driven reads are repeated (revision first) this long after each, for Cloud Map's eventual consistency. */
  rechecksAfterMs?: readonly number[];
  /** Services read in parallel. */
  concurrency?: number;
  /** Least time between two bumps of this cluster's marker for one namespace (markChanged). */
  minBumpIntervalMs?: number;
  /** Least time since its last bump before one of this cluster's markers may make room at a quota (default 60 s). */
  markerEvictionMinAgeMs?: number;
  /** How often this cluster's heartbeat is written; 0: never. */
  heartbeatIntervalMs?: number;
  /** How far behind a writer's clock may be when its heartbeat is seen for the first time (cluster-liveness.ts). */
  heartbeatSkewAllowanceMs?: number;
  /** How often the marker is polled while a peer's notice of a coming change stands; 0: never closer than pollIntervalMs. */
  closeWatchIntervalMs?: number;
  /** Longest close watch after a notice (the reader's cap), and how long this cluster's own notices ask for. */
  closeWatchMaxMs?: number;
  /** Called as each heartbeat write begins (its RegisterInstance may still fail and be retried at the next poll). */
  onHeartbeat?: () => void;
  /**
   * Another Region's Cloud Map, read only: this cluster never writes there, so operations pending at start are not
   * its predecessor's to wait for, and markChanged() is refused.
   */
  readOnly?: boolean;
  /**
   * Warm start (M9): checkpoints of what was read, kept where a successor finds them. With them, the first read takes
   * what a trusted checkpoint holds and reads only what the change markers say changed since, and what no checkpoint
   * holds; without, everything known is read.
   */
  checkpoints?: CheckpointStore;
  /** Least time between two saves of one namespace's checkpoint. */
  checkpointIntervalMs?: number;
  /** Called when polls of the change marker start failing (with the error) or succeed again. */
  onReachability?: (reachability: Reachability) => void;
  logger?: Logger;
  clock?: Clock;
}

/** What the watcher did so far, for tests, benchmarks and gauges. */
export interface WatcherStats {
  /** DiscoverInstancesRevision calls on the marker service. */
  polls: number;
  /** Of those, polls made between two ticks because a peer announced a coming change. */
  closePolls: number;
  /** Polls that found the marker moved (and read it). */
  markerChanges: number;
  /** Namespaces re-read service by service (revisions compared, or every service read). */
  namespaceScans: number;
  /** Completed first reads of everything (one per start). */
  fullResyncs: number;
  /** Listings of every namespace's services for the safety-net resync. */
  resyncListings: number;
  /** Services checked by the safety-net resync after the first read. */
  resyncChecks: number;
  /** Services checked because a writer that does not bump the marker has instances in their namespace. */
  nonAnnouncingChecks: number;
  /** Listings (ListServices) of a namespace where a writer that does not bump the marker has instances. */
  nonAnnouncingListings: number;
  /** First reads that took services from checkpoints (warm starts). */
  warmStarts: number;
  /** Services taken from checkpoints, over every warm start. */
  seededServices: number;
  /** Checkpoints of a namespace saved. */
  checkpointsSaved: number;
}

/** Whether the last poll of the change marker got an answer; `since` is when that last changed (clock ms). */
export interface Reachability {
  readonly reachable: boolean;
  readonly since: number;
  /** The failure, while unreachable. */
  readonly error?: string;
}

interface Cached {
  readonly revision: number | undefined;
  readonly instances: readonly CloudMapInstance[];
  /** Checks since the instances were read that found the revision unchanged (and so read nothing). */
  revisionChecks: number;
}

function pending(): { done: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const done = new Promise<void>((r) => (resolve = r));
  return { done, resolve };
}

function settled(): { done: Promise<void>; resolve: () => void } {
  return { done: Promise.resolve(), resolve: () => {} };
}

/** Cloud Map namespaces that can match a Kubernetes namespace (RFC 1123 labels); the marker namespace cannot. */
const KUBERNETES_NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

const FULL_RESYNC_RETRY_MS = { min: 1000, max: 30_000 };

/** A heartbeat that could not be written, or is due while the previous one is still on its way, is tried again after this. */
const BEAT_RETRY_MS = 1000;

/** Operations left pending at start that are looked at to tell whether a predecessor of this cluster left them. */
const OWN_OPERATION_PROBES = 20;
/** Writes older than this that a predecessor never announced are left to the safety-net resync. */
const UNANNOUNCED_MAX_AGE_MS = 3_600_000;

/** `promise`, or a rejection once `signal` aborts: a stopping watcher does not wait for its caller's answer. */
function unlessStopped<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('the watcher stopped'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** What this reader knows of the ClusterSet's heartbeats, as of its last complete read of the marker service. */
export interface HeartbeatView {
  readonly sightings: ReadonlyMap<string, HeartbeatSighting>;
  /** When (this reader's clock) the marker service was last read in full or found unchanged; undefined before. */
  readonly readAt: number | undefined;
}

export class CloudMapWatcher {
  private readonly opts: Required<Omit<CloudMapWatcherOptions, 'logger' | 'knownServices' | 'onHeartbeat' | 'onReachability' | 'checkpoints'>>
    & Pick<CloudMapWatcherOptions, 'logger' | 'knownServices' | 'onHeartbeat' | 'onReachability' | 'checkpoints'>;
  private readonly markerNamespace: string;
  private readonly cache = new Map<string, Map<string, Cached>>();
  /** Last DiscoverInstancesRevision of the marker service; null until read once. */
  private markerRevision: number | undefined | null = null;
  private markerSeen = new Map<string, MarkerEntry>();
  private heartbeatView: HeartbeatView = { sightings: new Map(), readAt: undefined };
  private nextBeat = 0;
  private beating: Promise<void> | undefined;
  private beatLoop: Promise<void> | undefined;
  /** Until when (this reader's clock) the marker is polled closely; the notice last acted on per cluster. */
  private closeWatch: { until: number; acted: Map<string, number> } = { until: 0, acted: new Map() };
  /** When this cluster last sent a notice of a coming change. */
  private lastNoticeAt = Number.NEGATIVE_INFINITY;
  private readonly dirty: DirtyNamespaces = new Map();
  private rechecks: { due: number; dirty: DirtyNamespaces }[] = [];
  private nextFullResync = 0;
  private fullResyncFailures = 0;
  private abort = new AbortController();
  private loop: Promise<void> | undefined;
  private firstSync: Promise<void> | undefined;
  private resolveFirstSync: (() => void) | undefined;
  private isSynced = false;
  private readonly writer: ChangeMarkerWriter;
  private readonly counts: WatcherStats = {
    polls: 0, closePolls: 0, markerChanges: 0, namespaceScans: 0, fullResyncs: 0, resyncListings: 0, resyncChecks: 0, nonAnnouncingChecks: 0, nonAnnouncingListings: 0, warmStarts: 0, seededServices: 0, checkpointsSaved: 0,
  };
  /** The checkpoints found at start (loaded once per start); undefined until asked for. */
  private checkpointsLoaded: Promise<NamespaceCheckpoint[] | undefined> | undefined;
  /** Namespaces whose checkpoint no longer shows what the cache and the markers hold. */
  private readonly checkpointStale = new Set<string>();
  /** Namespaces that have a checkpoint (found at start or saved since). */
  private readonly checkpointed = new Set<string>();
  /** When each namespace's checkpoint was last saved (or its save failed). */
  private readonly checkpointSavedAt = new Map<string, number>();
  private checkpointSaving: Promise<void> | undefined;
  /**
   * Resolves once the first read listed the namespaces (or gave up, or the watcher stopped): the first heartbeat waits
   * for it, so that it finds the marker namespace in that listing instead of listing on its own (ListNamespaces is
   * 0.5/s per account: two at start made the first read wait seconds for a token).
   */
  private firstListing: { done: Promise<void>; resolve: () => void } = settled();
  /** Namespaces whose services the last first read took from checkpoints. */
  private seededNamespaces = new Set<string>();
  /** Per namespace and service, when the last completed read of it began (readAt). */
  private readonly readStarted = new Map<string, Map<string, number>>();
  /** The listing of every namespace's services for the resync, while it runs. */
  private sweepListing: Promise<void> | undefined;
  private sweepListingRetryAt = 0;
  /** When the last complete listing began and how long it took; undefined: none since start. */
  private lastListing: { startedAt: number; durationMs: number } | undefined;
  private sweepCarry = 0;
  private lastSweepStep = 0;
  private nextNonAnnouncingCheck = 0;
  /** When each namespace where a writer that does not bump the marker has instances was last listed. */
  private readonly nonAnnouncingListedAt = new Map<string, number>();
  /** Operations found pending at start were this cluster's: a predecessor was killed mid-write. */
  private ownPendingAtStart = false;
  /** Whether operations that succeeded since this cluster's last bump wrote its instances (settlePredecessor). */
  private unannouncedAtStart: Promise<boolean> = Promise.resolve(false);
  private reach: Reachability;
  /** When the loop last finished a step or a read of a service, failed ones included (liveness). */
  private progressAt: number;
  /** The first read waits for the caller's knownServices: not stuck, however long the caller's lists take. */
  private awaitingKnown = false;

  constructor(options: CloudMapWatcherOptions) {
    this.opts = {
      ...options,
      pollIntervalMs: options.pollIntervalMs ?? 750,
      fullResyncIntervalMs: options.fullResyncIntervalMs ?? 300_000,
      resyncBudgetPerMinute: options.resyncBudgetPerMinute ?? 45,
      nonAnnouncingPollIntervalMs: options.nonAnnouncingPollIntervalMs ?? 0,
      deepResyncEvery: Math.max(1, options.deepResyncEvery ?? 6),
      settleTimeoutMs: options.settleTimeoutMs ?? 30_000,
      rechecksAfterMs: options.rechecksAfterMs ?? [1000, 5000],
      concurrency: Math.max(1, options.concurrency ?? 16),
      minBumpIntervalMs: options.minBumpIntervalMs ?? 200,
      markerEvictionMinAgeMs: options.markerEvictionMinAgeMs ?? 60_000,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 0,
      closeWatchIntervalMs: options.closeWatchIntervalMs ?? 100,
      closeWatchMaxMs: options.closeWatchMaxMs ?? 10_000,
      heartbeatSkewAllowanceMs: options.heartbeatSkewAllowanceMs ?? 60_000,
      checkpointIntervalMs: options.checkpointIntervalMs ?? 10_000,
      readOnly: options.readOnly ?? false,
      clock: options.clock ?? systemClock,
      logger: options.logger,
    };
    this.markerNamespace = markerNamespaceName(options.identity.clustersetId);
    this.reach = { reachable: true, since: this.opts.clock.now() };
    this.progressAt = this.opts.clock.now();
    this.writer = new ChangeMarkerWriter({
      registry: options.registry,
      instances: options.instances,
      operations: options.operations,
      identity: options.identity,
      clock: this.opts.clock,
      lastSeen: (id) => this.markerSeen.get(id),
      ownMarkers: () => [...this.markerSeen.values()].filter((m) => m.clusterId === options.identity.clusterId),
      markerEvictionMinAgeMs: this.opts.markerEvictionMinAgeMs,
      minBumpIntervalMs: this.opts.minBumpIntervalMs,
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }

  /** Starts polling; resolves once the first full read of Cloud Map completed (retried until it does). */
  start(): Promise<void> {
    if (!this.firstSync) {
      this.abort = new AbortController();
      this.writer.resume();
      this.nextFullResync = 0; // a restart reads everything again before it resolves
      this.isSynced = false;
      this.lastListing = undefined;
      this.sweepCarry = 0;
      this.checkpointsLoaded = undefined;
      this.firstListing = pending();
      this.seededNamespaces = new Set();
      this.progressAt = this.opts.clock.now();
      this.firstSync = new Promise((resolve) => (this.resolveFirstSync = resolve));
      this.loop = this.run();
    }
    return this.firstSync;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.firstListing.resolve();
    this.writer.stop();
    await this.loop;
    await this.beatLoop;
    await this.beating;
    await this.checkpointSaving;
    this.loop = undefined;
    this.firstSync = undefined;
  }

  /**
   * Whether the loop runs, and when it last finished a step or a read of one service (failed ones too: during an
   * outage every call still ends at its deadline). A running loop whose progressAt grows old is stuck.
   */
  get progress(): { busy: boolean; progressAt: number } {
    return { busy: this.loop !== undefined && !this.awaitingKnown, progressAt: this.progressAt };
  }

  /** True once the first full read of Cloud Map completed. */
  get synced(): boolean {
    return this.isSynced;
  }

  /** The instances of `namespace/service` in this ClusterSet, all clusters, as last read (empty when none). */
  snapshot(namespace: string, service: string): readonly CloudMapInstance[] {
    return this.cache.get(namespace)?.get(service)?.instances ?? [];
  }

  /**
   * When (watcher clock) the last read of the service that completed began, whether it found the service or not:
   * the snapshot shows every write that had settled by then.
   */
  readAt(namespace: string, service: string): number | undefined {
    return this.readStarted.get(namespace)?.get(service);
  }

  /**
   * Whether a writer that does not bump the change marker has instances anywhere in this Cloud Map, as last read (the
   * AWS controller v0.3.1 during a migration). Such a controller reads every namespace of its cluster through a 10 s
   * cache of their services, and fails a namespace's whole import while a cached service is gone.
   */
  nonAnnouncingWriterSeen(): boolean {
    return this.nonAnnouncingNamespaces().size > 0;
  }

  /** The namespaces where a writer that does not bump the change marker has instances, as last read. */
  private nonAnnouncingNamespaces(): Set<string> {
    return namespacesWithNonAnnouncing(this.cachedInstances());
  }

  private *cachedInstances(): Generator<{ namespace: string; instances: readonly CloudMapInstance[] }> {
    for (const [namespace, services] of this.cache) for (const c of services.values()) yield { namespace, instances: c.instances };
  }

  /** The watcher's clock. */
  now(): number {
    return this.opts.clock.now();
  }

  /** The heartbeats of the ClusterSet's clusters as last read (this cluster's included). */
  heartbeats(): HeartbeatView {
    return this.heartbeatView;
  }

  /** Whether this Cloud Map answered the last poll of the change marker. */
  get reachability(): Reachability {
    return this.reach;
  }

  get stats(): Readonly<WatcherStats> {
    return { ...this.counts };
  }

  /** Every service that has instances in this ClusterSet. */
  services(): ServiceKey[] {
    const out: ServiceKey[] = [];
    for (const [namespace, services] of this.cache) {
      for (const [service, cached] of services) if (cached.instances.length > 0) out.push({ namespace, service });
    }
    return out;
  }

  /**
   * For the writer side: this cluster changed `services` (any when omitted) in `namespace`; those writes have been
   * submitted. Resolves once the ClusterSet change marker says so.
   */
  markChanged(namespace: string, services?: readonly string[]): Promise<void> {
    if (this.opts.readOnly) return Promise.reject(new Error(`the change marker of namespace ${namespace} is only written in this cluster's own Region`));
    return this.writer.markChanged(namespace, services);
  }

  private get log(): Logger | undefined {
    return this.opts.logger;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    this.reached(await this.guard('read the change marker', () => this.pollMarker(false)));
    // Only in this cluster's own Region: a Region read only is never written to (its readers read every Region).
    if (!this.opts.readOnly) {
      this.beatLoop = this.beatOnTime(signal);
      await this.guard('look for writes a previous process left pending or unannounced', () => this.settlePredecessor());
    }
    // Polls start every interval, however long a tick took: the marker's delay to a reader is at most one interval
    // (export-to-import latency is the writers' operation plus that delay).
    while (!signal.aborted) {
      const began = this.opts.clock.now();
      await this.tick();
      await this.watchClosely(began + this.opts.pollIntervalMs, signal);
      await sleep(Math.max(0, this.opts.pollIntervalMs - (this.opts.clock.now() - began)), signal);
    }
  }

  /** Until `nextTick`, while a peer's notice of a coming change stands: polls every close-watch interval, reads what moved. */
  private async watchClosely(nextTick: number, signal: AbortSignal): Promise<void> {
    const { clock, closeWatchIntervalMs } = this.opts;
    while (!signal.aborted && this.isSynced && closeWatchIntervalMs > 0) {
      const now = clock.now();
      if (now >= this.closeWatch.until || now + closeWatchIntervalMs >= nextTick) return;
      await sleep(closeWatchIntervalMs, signal);
      if (signal.aborted) return;
      this.counts.closePolls++;
      this.reached(await this.guard('poll the change marker', () => this.pollMarker(true)));
      await this.guard('re-read changed services', () => this.processDirty());
    }
  }

  /**
   * Tells the peers a bump of this cluster's marker is coming after a wait Cloud Map imposes (a namespace being
   * created, M1): they poll the marker closely until closeWatchMaxMs from now (M7). Not awaited; at most one notice
   * per half that time (a notice's own operation must end before the next); a lost one costs peers only the usual
   * poll interval.
   */
  announceComing(): void {
    const { clock, identity, readOnly, closeWatchMaxMs } = this.opts;
    const now = clock.now();
    if (readOnly || !(closeWatchMaxMs > 0) || this.abort.signal.aborted || now < this.lastNoticeAt + closeWatchMaxMs / 2) return;
    this.lastNoticeAt = now;
    void this.firstListing.done
      .then(() => registerInMarkerService(this.opts, comingInstance(identity.clusterId, identity.clustersetId, now + closeWatchMaxMs), true))
      .catch((err: unknown) => this.log?.debug({ err: String(err) }, 'could not announce a coming change; peers see it at their next poll'));
  }

  /** Runs one step; a failure is logged and returned (the step is retried at the next poll). */
  private async guard(what: string, step: () => Promise<void>): Promise<unknown> {
    try {
      await step();
      return undefined;
    } catch (err) {
      this.log?.warn({ err: String(err) }, `could not ${what}; retrying at the next poll`);
      return err ?? new Error(`could not ${what}`);
    } finally {
      this.progressAt = this.opts.clock.now();
    }
  }

  /** Records the outcome of a marker poll (`failure` undefined: answered); calls back when reachability changed. */
  private reached(failure: unknown): void {
    // A call this process cut short (stopping) or did not send (a lost Lease) says nothing of whether Cloud Map answers.
    if (failure instanceof CallCancelledError || failure instanceof LeaseLostError) return;
    const reachable = failure === undefined;
    if (reachable === this.reach.reachable) return;
    this.reach = reachable ? { reachable, since: this.opts.clock.now() } : { reachable, since: this.opts.clock.now(), error: failure instanceof Error ? String(failure) : JSON.stringify(failure) };
    try {
      this.opts.onReachability?.(this.reach);
    } catch (err) {
      this.log?.error({ err: String(err) }, 'Cloud Map reachability callback failed');
    }
  }

  private async tick(): Promise<void> {
    this.reached(await this.guard('poll the change marker', () => this.pollMarker(true)));
    if (!this.isSynced && this.opts.clock.now() >= this.nextFullResync) await this.guard('read Cloud Map', () => this.fullResync());
    else await this.guard('re-read changed services', () => this.processDirty());
    await this.guard('recheck changed services', () => this.processRechecks());
    if (this.isSynced) await this.guard('resync with Cloud Map', () => this.sweepStep());
    if (this.isSynced) await this.guard('check the services of writers that do not bump the marker', () => this.nonAnnouncingStep());
    this.checkpointStep();
  }

  /** One DiscoverInstancesRevision; reads the markers only when it moved. `track` false: just record the baseline. */
  private async pollMarker(track: boolean): Promise<void> {
    this.counts.polls++;
    const startedAt = this.opts.clock.now();
    const revision = await this.opts.instances.discoverRevision(this.markerNamespace, MARKER_SERVICE);
    if (revision === this.markerRevision) {
      this.heartbeatView = { ...this.heartbeatView, readAt: startedAt };
      return;
    }
    this.counts.markerChanges++;
    const found = revision === undefined ? undefined : await this.opts.instances.discoverInstances(this.markerNamespace, MARKER_SERVICE);
    const entries = (found?.instances ?? []).flatMap((i) => parseMarker(i) ?? []);
    for (const [namespace, services] of changedNamespaces(this.markerSeen, entries)) {
      this.checkpointStale.add(namespace);
      if (track) markDirty(this.dirty, namespace, services);
    }
    this.markerSeen = new Map(entries.map((e) => [e.id, e]));
    this.markerRevision = revision;
    const notices = (found?.instances ?? []).flatMap((i) => parseComing(i) ?? []);
    const { until, acted } = closeWatchUntil(notices, this.closeWatch.acted, this.opts.identity.clusterId, startedAt, this.opts.closeWatchMaxMs);
    this.closeWatch = { until: Math.max(this.closeWatch.until, until), acted };
    const heartbeats = (found?.instances ?? []).flatMap((i) => parseHeartbeat(i) ?? []);
    this.heartbeatView = {
      sightings: observeHeartbeats(this.heartbeatView.sightings, heartbeats, startedAt, this.opts.heartbeatSkewAllowanceMs),
      readAt: startedAt,
    };
  }

  /**
   * Beats every interval on a loop of its own: a poll that takes minutes (a large sync's reads) must not hold the
   * heartbeat past the peers' --dead-cluster-ttl.
   */
  private async beatOnTime(signal: AbortSignal): Promise<void> {
    const { heartbeatIntervalMs, clock } = this.opts;
    if (!(heartbeatIntervalMs > 0)) return;
    while (!signal.aborted) {
      this.beatWhenDue();
      const untilDue = this.nextBeat - clock.now();
      await sleep(untilDue > 0 ? untilDue : Math.min(heartbeatIntervalMs, BEAT_RETRY_MS), signal);
    }
  }

  /** Writes this cluster's heartbeat when an interval has passed since the last one began (not awaited). */
  private beatWhenDue(): void {
    const { heartbeatIntervalMs, clock, identity } = this.opts;
    if (!(heartbeatIntervalMs > 0) || this.beating !== undefined || clock.now() < this.nextBeat) return;
    this.nextBeat = clock.now() + heartbeatIntervalMs;
    this.opts.onHeartbeat?.();
    this.beating = this.firstListing.done.then(() => registerInMarkerService(this.opts, heartbeatInstance(identity.clusterId, identity.clustersetId, clock.now()), true))
      .catch((err: unknown) => {
        this.nextBeat = 0; // again within BEAT_RETRY_MS: peers judge this cluster silent after a few missed beats
        this.log?.warn({ err: String(err) }, 'could not write this cluster\'s heartbeat to Cloud Map; retrying in a second');
      })
      .finally(() => (this.beating = undefined));
  }

  private takeDirty(): DirtyNamespaces {
    const taken = new Map(this.dirty);
    this.dirty.clear();
    return taken;
  }

  private async processDirty(): Promise<void> {
    const work = this.takeDirty();
    if (work.size === 0) return;
    await this.refreshDirty(work, true);
    const now = this.opts.clock.now();
    for (const after of this.opts.rechecksAfterMs) this.rechecks.push({ due: now + after, dirty: work });
  }

  private async processRechecks(): Promise<void> {
    const now = this.opts.clock.now();
    const due = this.rechecks.filter((r) => r.due <= now);
    if (due.length === 0) return;
    this.rechecks = this.rechecks.filter((r) => r.due > now);
    const merged: DirtyNamespaces = new Map();
    for (const r of due) for (const [namespace, services] of r.dirty) markDirty(merged, namespace, services);
    await this.refreshDirty(merged, false);
  }

  /**
   * Re-reads what the markers named. Named services are read directly (we know they changed). A namespace marked
   * as a whole is compared by revision; when `suspectRepeats` and no revision in it moved although its marker did,
   * the revisions are not trusted (they may repeat) and every service in it is read.
   */
  private async refreshDirty(work: DirtyNamespaces, suspectRepeats: boolean): Promise<void> {
    for (const [namespace, services] of work) {
      if (services === 'all') {
        try {
          const moved = await this.scanNamespace(namespace, false);
          if (moved === false && suspectRepeats) await this.scanNamespace(namespace, true);
        } catch (err) {
          // Its listing failed: the namespace stays to do (and its checkpoint waits, M9), the others go on.
          this.requeue(namespace, 'all');
          if (!this.abort.signal.aborted) this.log?.warn({ namespace, err: String(err) }, 'could not list the Cloud Map services of a changed namespace; retrying at the next poll');
        }
        continue;
      }
      const failures = await forEachLimited(services, this.opts.concurrency, (service) => this.refreshService(namespace, service, suspectRepeats).then(() => {}));
      this.requeue(namespace, failures.map((f) => f.item));
    }
  }

  /**
   * Refreshes every service of `namespace` (listed, or cached from before); `deep` reads instances regardless of
   * revisions. Returns whether any revision moved (or a service appeared or vanished), or undefined if some failed.
   */
  private async scanNamespace(namespace: string, deep: boolean): Promise<boolean | undefined> {
    this.counts.namespaceScans++;
    // Scanned because a marker or a listing named it: it may be newer than the registry's last listing.
    const namespaceId = await this.opts.registry.findNamespace(namespace, true);
    const listed = new Set(namespaceId === undefined ? [] : (await this.opts.registry.listServices(namespaceId)).map((s) => s.name));
    const names = new Set([...listed, ...(this.cache.get(namespace)?.keys() ?? [])]);
    let moved = false;
    const failures = await forEachLimited(names, this.opts.concurrency, async (service) => {
      if (await this.refreshService(namespace, service, deep && listed.has(service))) moved = true;
    });
    if (failures.length > 0) {
      this.requeue(namespace, 'all');
      this.log?.warn({ namespace, failed: failures.length, err: String(failures[0]!.error) }, 'could not read some Cloud Map services; retrying at the next poll');
      return undefined;
    }
    return moved;
  }

  private requeue(namespace: string, services: readonly string[] | 'all'): void {
    if (services === 'all' || services.length > 0) markDirty(this.dirty, namespace, services);
  }

  /**
   * Reads one service: its revision first unless `direct`, then its instances when the revision moved. Returns
   * true when the revision moved, the service appeared or vanished, or (direct) the instances changed. Each read that
   * ends, failed or not, is progress of the loop.
   */
  private async refreshService(namespace: string, service: string, direct: boolean): Promise<boolean> {
    try {
      return await this.readService(namespace, service, direct);
    } finally {
      this.progressAt = this.opts.clock.now();
    }
  }

  private async readService(namespace: string, service: string, direct: boolean): Promise<boolean> {
    const startedAt = this.opts.clock.now();
    const cached = this.cache.get(namespace)?.get(service);
    let revision: number | undefined;
    if (!direct) {
      revision = await this.opts.instances.discoverRevision(namespace, service);
      if (revision === undefined) return this.readDone(namespace, service, startedAt, this.update(namespace, service, undefined) || cached !== undefined);
      if (cached !== undefined && revision === cached.revision) {
        cached.revisionChecks++;
        return this.readDone(namespace, service, startedAt, false);
      }
    }
    const found = await this.opts.instances.discoverInstances(namespace, service);
    this.readDone(namespace, service, startedAt, false);
    if (found === undefined) return this.update(namespace, service, undefined) || cached !== undefined;
    const changed = this.update(namespace, service, { revision: found.revision ?? revision, instances: found.instances, revisionChecks: 0 });
    return direct ? changed : true;
  }

  /** Records when a completed read of the service began; returns `result`. */
  private readDone(namespace: string, service: string, startedAt: number, result: boolean): boolean {
    let services = this.readStarted.get(namespace);
    if (!services) this.readStarted.set(namespace, (services = new Map<string, number>()));
    services.set(service, startedAt);
    return result;
  }

  /** Stores a service's state (undefined: gone); calls back and returns true when its instances changed. */
  private update(namespace: string, service: string, next: Cached | undefined): boolean {
    let services = this.cache.get(namespace);
    const cached = services?.get(service);
    const before = cached?.instances ?? [];
    if (cached?.revision !== next?.revision || (cached === undefined) !== (next === undefined)) this.checkpointStale.add(namespace);
    if (next === undefined) {
      services?.delete(service);
      if (services?.size === 0) this.cache.delete(namespace);
    } else {
      if (!services) this.cache.set(namespace, (services = new Map<string, Cached>()));
      services.set(service, next);
    }
    if (sameInstances(before, next?.instances ?? [])) return false;
    this.checkpointStale.add(namespace);
    try {
      this.opts.onChange({ namespace, service });
    } catch (err) {
      this.log?.error({ namespace, service, err: String(err) }, 'Cloud Map change callback failed');
    }
    return true;
  }

  /**
   * The first read (retried with backoff until complete): every namespace, and the instances of every known service
   * (knownServices) or, without it, of every listed service.
   */
  private async fullResync(): Promise<void> {
    const started = this.opts.clock.now();
    this.takeDirty(); // covered by this read; marks arriving meanwhile stay for the next poll
    let failed = false;
    try {
      // Loaded while the namespaces are listed and the caller learns what it knows of (M9).
      if (this.opts.knownServices !== undefined) void this.loadCheckpoints();
      const namespaces = await this.namespaces().finally(() => this.firstListing.resolve());
      const ask = this.opts.knownServices;
      if (ask === undefined) {
        for (const namespace of namespaces) if ((await this.scanNamespace(namespace, true)) === undefined) failed = true;
      } else {
        this.awaitingKnown = true;
        const told = await unlessStopped(Promise.resolve().then(ask), this.abort.signal).finally(() => {
          this.awaitingKnown = false;
          this.progressAt = this.opts.clock.now();
        });
        const knownServices = [...told, ...this.keys()];
        const plan = await this.warmStartPlan(namespaces, knownServices);
        // A service of a namespace Cloud Map does not have (a first start: nothing exported yet) has nothing to read.
        const toRead = plan?.read ?? knownServices.filter((k) => namespaces.has(k.namespace));
        const known = new Map(toRead.map((k) => [`${k.namespace}/${k.service}`, k]));
        const failures = await forEachLimited(known.values(), this.opts.concurrency, (k) => this.refreshService(k.namespace, k.service, true).then(() => {}));
        failed = failures.length > 0;
        if (failed) this.log?.warn({ failed: failures.length, err: String(failures[0]!.error) }, 'could not read some Cloud Map services; retrying');
        if (plan !== undefined && plan.announced.length > 0) {
          // Read because a marker named them: checked again like any marker-driven read (eventual consistency).
          const announced: DirtyNamespaces = new Map();
          for (const k of plan.announced) markDirty(announced, k.namespace, [k.service]);
          const now = this.opts.clock.now();
          for (const after of this.opts.rechecksAfterMs) this.rechecks.push({ due: now + after, dirty: announced });
        }
      }
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      this.fullResyncFailures = failed ? this.fullResyncFailures + 1 : 0;
      this.nextFullResync = this.opts.clock.now() + Math.min(FULL_RESYNC_RETRY_MS.max, FULL_RESYNC_RETRY_MS.min * 2 ** Math.max(0, this.fullResyncFailures - 1));
    }
    this.counts.fullResyncs++;
    this.log?.info({
      namespaces: this.cache.size, services: this.services().length, durationMs: this.opts.clock.now() - started, complete: !failed,
      ...(this.seededNamespaces.size > 0 ? { fromCheckpoints: this.seededNamespaces.size } : {}),
    }, this.seededNamespaces.size > 0 ? 'Cloud Map read: what changed since the checkpoints, and what they do not hold' : 'Cloud Map read in full');
    if (failed) return;
    this.isSynced = true;
    this.lastSweepStep = this.opts.clock.now();
    // Listed just now: the next listing is an interval away.
    if (this.opts.knownServices === undefined) this.lastListing = { startedAt: started, durationMs: this.lastSweepStep - started };
    this.resolveFirstSync?.();
    this.resolveFirstSync = undefined;
    if (this.ownPendingAtStart || (await this.unannouncedAtStart)) {
      this.announceOwnNamespaces();
      // Writes of a killed predecessor that it never announced may be missing from its checkpoints: the namespaces
      // taken from them where this cluster has instances are compared by revision at the next poll.
      for (const namespace of this.ownNamespaces()) if (this.seededNamespaces.has(namespace)) markDirty(this.dirty, namespace, 'all');
    }
    this.ownPendingAtStart = false;
    this.unannouncedAtStart = Promise.resolve(false);
  }

  /** Names of the Cloud Map namespaces that can be Kubernetes namespaces, listed or cached. */
  private async namespaces(): Promise<Set<string>> {
    const listed = (await this.opts.registry.listNamespaces()).map((n) => n.name).filter((n) => KUBERNETES_NAMESPACE.test(n));
    return new Set([...listed, ...this.cache.keys()]);
  }

  /**
   * A predecessor killed mid-write leaves operations pending (waited for here, so the first read sees their outcome)
   * and completed writes it never announced with a marker bump: instance operations that succeeded since this
   * cluster's last bump. If some of either are this cluster's, the peers are told after the first read.
   */
  private async settlePredecessor(): Promise<void> {
    const { operations, identity, clock } = this.opts;
    const { ids: pending, failed } = await operations.settleInFlight(this.opts.settleTimeoutMs);
    const since = unannouncedSince(this.markerSeen.values(), identity.clusterId, clock.now(), UNANNOUNCED_MAX_AGE_MS);
    this.ownPendingAtStart = pending.length > 0 && await this.anyOwn(pending, since);
    this.unannouncedAtStart = this.findUnannounced(since, pending).catch((err: unknown) => {
      this.log?.warn({ err: String(err) }, 'could not list the Cloud Map operations since the last marker bump; announcing every namespace this cluster writes in');
      return true;
    });
    if (pending.length > 0) {
      this.log?.info({ pending: pending.length, failed, ours: this.ownPendingAtStart }, 'waited for the Cloud Map operations a previous process left pending before the first read');
    }
  }

  /**
   * Whether this cluster wrote instances it may not have announced. Only the pending operations must be settled before
   * the first read; this runs alongside it, since listing the account's operations of the last hour (every cluster's)
   * can take a while. A cluster that never bumped its marker needs no listing: whatever it owns is announced.
   */
  private async findUnannounced(since: number, pending: readonly string[]): Promise<boolean> {
    const { operations, identity } = this.opts;
    if (![...this.markerSeen.values()].some((m) => m.clusterId === identity.clusterId)) return true;
    const recent = (await operations.succeededSince(since)).filter((id) => !pending.includes(id));
    const ours = recent.length > 0 && await this.anyOwn(recent, since);
    if (recent.length > 0) this.log?.info({ recent: recent.length, ours }, 'looked at the Cloud Map operations that succeeded since this cluster\'s last marker bump');
    return ours;
  }

  /**
   * Whether any of these operations wrote an instance of this cluster (ids end with its tag) and was submitted after
   * `since` — writers announce at submission, so one submitted before the last bump was announced, even if it finished
   * after it. Asks for at most OWN_OPERATION_PROBES of them: a killed predecessor's operations are many, so the first
   * ones tell.
   */
  private async anyOwn(operationIds: readonly string[], since: number): Promise<boolean> {
    const tag = `-${clusterTag(this.opts.identity)}`;
    for (const id of operationIds.slice(0, OWN_OPERATION_PROBES)) {
      const { instance, submittedAt } = await this.opts.operations.describe(id);
      if (instance?.endsWith(tag) && (submittedAt === undefined || submittedAt > since)) return true;
    }
    return false;
  }

  /**
   * Operations a killed predecessor left pending completed without its marker bump: tell the peers to look at every
   * namespace where this cluster has instances (they compare revisions there).
   */
  private announceOwnNamespaces(): void {
    for (const namespace of this.ownNamespaces()) {
      this.writer.markChanged(namespace).catch((err: unknown) => this.log?.warn({ namespace, err: String(err) }, 'could not bump the change marker after a restart'));
    }
  }

  /** The namespaces where this cluster has instances, as last read. */
  private ownNamespaces(): string[] {
    return [...this.cache].filter(([, services]) => [...services.values()]
      .some((c) => c.instances.some((i) => i.attributes[ATTR_CLUSTER_ID] === this.opts.identity.clusterId))).map(([namespace]) => namespace);
  }

  /** The checkpoints, loaded once per start (undefined: none kept, or unreadable: the first read is then in full). */
  private loadCheckpoints(): Promise<NamespaceCheckpoint[] | undefined> {
    const store = this.opts.checkpoints;
    if (store === undefined) return Promise.resolve(undefined);
    this.checkpointsLoaded ??= store.load().catch((err: unknown) => {
      this.log?.warn({ err: String(err) }, 'could not load the Cloud Map checkpoints; reading Cloud Map in full');
      return undefined;
    });
    return this.checkpointsLoaded;
  }

  /**
   * With checkpoints (M9): loads them (once per start), compares their markers with the markers read at start, takes
   * the services of every trusted checkpoint into the cache and returns what is left to read. Undefined: no checkpoint
   * store, or the checkpoints could not be loaded (everything known is read, a cold start).
   */
  private async warmStartPlan(namespaces: ReadonlySet<string>, known: readonly ServiceKey[]): Promise<WarmStartPlan | undefined> {
    const checkpoints = await this.loadCheckpoints();
    if (checkpoints === undefined) return undefined;
    for (const cp of checkpoints) this.checkpointed.add(cp.namespace);
    // The markers as the checkpoints saw them, against the markers read at this start.
    const before = new Map<string, MarkerEntry>(checkpoints.flatMap((cp) => cp.markers.map((m) => [m.id, {
      id: m.id, clusterId: m.clusterId, namespace: cp.namespace, revision: m.revision, base: undefined, bumps: [],
    }] as const)));
    const plan = planWarmStart({
      checkpoints, namespaces, known,
      changed: changedNamespaces(before, [...this.markerSeen.values()]),
      // Markers not read: nothing can be validated. Writes a predecessor left pending: its checkpoints may lack them.
      cold: this.markerRevision === null || this.ownPendingAtStart,
    });
    // The first poll found every marker new; what the checkpoints hold is not stale. What the reads below change is.
    this.checkpointStale.clear();
    for (const k of plan.announced) this.checkpointStale.add(k.namespace);
    const seeded: string[] = [];
    for (const [namespace, services] of plan.seed) {
      let cached = this.cache.get(namespace);
      for (const s of services) {
        if (cached?.has(s.name)) continue; // read since (a retried first read): newer than the checkpoint
        if (!cached) this.cache.set(namespace, (cached = new Map<string, Cached>()));
        cached.set(s.name, { revision: s.revision, instances: s.instances, revisionChecks: 0 });
        seeded.push(`${namespace}/${s.name}`);
      }
      this.seededNamespaces.add(namespace);
    }
    // Taken from a checkpoint, not read: the resync checks them at its steady pace, each within one period of this
    // start (spread over it, so a restart does not make every one of them due at once).
    const now = this.opts.clock.now();
    const period = resyncPeriodMs(seeded.length + plan.read.length, { intervalMs: this.opts.fullResyncIntervalMs, budgetPerMinute: this.opts.resyncBudgetPerMinute, stepMs: this.opts.pollIntervalMs });
    seeded.forEach((key, k) => {
      const slash = key.indexOf('/');
      this.readDone(key.slice(0, slash), key.slice(slash + 1), now - period + ((k + 1) / seeded.length) * period, false);
    });
    if (seeded.length > 0) {
      this.counts.warmStarts++;
      this.counts.seededServices += seeded.length;
    }
    for (const [namespace, why] of plan.untrusted) {
      this.checkpointStale.add(namespace);
      this.log?.info({ namespace, why }, 'Cloud Map checkpoint of the namespace not used; its services are read');
    }
    this.log?.info({ checkpoints: checkpoints.length, seeded: seeded.length, read: plan.read.length, announced: plan.announced.length, untrusted: plan.untrusted.size }, 'Cloud Map checkpoints compared with the change markers');
    return plan;
  }

  /**
   * Saves the checkpoint of every namespace whose cache or markers changed since its last one, once all that its
   * markers announced was read and checked again (nothing dirty, no recheck pending there): the markers saved then
   * vouch for the instances saved (M9). At most one save in flight, each namespace at most once an interval.
   */
  private checkpointStep(): void {
    const store = this.opts.checkpoints;
    if (store === undefined || !this.isSynced || this.markerRevision === null || this.checkpointSaving !== undefined || this.checkpointStale.size === 0) return;
    const now = this.opts.clock.now();
    const busy = new Set([...this.dirty.keys(), ...this.rechecks.flatMap((r) => [...r.dirty.keys()])]);
    const due = [...this.checkpointStale].filter((namespace) => !busy.has(namespace)
      && (this.cache.has(namespace) || this.checkpointed.has(namespace))
      && now - (this.checkpointSavedAt.get(namespace) ?? Number.NEGATIVE_INFINITY) >= this.opts.checkpointIntervalMs);
    if (due.length === 0) return;
    // Taken together now: markers and instances of one moment.
    const snapshots = due.map((namespace) => {
      this.checkpointStale.delete(namespace);
      const markers = [...this.markerSeen.values()].filter((m) => m.namespace === namespace).map((m) => ({ id: m.id, clusterId: m.clusterId, revision: m.revision }));
      const services = [...(this.cache.get(namespace) ?? [])].map(([name, c]) => ({ name, revision: c.revision, instances: c.instances }));
      return { namespace, markers, services };
    });
    this.checkpointSaving = (async () => {
      for (const { namespace, markers, services } of snapshots) {
        if (this.abort.signal.aborted) {
          this.checkpointStale.add(namespace);
          continue;
        }
        try {
          await store.save(namespace, markers, services);
          this.checkpointed.add(namespace);
          this.counts.checkpointsSaved++;
        } catch (err) {
          this.checkpointStale.add(namespace);
          this.log?.warn({ namespace, err: String(err) }, 'could not save the Cloud Map checkpoint of the namespace; retrying later');
        } finally {
          this.checkpointSavedAt.set(namespace, this.opts.clock.now());
        }
      }
    })().finally(() => (this.checkpointSaving = undefined));
  }

  /**
   * Lists every service (in the background: at 2 ListServices a second this takes a while at thousands of services).
   * Services it finds that were never read are read at the next poll, and from then on are checked like the others.
   */
  private listForSweep(now: number): void {
    this.sweepListing = (async () => {
      let found = 0;
      for (const namespace of await this.namespaces()) {
        if (this.abort.signal.aborted) return;
        const namespaceId = await this.opts.registry.findNamespace(namespace);
        const listed = namespaceId === undefined ? [] : (await this.opts.registry.listServices(namespaceId)).map((s) => s.name);
        const cached = this.cache.get(namespace);
        const unread = listed.filter((service) => !cached?.has(service));
        if (unread.length > 0) markDirty(this.dirty, namespace, unread);
        found += unread.length;
      }
      this.counts.resyncListings++;
      this.lastListing = { startedAt: now, durationMs: this.opts.clock.now() - now };
      this.log?.debug({ found, durationMs: this.lastListing.durationMs }, 'Cloud Map services listed for the resync');
    })().catch((err: unknown) => {
      this.sweepListingRetryAt = this.opts.clock.now() + FULL_RESYNC_RETRY_MS.max;
      this.log?.warn({ err: String(err) }, 'could not list Cloud Map services for the resync; retrying later');
    }).finally(() => {
      this.sweepListing = undefined;
    });
  }

  /** Every cached service, with instances or not. */
  private keys(): ServiceKey[] {
    return [...this.cache].flatMap(([namespace, services]) => [...services.keys()].map((service) => ({ namespace, service })));
  }

  /**
   * One step of the safety-net resync: the listing when due, and the checks the pace or the services' last reads call
   * for (M6), longest unread first. A check reads the instances every n-th time, since revisions can repeat.
   */
  private async sweepStep(): Promise<void> {
    const now = this.opts.clock.now();
    const pace = { intervalMs: this.opts.fullResyncIntervalMs, budgetPerMinute: this.opts.resyncBudgetPerMinute, stepMs: this.opts.pollIntervalMs };
    const keys = this.keys();
    if (this.sweepListing === undefined && now >= this.sweepListingRetryAt && listingDue(this.lastListing, now, keys.length, pace)) this.listForSweep(now);
    const lastReads = keys.map((k) => this.readAt(k.namespace, k.service) ?? Number.NEGATIVE_INFINITY);
    const due = dueChecks(this.sweepCarry, now - this.lastSweepStep, lastReads, now, pace);
    this.sweepCarry = due.carry;
    this.lastSweepStep = now;
    const batch = due.checks.map((i) => keys[i]!);
    this.counts.resyncChecks += batch.length;
    const failures = await forEachLimited(batch, this.opts.concurrency, (s) => {
      const deep = (this.cache.get(s.namespace)?.get(s.service)?.revisionChecks ?? 0) + 1 >= this.opts.deepResyncEvery;
      return this.refreshService(s.namespace, s.service, deep).then(() => {});
    });
    for (const { item } of failures) this.requeue(item.namespace, [item.service]);
  }

  /**
   * Every service of a namespace where a writer that does not bump the marker has instances (v0.3.1 during a
   * migration), checked each interval by revision (DiscoverInstancesRevision, 3,000/s per account), so its changes
   * show within seconds instead of at the resync; the cost is per such service, not per service (M6).
   */
  private async nonAnnouncingStep(): Promise<void> {
    const { nonAnnouncingPollIntervalMs, clock, concurrency } = this.opts;
    if (!(nonAnnouncingPollIntervalMs > 0) || clock.now() < this.nextNonAnnouncingCheck) return;
    this.nextNonAnnouncingCheck = clock.now() + nonAnnouncingPollIntervalMs;
    const namespaces = this.nonAnnouncingNamespaces();
    if (namespaces.size === 0) {
      this.nonAnnouncingListedAt.clear();
      return;
    }
    const watched = this.keys().filter((k) => namespaces.has(k.namespace));
    this.counts.nonAnnouncingChecks += watched.length;
    const failures = await forEachLimited(watched, concurrency, (s) => this.refreshService(s.namespace, s.service, false).then(() => {}));
    for (const { item } of failures) this.requeue(item.namespace, [item.service]);
    // Such a writer also creates services (v0.3.1 exporting a new Service) that no marker names, so one of these
    // namespaces, the one listed longest ago, is listed per interval (one ListServices page per 100 services) and what
    // is new is read at once. One, not all: ListServices is the scarcest quota (2/s per account, v0.3.1's too).
    const namespace = [...namespaces].sort((a, b) => (this.nonAnnouncingListedAt.get(a) ?? 0) - (this.nonAnnouncingListedAt.get(b) ?? 0))[0];
    for (const listed of this.nonAnnouncingListedAt.keys()) if (!namespaces.has(listed)) this.nonAnnouncingListedAt.delete(listed);
    if (namespace === undefined || this.abort.signal.aborted) return;
    this.nonAnnouncingListedAt.set(namespace, clock.now());
    const namespaceId = await this.opts.registry.findNamespace(namespace);
    if (namespaceId === undefined) return;
    this.counts.nonAnnouncingListings++;
    const cached = this.cache.get(namespace);
    const unread = (await this.opts.registry.listServices(namespaceId)).map((s) => s.name).filter((service) => !cached?.has(service));
    const failed = await forEachLimited(unread, concurrency, (service) => this.refreshService(namespace, service, true).then(() => {}));
    this.requeue(namespace, failed.map((f) => f.item));
  }
}
