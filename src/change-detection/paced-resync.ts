// The safety-net resync after the first read (M6), paced by resync-pace.ts: services are checked one by one, longest
// unread first (revision first; every few checks of a service, its instances regardless of revision, since revisions
// can repeat), every service within the resync interval of its previous read while that fits the call budget, slower
// beyond; every namespace's services are listed again once an interval, so a service no marker named is read within
// one interval of its creation. This catches writers that never bump the marker (the AWS controller v0.3.1), vanished
// services and anything missed, at a cost that does not grow with the number of services.
import { forEachLimited } from '../runtime/for-each-limited.ts';
import { dueChecks, listingDue, type ResyncPace } from './resync-pace.ts';
import type { ServiceCache } from './service-cache.ts';
import type { ServiceReads } from './service-reads.ts';
import type { WatchContext, WatchSettings } from './watch-options.ts';

/** A listing that failed is tried again after this. */
const LISTING_RETRY_MS = 30_000;

/** The resync's pace under these settings. */
export function paceOf(opts: WatchSettings): ResyncPace {
  return {
    intervalMs: opts.fullResyncIntervalMs,
    budgetPerMinute: opts.resyncBudgetPerMinute,
    stepMs: opts.pollIntervalMs,
  };
}

export class PacedResync {
  readonly #ctx: WatchContext;
  readonly #cache: ServiceCache;
  readonly #reads: ServiceReads;
  /** The listing of every namespace's services for the resync, while it runs. */
  #listing: Promise<void> | undefined;
  #listingRetryAt = 0;
  /** When the last complete listing began and how long it took; undefined: none since start. */
  #lastListing: { startedAt: number; durationMs: number } | undefined;
  #carry = 0;
  #lastStep = 0;

  constructor(ctx: WatchContext, cache: ServiceCache, reads: ServiceReads) {
    this.#ctx = ctx;
    this.#cache = cache;
    this.#reads = reads;
  }

  /** A new start: no listing yet, no checks owed. */
  restart(): void {
    this.#lastListing = undefined;
    this.#carry = 0;
  }

  /** The first read completed at `now`; `listedFrom`: it listed every service, beginning then. */
  begin(now: number, listedFrom: number | undefined): void {
    this.#lastStep = now;
    // Listed just now: the next listing is an interval away.
    if (listedFrom !== undefined) this.#lastListing = { startedAt: listedFrom, durationMs: now - listedFrom };
  }

  /**
   * One step of the safety-net resync: the listing when due, and the checks the pace or the services' last reads call
   * for (M6), longest unread first. A check reads the instances every n-th time, since revisions can repeat.
   */
  async step(): Promise<void> {
    const { opts, counts } = this.#ctx;
    const now = opts.clock.now();
    const pace = paceOf(opts);
    const keys = this.#cache.keys();
    if (
      this.#listing === undefined &&
      now >= this.#listingRetryAt &&
      listingDue(this.#lastListing, now, keys.length, pace)
    )
      this.#listAll(now);
    const lastReads = keys.map((k) => this.#cache.readAt(k.namespace, k.service) ?? Number.NEGATIVE_INFINITY);
    const due = dueChecks(this.#carry, now - this.#lastStep, lastReads, now, pace);
    this.#carry = due.carry;
    this.#lastStep = now;
    const batch = due.checks.map((i) => keys[i]!);
    counts.resyncChecks += batch.length;
    const failures = await forEachLimited(batch, opts.concurrency, (s) => {
      const deep = (this.#cache.get(s.namespace, s.service)?.revisionChecks ?? 0) + 1 >= opts.deepResyncEvery;
      return this.#reads.refreshService(s.namespace, s.service, deep).then(() => {});
    });
    for (const { item } of failures) this.#reads.requeue(item.namespace, [item.service]);
  }

  /**
   * Lists every service (in the background: at 2 ListServices a second this takes a while at thousands of services).
   * Services it finds that were never read are read at the next poll, and from then on are checked like the others.
   */
  #listAll(now: number): void {
    const { opts, counts, log } = this.#ctx;
    this.#listing = (async () => {
      let found = 0;
      for (const namespace of await this.#reads.namespaces()) {
        if (this.#ctx.signal().aborted) return;
        const namespaceId = await opts.registry.findNamespace(namespace);
        const listed =
          namespaceId === undefined ? [] : (await opts.registry.listServices(namespaceId)).map((s) => s.name);
        const unread = listed.filter((service) => !this.#cache.has(namespace, service));
        if (unread.length > 0) this.#reads.markDirty(namespace, unread);
        found += unread.length;
      }
      counts.resyncListings++;
      this.#lastListing = { startedAt: now, durationMs: opts.clock.now() - now };
      log?.debug({ found, durationMs: this.#lastListing.durationMs }, 'Cloud Map services listed for the resync');
    })()
      .catch((err: unknown) => {
        this.#listingRetryAt = opts.clock.now() + LISTING_RETRY_MS;
        log?.warn({ err: String(err) }, 'could not list Cloud Map services for the resync; retrying later');
      })
      .finally(() => {
        this.#listing = undefined;
      });
  }
}
