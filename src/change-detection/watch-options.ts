// What every part of the Cloud Map watcher shares: its options and their defaults, its counters, and the context of
// one start (the stop signal, progress for liveness, and how a step's failure is logged and retried).
import type { CloudMapInstances } from '../cloudmap/instances.ts';
import type { OperationWaiter } from '../cloudmap/operations.ts';
import type { Identity } from '../cloudmap/ownership.ts';
import type { CloudMapRegistry } from '../cloudmap/registry.ts';
import type { Logger } from '../observability/log.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import type { Reachability } from './marker-polling.ts';
import type { ServiceKey } from './service-cache.ts';
import type { CheckpointStore } from './warm-start.ts';

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
  /**
   * How often the account's instance registrations that succeeded since the last look are listed (ListOperations),
   * so that a writer that does not bump the marker is seen wherever it registers (operation-watch.ts); 0: never.
   */
  operationsPollIntervalMs?: number;
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

type Optional = 'logger' | 'knownServices' | 'onHeartbeat' | 'onReachability' | 'checkpoints';

/** The options with every default filled in. */
export type WatchSettings = Required<Omit<CloudMapWatcherOptions, Optional>> & Pick<CloudMapWatcherOptions, Optional>;

export function withDefaults(options: CloudMapWatcherOptions): WatchSettings {
  return {
    ...options,
    pollIntervalMs: options.pollIntervalMs ?? 750,
    fullResyncIntervalMs: options.fullResyncIntervalMs ?? 300_000,
    resyncBudgetPerMinute: options.resyncBudgetPerMinute ?? 45,
    nonAnnouncingPollIntervalMs: options.nonAnnouncingPollIntervalMs ?? 0,
    operationsPollIntervalMs: options.operationsPollIntervalMs ?? 0,
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
  /** Listings of the account's instance registrations (ListOperations, every page). */
  operationListings: number;
  /** Registrations this process did not submit, looked up (GetOperation). */
  operationsDescribed: number;
  /** Of those, the services marked to read because no read since showed them. */
  operationReads: number;
  /** First reads that took services from checkpoints (warm starts). */
  warmStarts: number;
  /** Services taken from checkpoints, over every warm start. */
  seededServices: number;
  /** Checkpoints of a namespace saved. */
  checkpointsSaved: number;
}

export function noStats(): WatcherStats {
  return {
    polls: 0,
    closePolls: 0,
    markerChanges: 0,
    namespaceScans: 0,
    fullResyncs: 0,
    resyncListings: 0,
    resyncChecks: 0,
    nonAnnouncingChecks: 0,
    nonAnnouncingListings: 0,
    operationListings: 0,
    operationsDescribed: 0,
    operationReads: 0,
    warmStarts: 0,
    seededServices: 0,
    checkpointsSaved: 0,
  };
}

/** What the parts of one watcher share. */
export interface WatchContext {
  readonly opts: WatchSettings;
  readonly counts: WatcherStats;
  readonly log: Logger | undefined;
  /** The signal of the current start: aborted once the watcher stops. */
  signal(): AbortSignal;
  /** The loop finished a step or a read of one service, failed or not (liveness). */
  progressed(): void;
  /** Runs one step; a failure is logged and returned (the step is retried at the next poll). */
  readonly guard: (what: string, step: () => Promise<void>) => Promise<unknown>;
}
