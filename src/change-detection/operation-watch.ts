// Registrations no marker announced, wherever they land (M6, M3). A writer that never bumps the change marker (the AWS
// controller v0.3.1) is watched service by service only where its instances were seen (non-announcing-writers.ts);
// its first export into a namespace where it has none, a new namespace included, would wait for the paced resync.
// Cloud Map's ListOperations names every instance registration of the account, whoever made it: one listing per
// interval of the registrations that succeeded since the last one, GetOperation for each new one this process did not
// submit (its SERVICE target), and the service it names is read at the next poll unless it was read since.
import { forEachLimited } from '../runtime/for-each-limited.ts';
import type { ServiceCache } from './service-cache.ts';
import { KUBERNETES_NAMESPACE, type ServiceReads } from './service-reads.ts';
import type { WatchContext } from './watch-options.ts';

/** Each listing reaches this far back before the last one began: UPDATE_DATE is in seconds, clocks differ. */
const OVERLAP_MS = 2_000;
/** Operations described per listing at most, newest first; the rest wait for the next (GetOperation is 100/s per account). */
const DESCRIBED_PER_LISTING = 20;
/** A read of the service this long after its registration settled shows it (Cloud Map reads are eventually consistent). */
const SETTLED_MS = 2_000;

interface Found {
  readonly id: string;
  /** When this watcher first listed it (its clock). */
  readonly at: number;
}

export class OperationWatch {
  readonly #ctx: WatchContext;
  readonly #cache: ServiceCache;
  readonly #reads: ServiceReads;
  #nextListing = 0;
  /** When the last listing began; undefined: none since the first read began (`from`). */
  #listedFrom: number | undefined;
  /** Operations listed, by id, with when first listed: each is described once. */
  readonly #listed = new Map<string, number>();
  /** Listed, not described yet. */
  #backlog: Found[] = [];

  constructor(ctx: WatchContext, cache: ServiceCache, reads: ServiceReads) {
    this.#ctx = ctx;
    this.#cache = cache;
    this.#reads = reads;
  }

  /** A new start: nothing is listed before its first read. */
  restart(): void {
    this.#listedFrom = undefined;
  }

  /** The first read began at `from`: what settled before is in it. */
  begin(from: number): void {
    this.#listedFrom = from;
    this.#nextListing = 0;
  }

  /**
   * One listing when due, then the newest operations found described, and what they name marked to read. Operations
   * listed longer ago than the resync interval are left to the resync.
   */
  async step(): Promise<void> {
    const { opts, counts } = this.#ctx;
    const { operationsPollIntervalMs, clock, operations, registry, fullResyncIntervalMs } = opts;
    const now = clock.now();
    if (!(operationsPollIntervalMs > 0) || now < this.#nextListing || this.#listedFrom === undefined) return;
    this.#nextListing = now + operationsPollIntervalMs;
    const ids = await operations.succeededSince(this.#listedFrom - OVERLAP_MS, ['REGISTER_INSTANCE']);
    counts.operationListings++;
    this.#listedFrom = now;
    for (const id of ids) {
      if (this.#listed.has(id) || operations.submittedHere(id)) continue;
      this.#listed.set(id, now);
      this.#backlog.push({ id, at: now });
    }
    // Past the overlap an operation is not listed again; past the resync interval the resync has read its service.
    for (const [id, at] of this.#listed)
      if (now - at > Math.max(fullResyncIntervalMs, 4 * (OVERLAP_MS + operationsPollIntervalMs)))
        this.#listed.delete(id);
    this.#backlog = this.#backlog.filter((f) => now - f.at <= fullResyncIntervalMs);
    const batch = this.#backlog.splice(Math.max(0, this.#backlog.length - DESCRIBED_PER_LISTING)).reverse();
    const failures = await forEachLimited(batch, opts.concurrency, async ({ id }) => {
      const { service: serviceId, updatedAt } = await operations.describe(id);
      counts.operationsDescribed++;
      const named = serviceId === undefined ? undefined : await registry.nameOfService(serviceId);
      // Gone since, or the change markers' own namespace (heartbeats, markers, notices).
      if (named === undefined || !KUBERNETES_NAMESPACE.test(named.namespace)) return;
      const readAt = this.#cache.readAt(named.namespace, named.service);
      if (readAt !== undefined && updatedAt !== undefined && readAt >= updatedAt + SETTLED_MS) return;
      counts.operationReads++;
      this.#reads.markDirty(named.namespace, [named.service]);
    });
    // Described again at the next listing.
    this.#backlog.push(...failures.map((f) => f.item));
  }
}
