// A keyed work queue in the manner of client-go's rate-limited workqueue, driving a handler with N workers:
// - a key waiting in the queue is there once, however often it is added (dedupe);
// - a key is handled by at most one worker at a time (per-service serialisation); added again while it is being
//   handled, it is handled once more afterwards;
// - up to `concurrency` different keys are handled in parallel, in the order they were added;
// - a handler that throws gets its key requeued after a per-key exponential backoff (`addRateLimited`), and one that
//   succeeds resets that backoff (`forget`);
// - `addAfter(key, ms)` schedules a key (the earliest schedule wins);
// - `addLow(key)` queues a key of a periodic pass (an informer's resync) behind every key `add` queued, so a change
//   made meanwhile is not handled after thousands of keys that most likely need nothing; `add` of a key waiting there
//   moves it to the front lane;
// - `shutdown()` stops taking work, drops what waits and resolves once the handlers in flight have finished;
// - `progress` tells liveness whether the queue has work and when a handler last finished (or the work arrived).
// Usage:
//   const queue = new WorkQueue<string>({ name: 'export', concurrency: 8, handler: (key) => reconcile(key) });
//   informer.addHandlers({ onAdd: (o) => queue.add(keyOf(o)), ... });
//   ...; await queue.shutdown();

import { createLogger, type Logger } from '../observability/log.ts';
import { errorText } from '../kube/api-error.ts';
import { backoffDelay, type BackoffPolicy } from './backoff.ts';

/** Hooks for metrics, all labelled by queue name; see src/worker/metrics.ts. */
export interface WorkQueueMetrics {
  /** Keys waiting in one lane: `normal` (add) or `low` (addLow: a periodic pass, behind every change). */
  depth(queue: string, lane: 'normal' | 'low', depth: number): void;
  added(queue: string): void;
  retried(queue: string): void;
  /** Time a key waited in the queue before a worker took it. */
  waited(queue: string, seconds: number): void;
  processed(queue: string, seconds: number, result: 'success' | 'error'): void;
}

/** Runs `fn` after `ms` and returns a function that cancels it; injectable so tests control time. */
export type Scheduler = (fn: () => void, ms: number) => () => void;

export const timerScheduler: Scheduler = (fn, ms) => {
  const t = setTimeout(fn, ms);
  // Pending retries alone must not keep a process alive that is otherwise done.
  t.unref();
  return () => clearTimeout(t);
};

/**
 * Longest stretch, in ms, of handlers run back to back before the queue lets timers and I/O in. A handler that needs no
 * I/O (a cached object already as desired) resolves in a microtask, and the next starts in the same turn of the event
 * loop: the first pass over 32,000 keys at 10,000 services held a worker's loop for seconds, long enough for its Lease
 * renewal to go unanswered.
 */
const SLICE_MS = 20;

export const DEFAULT_RETRY_BACKOFF: BackoffPolicy = { baseMs: 200, maxMs: 300_000, jitter: 0.2 };

export interface WorkQueueOptions<K> {
  /** Label of the metrics and logs. */
  name: string;
  /** How many different keys are handled at once. */
  concurrency: number;
  handler: (key: K) => Promise<void>;
  /** Identity of a key; defaults to String(key). Keys with the same identity are deduplicated. */
  toKey?: (key: K) => string;
  /** Per-key delay after failures; default 200 ms doubling to 5 min, 20 % jitter. */
  backoff?: BackoffPolicy;
  metrics?: WorkQueueMetrics;
  logger?: Logger;
  scheduler?: Scheduler;
  now?: () => number;
}

export class WorkQueue<K> {
  readonly name: string;
  readonly #opts: WorkQueueOptions<K>;
  readonly #toKey: (key: K) => string;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #schedule: Scheduler;
  /** Waiting keys in insertion order (a Map is an ordered, deduplicating queue), with their value and enqueue time. */
  readonly #queue = new Map<string, { key: K; since: number }>();
  /** Waiting keys of addLow, taken only when #queue is empty; a key is in at most one of the two. */
  readonly #low = new Map<string, { key: K; since: number }>();
  readonly #processing = new Set<string>();
  /** Keys added while being processed: handled again when the current run ends, in the lane asked for. */
  readonly #again = new Map<string, { key: K; low: boolean }>();
  readonly #delayed = new Map<string, { at: number; cancel: () => void }>();
  readonly #failures = new Map<string, number>();
  readonly #inFlight = new Set<Promise<void>>();
  #shuttingDown = false;
  #progressAt: number;
  /** When the current stretch of back-to-back handlers began (real time: it measures the event loop, not the work). */
  #sliceStart = performance.now();
  #yielding = false;

  constructor(opts: WorkQueueOptions<K>) {
    if (!(opts.concurrency >= 1))
      throw new Error(`work queue ${opts.name}: concurrency must be at least 1, got ${opts.concurrency}`);
    this.name = opts.name;
    this.#opts = opts;
    this.#toKey = opts.toKey ?? String;
    this.#log = (opts.logger ?? createLogger('workqueue')).child({ queue: opts.name });
    this.#now = opts.now ?? Date.now;
    this.#schedule = opts.scheduler ?? timerScheduler;
    this.#progressAt = this.#now();
  }

