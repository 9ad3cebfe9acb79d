// What a previous process of this cluster left behind at start. A predecessor killed mid-write leaves operations
// pending (waited for, so the first read sees their outcome) and completed writes it never announced with a marker
// bump; if some are this cluster's, the peers are told after the first read by bumps of every namespace where this
// cluster has instances.
import { clusterTag } from '../core/instance-id.ts';
import type { ChangeMarkerWriter } from './change-marker-writer.ts';
import { unannouncedSince } from './change-marker.ts';
import type { MarkerPolling } from './marker-polling.ts';
import type { ServiceCache } from './service-cache.ts';
import type { ServiceReads } from './service-reads.ts';
import type { WatchContext } from './watch-options.ts';

/** Operations left pending at start that are looked at to tell whether a predecessor of this cluster left them. */
const OWN_OPERATION_PROBES = 20;
/** Writes older than this that a predecessor never announced are left to the safety-net resync. */
const UNANNOUNCED_MAX_AGE_MS = 3_600_000;

export class PredecessorWrites {
  readonly #ctx: WatchContext;
  readonly #cache: ServiceCache;
  readonly #markers: MarkerPolling;
  readonly #writer: ChangeMarkerWriter;
  /** Operations found pending at start were this cluster's: a predecessor was killed mid-write. */
  #ownPendingAtStart = false;
  /** Whether operations that succeeded since this cluster's last bump wrote its instances (settle). */
  #unannouncedAtStart: Promise<boolean> = Promise.resolve(false);

  constructor(ctx: WatchContext, cache: ServiceCache, markers: MarkerPolling, writer: ChangeMarkerWriter) {
    this.#ctx = ctx;
    this.#cache = cache;
    this.#markers = markers;
    this.#writer = writer;
  }

  /** Whether operations found pending at start were this cluster's (its checkpoints may lack their writes). */
  get ownPending(): boolean {
    return this.#ownPendingAtStart;
  }

  /**
   * Waits for the operations a predecessor left pending, and looks (alongside the first read) for instance operations
   * that succeeded since this cluster's last bump.
   */
  async settle(): Promise<void> {
    const { operations, identity, clock, settleTimeoutMs } = this.#ctx.opts;
    const { ids: pending, failed } = await operations.settleInFlight(settleTimeoutMs);
    const since = unannouncedSince(this.#markers.markers(), identity.clusterId, clock.now(), UNANNOUNCED_MAX_AGE_MS);
    this.#ownPendingAtStart = pending.length > 0 && (await this.#anyOwn(pending, since));
    this.#unannouncedAtStart = this.#findUnannounced(since, pending).catch((err: unknown) => {
      this.#ctx.log?.warn(
        { err: String(err) },
        'could not list the Cloud Map operations since the last marker bump; announcing every namespace this cluster writes in',
      );
      return true;
    });
    if (pending.length > 0) {
      this.#ctx.log?.info(
        { pending: pending.length, failed, ours: this.#ownPendingAtStart },
        'waited for the Cloud Map operations a previous process left pending before the first read',
      );
    }
  }

  /**
   * After the first read: if a predecessor left writes of this cluster pending or unannounced, the peers are told,
   * and the namespaces taken from checkpoints (`seeded`) where this cluster has instances are compared by revision at
   * the next poll, since those writes may be missing from its checkpoints.
   */
  async announceAfterFirstRead(reads: ServiceReads, seeded: ReadonlySet<string>): Promise<void> {
    if (this.#ownPendingAtStart || (await this.#unannouncedAtStart)) {
      this.#announceOwnNamespaces();
      for (const namespace of this.#ownNamespaces()) if (seeded.has(namespace)) reads.markDirty(namespace, 'all');
    }
    this.#ownPendingAtStart = false;
    this.#unannouncedAtStart = Promise.resolve(false);
  }

  /**
   * Whether this cluster wrote instances it may not have announced. Only the pending operations must be settled before
   * the first read; this runs alongside it, since listing the account's operations of the last hour (every cluster's)
   * can take a while. A cluster that never bumped its marker needs no listing: whatever it owns is announced.
   */
  async #findUnannounced(since: number, pending: readonly string[]): Promise<boolean> {
    const { operations, identity } = this.#ctx.opts;
    if (![...this.#markers.markers()].some((m) => m.clusterId === identity.clusterId)) return true;
    const recent = (await operations.succeededSince(since)).filter((id) => !pending.includes(id));
    const ours = recent.length > 0 && (await this.#anyOwn(recent, since));
    if (recent.length > 0)
      this.#ctx.log?.info(
        { recent: recent.length, ours },
        "looked at the Cloud Map operations that succeeded since this cluster's last marker bump",
      );
    return ours;
  }

  /**
   * Whether any of these operations wrote an instance of this cluster (ids end with its tag) and was submitted after
   * `since` — writers announce at submission, so one submitted before the last bump was announced, even if it finished
   * after it. Asks for at most OWN_OPERATION_PROBES of them: a killed predecessor's operations are many, so the first
   * ones tell.
   */
  async #anyOwn(operationIds: readonly string[], since: number): Promise<boolean> {
    const { operations, identity } = this.#ctx.opts;
    const tag = `-${clusterTag(identity)}`;
    for (const id of operationIds.slice(0, OWN_OPERATION_PROBES)) {
      const { instance, submittedAt } = await operations.describe(id);
      if (instance?.endsWith(tag) && (submittedAt === undefined || submittedAt > since)) return true;
    }
    return false;
  }

  /**
   * Operations a killed predecessor left pending completed without its marker bump: tell the peers to look at every
   * namespace where this cluster has instances (they compare revisions there).
   */
  #announceOwnNamespaces(): void {
    for (const namespace of this.#ownNamespaces()) {
      this.#writer
        .markChanged(namespace)
        .catch((err: unknown) =>
          this.#ctx.log?.warn({ namespace, err: String(err) }, 'could not bump the change marker after a restart'),
        );
    }
  }

  /** The namespaces where this cluster has instances, as last read. */
  #ownNamespaces(): string[] {
    return this.#cache.namespacesOf(this.#ctx.opts.identity.clusterId);
  }
}
