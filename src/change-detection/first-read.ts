// The first read of each start, retried with backoff until complete: every namespace (one paged ListNamespaces), and
// the instances of every service the caller knows of (knownServices; what a trusted checkpoint holds is taken from it
// instead, M9) or, without it, of every listed service (one paged ListServices per namespace).
import { forEachLimited } from '../runtime/for-each-limited.ts';
import { markDirty, type DirtyNamespaces } from './change-marker.ts';
import type { OperationWatch } from './operation-watch.ts';
import type { PacedResync } from './paced-resync.ts';
import type { PredecessorWrites } from './predecessor-writes.ts';
import type { ServiceCache } from './service-cache.ts';
import type { ServiceReads } from './service-reads.ts';
import type { WarmStart } from './warm-start.ts';
import type { WatchContext } from './watch-options.ts';

const RETRY_MS = { min: 1000, max: 30_000 };

export interface FirstReadParts {
  cache: ServiceCache;
  reads: ServiceReads;
  warmStart: WarmStart;
  predecessor: PredecessorWrites;
  resync: PacedResync;
  operationWatch: OperationWatch;
}

function pending(): { done: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const done = new Promise<void>((r) => (resolve = r));
  return { done, resolve };
}

/** `promise`, or a rejection once `signal` aborts: a stopping watcher does not wait for its caller's answer. */
function unlessStopped<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('the watcher stopped'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export class FirstRead {
  readonly #ctx: WatchContext;
  readonly #parts: FirstReadParts;
  #nextAttempt = 0;
  #failures = 0;
  #isSynced = false;
  #firstSync = pending();
  /**
   * Resolves once the first read listed the namespaces (or gave up, or the watcher stopped): the first heartbeat waits
   * for it, so that it finds the marker namespace in that listing instead of listing on its own (ListNamespaces is
   * 0.5/s per account: two at start made the first read wait seconds for a token).
   */
  #firstListing: { done: Promise<void>; resolve: () => void } = { done: Promise.resolve(), resolve: () => {} };
  /** The first read waits for the caller's knownServices: not stuck, however long the caller's lists take. */
  #awaitingKnown = false;

  constructor(ctx: WatchContext, parts: FirstReadParts) {
    this.#ctx = ctx;
    this.#parts = parts;
  }

  /** A new start: everything is read again; resolves once that read completed. */
  restart(): Promise<void> {
    this.#nextAttempt = 0;
    this.#isSynced = false;
    this.#firstListing = pending();
    this.#firstSync = pending();
    return this.#firstSync.done;
  }

  /** The watcher stops: nothing waits for the listing any more. */
  stop(): void {
    this.#firstListing.resolve();
  }

  /** True once the first read of this start completed. */
  get synced(): boolean {
    return this.#isSynced;
  }

  /** Whether the first read waits for the caller's knownServices (not stuck). */
  get waitingForCaller(): boolean {
    return this.#awaitingKnown;
  }

  /** Resolves once the first read listed the namespaces. */
  listed(): Promise<void> {
    return this.#firstListing.done;
  }

  /** Whether an attempt is due (not synced yet, and any backoff after a failed one over). */
  get due(): boolean {
    return !this.#isSynced && this.#ctx.opts.clock.now() >= this.#nextAttempt;
  }

  /** One attempt at the first read. */
  async read(): Promise<void> {
    const { opts, counts, log } = this.#ctx;
    const { cache, reads, warmStart, predecessor, resync, operationWatch } = this.#parts;
    const started = opts.clock.now();
    reads.takeDirty(); // covered by this read; marks arriving meanwhile stay for the next poll
    let failed = false;
    try {
      // Loaded while the namespaces are listed and the caller learns what it knows of (M9).
      if (opts.knownServices !== undefined) void warmStart.load();
      const namespaces = await reads.namespaces().finally(() => this.#firstListing.resolve());
      const ask = opts.knownServices;
      if (ask === undefined) {
        for (const namespace of namespaces)
          if ((await reads.scanNamespace(namespace, true)) === undefined) failed = true;
      } else {
        this.#awaitingKnown = true;
        const told = await unlessStopped(Promise.resolve().then(ask), this.#ctx.signal()).finally(() => {
          this.#awaitingKnown = false;
          this.#ctx.progressed();
        });
        const knownServices = [...told, ...cache.keys()];
        const plan = await warmStart.plan(namespaces, knownServices, predecessor.ownPending);
        // A service of a namespace Cloud Map does not have (a first start: nothing exported yet) has nothing to read.
        const toRead = plan?.read ?? knownServices.filter((k) => namespaces.has(k.namespace));
        const known = new Map(toRead.map((k) => [`${k.namespace}/${k.service}`, k]));
        const failures = await forEachLimited(known.values(), opts.concurrency, (k) =>
          reads.refreshService(k.namespace, k.service, true).then(() => {}),
        );
        failed = failures.length > 0;
        if (failed)
          log?.warn(
            { failed: failures.length, err: String(failures[0]!.error) },
            'could not read some Cloud Map services; retrying',
          );
        if (plan !== undefined && plan.announced.length > 0) {
          // Read because a marker named them: checked again like any marker-driven read (eventual consistency).
          const announced: DirtyNamespaces = new Map();
          for (const k of plan.announced) markDirty(announced, k.namespace, [k.service]);
          reads.recheckLater(announced);
        }
      }
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      this.#failures = failed ? this.#failures + 1 : 0;
      this.#nextAttempt =
        opts.clock.now() + Math.min(RETRY_MS.max, RETRY_MS.min * 2 ** Math.max(0, this.#failures - 1));
    }
    counts.fullResyncs++;
    const seeded = warmStart.seededNamespaces;
    log?.info(
      {
        namespaces: cache.namespaceCount,
        services: cache.services().length,
        durationMs: opts.clock.now() - started,
        complete: !failed,
        ...(seeded.size > 0 ? { fromCheckpoints: seeded.size } : {}),
      },
      seeded.size > 0
        ? 'Cloud Map read: what changed since the checkpoints, and what they do not hold'
        : 'Cloud Map read in full',
    );
    if (failed) return;
    this.#isSynced = true;
    resync.begin(opts.clock.now(), opts.knownServices === undefined ? started : undefined);
    operationWatch.begin(started);
    this.#firstSync.resolve();
    await predecessor.announceAfterFirstRead(reads, seeded);
  }
}