  /**
   * Whether keys wait or are being handled, and when a handler last finished or, if later, the queue last went from
   * idle to busy: a busy queue whose progressAt grows old has every worker stuck.
   */
  get progress(): { busy: boolean; progressAt: number } {
    return { busy: this.#processing.size > 0 || this.#waiting > 0, progressAt: this.#progressAt };
  }

  /** Keys waiting, in either lane (not counting those being handled or scheduled for later). */
  get depth(): number {
    return this.#waiting;
  }

  get #waiting(): number {
    return this.#queue.size + this.#low.size;
  }

  /** Keys being handled right now. */
  get processing(): number {
    return this.#processing.size;
  }

  /** Keys scheduled by addAfter/addRateLimited that are not due yet. */
  get scheduled(): number {
    return this.#delayed.size;
  }

  get isShuttingDown(): boolean {
    return this.#shuttingDown;
  }

  add(key: K): void {
    this.#add(key, false);
  }

  /** Adds `key` behind every key add() queued (see the header); a key already waiting in front stays there. */
  addLow(key: K): void {
    this.#add(key, true);
  }

  #add(key: K, low: boolean): void {
    if (this.#shuttingDown) return;
    const id = this.#toKey(key);
    this.#opts.metrics?.added(this.name);
    if (this.#processing.has(id)) {
      // Handled again afterwards, in front if any add() asked for it meanwhile.
      if (!low || !this.#again.has(id)) this.#again.set(id, { key, low });
      return;
    }
    if (low && this.#queue.has(id)) return;
    if (!low) this.#low.delete(id);
    this.#enqueue(id, key, low);
  }

  /** Adds `key` after `ms`; if it is already scheduled, the earlier time wins. */
  addAfter(key: K, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const id = this.#toKey(key);
    const at = this.#now() + ms;
    const existing = this.#delayed.get(id);
    if (existing && existing.at <= at) return;
    existing?.cancel();
    const cancel = this.#schedule(() => {
      this.#delayed.delete(id);
      this.add(key);
    }, ms);
    this.#delayed.set(id, { at, cancel });
  }

  /** Requeues `key` after its next backoff delay (the delay doubles with every call until `forget`). */
  addRateLimited(key: K): void {
    const id = this.#toKey(key);
    const failures = (this.#failures.get(id) ?? 0) + 1;
    this.#failures.set(id, failures);
    this.#opts.metrics?.retried(this.name);
    this.addAfter(key, backoffDelay(this.#opts.backoff ?? DEFAULT_RETRY_BACKOFF, failures));
  }

  /** Resets the backoff of `key` (after it was handled successfully). */
  forget(key: K): void {
    this.#failures.delete(this.#toKey(key));
  }

  /** How many times `key` has been requeued with backoff since it was last forgotten. */
  numRequeues(key: K): number {
    return this.#failures.get(this.#toKey(key)) ?? 0;
  }

  /** Stops taking work, drops waiting and scheduled keys, and resolves when every running handler has finished. */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    for (const d of this.#delayed.values()) d.cancel();
    this.#delayed.clear();
    this.#queue.clear();
    this.#low.clear();
    this.#again.clear();
    this.#reportDepth();
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  #pump(): void {
    while (!this.#shuttingDown && this.#processing.size < this.#opts.concurrency && this.#waiting > 0) {
      const lane = this.#queue.size > 0 ? this.#queue : this.#low;
      const [id, entry] = lane.entries().next().value!;
      lane.delete(id);
      this.#processing.add(id);
      this.#reportDepth();
      this.#opts.metrics?.waited(this.name, (this.#now() - entry.since) / 1000);
      const run = this.#run(id, entry.key);
      this.#inFlight.add(run);
      void run.finally(() => this.#inFlight.delete(run));
    }
  }

  async #run(id: string, key: K): Promise<void> {
    const started = this.#now();
    let result: 'success' | 'error' = 'success';
    try {
      await this.#opts.handler(key);
      this.forget(key);
    } catch (err) {
      result = 'error';
      this.#log.warn(
        { event: 'retry', key: id, err: errorText(err), attempt: (this.#failures.get(id) ?? 0) + 1 },
        'handler failed; requeueing with backoff',
      );
      if (!this.#shuttingDown) this.addRateLimited(key);
    } finally {
      this.#opts.metrics?.processed(this.name, (this.#now() - started) / 1000, result);
      this.#progressAt = this.#now();
      this.#processing.delete(id);
      if (this.#again.has(id)) {
        const again = this.#again.get(id)!;
        this.#again.delete(id);
        this.#enqueue(id, again.key, again.low);
      }
      this.#pumpAfterRun();
    }
  }

  #pumpAfterRun(): void {
    if (performance.now() - this.#sliceStart < SLICE_MS) return this.#pump();
    if (this.#yielding) return;
    this.#yielding = true;
    setImmediate(() => {
      this.#yielding = false;
      this.#sliceStart = performance.now();
      this.#pump();
    });
  }

  #enqueue(id: string, key: K, low: boolean): void {
    const lane = low ? this.#low : this.#queue;
    if (this.#shuttingDown || lane.has(id)) return;
    if (this.#waiting === 0 && this.#processing.size === 0) this.#progressAt = this.#now();
    lane.set(id, { key, since: this.#now() });
    this.#reportDepth();
    this.#pump();
  }

  #reportDepth(): void {
    this.#opts.metrics?.depth(this.name, 'normal', this.#queue.size);
    this.#opts.metrics?.depth(this.name, 'low', this.#low.size);
  }
}
