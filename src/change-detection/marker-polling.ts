// Polling of the ClusterSet's change marker (M6): one DiscoverInstancesRevision of the marker service per poll, and
// only when it moved, one read of its instances. The markers there name what changed since the last read (read at the
// next poll); the notices of a coming change and the heartbeats that share the service are handed on. Whether the
// polls get an answer is Cloud Map's reachability.
import { CallCancelledError, LeaseLostError } from '../cloudmap/errors.ts';
import {
  changedNamespaces,
  MARKER_SERVICE,
  markerNamespaceName,
  parseMarker,
  type MarkerEntry,
} from './change-marker.ts';
import type { CloseWatch } from './close-watch.ts';
import type { Liveness } from './liveness.ts';
import type { ServiceReads } from './service-reads.ts';
import type { WatchContext } from './watch-options.ts';

/** Whether the last poll of the change marker got an answer; `since` is when that last changed (clock ms). */
export interface Reachability {
  readonly reachable: boolean;
  readonly since: number;
  /** The failure, while unreachable. */
  readonly error?: string;
}

export interface MarkerPollingParts {
  reads: ServiceReads;
  closeWatch: CloseWatch;
  liveness: Liveness;
  /** A marker of the namespace moved: its checkpoint no longer shows what the markers hold. */
  onNamespaceChanged: (namespace: string) => void;
}

export class MarkerPolling {
  readonly #ctx: WatchContext;
  readonly #parts: MarkerPollingParts;
  readonly #markerNamespace: string;
  /** Last DiscoverInstancesRevision of the marker service; null until read once. */
  #revision: number | undefined | null = null;
  #seen = new Map<string, MarkerEntry>();
  #reach: Reachability;

  constructor(ctx: WatchContext, parts: MarkerPollingParts) {
    this.#ctx = ctx;
    this.#parts = parts;
    this.#markerNamespace = markerNamespaceName(ctx.opts.identity.clustersetId);
    this.#reach = { reachable: true, since: ctx.opts.clock.now() };
  }

  /** Whether the marker service was read at least once. */
  get read(): boolean {
    return this.#revision !== null;
  }

  /** Every marker as last read. */
  markers(): IterableIterator<MarkerEntry> {
    return this.#seen.values();
  }

  /** A marker as last read. */
  marker(id: string): MarkerEntry | undefined {
    return this.#seen.get(id);
  }

  /** Whether this Cloud Map answered the last poll of the change marker. */
  get reachability(): Reachability {
    return this.#reach;
  }

  /** One poll, guarded: its outcome is this Cloud Map's reachability. `track` false: just record the baseline. */
  async pollGuarded(what: string, track: boolean): Promise<void> {
    this.#reached(await this.#ctx.guard(what, () => this.#poll(track)));
  }

  /** One DiscoverInstancesRevision; reads the markers only when it moved. */
  async #poll(track: boolean): Promise<void> {
    const { counts, opts } = this.#ctx;
    const { reads, closeWatch, liveness, onNamespaceChanged } = this.#parts;
    counts.polls++;
    const startedAt = opts.clock.now();
    const revision = await opts.instances.discoverRevision(this.#markerNamespace, MARKER_SERVICE);
    if (revision === this.#revision) {
      liveness.unchanged(startedAt);
      return;
    }
    counts.markerChanges++;
    const found =
      revision === undefined
        ? undefined
        : await opts.instances.discoverInstances(this.#markerNamespace, MARKER_SERVICE);
    const instances = found?.instances ?? [];
    const entries = instances.flatMap((i) => parseMarker(i) ?? []);
    for (const [namespace, services] of changedNamespaces(this.#seen, entries)) {
      onNamespaceChanged(namespace);
      if (track) reads.markDirty(namespace, services);
    }
    this.#seen = new Map(entries.map((e) => [e.id, e]));
    this.#revision = revision;
    closeWatch.noticed(instances, startedAt);
    liveness.observe(instances, startedAt);
  }

  /** Records the outcome of a marker poll (`failure` undefined: answered); calls back when reachability changed. */
  #reached(failure: unknown): void {
    // A call this process cut short (stopping) or did not send (a lost Lease) says nothing of whether Cloud Map answers.
    if (failure instanceof CallCancelledError || failure instanceof LeaseLostError) return;
    const { clock, onReachability } = this.#ctx.opts;
    const reachable = failure === undefined;
    if (reachable === this.#reach.reachable) return;
    this.#reach = reachable
      ? { reachable, since: clock.now() }
      : { reachable, since: clock.now(), error: failure instanceof Error ? String(failure) : JSON.stringify(failure) };
    try {
      onReachability?.(this.#reach);
    } catch (err) {
      this.#ctx.log?.error({ err: String(err) }, 'Cloud Map reachability callback failed');
    }
  }
}
