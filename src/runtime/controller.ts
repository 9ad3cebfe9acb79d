// A controller in the manner of controller-runtime's: event sources (informers, channels) are mapped to keys, the keys
// go into a rate-limited work queue (work-queue.ts), and a reconciler is handed one key at a time. Built with
// controller-builder.ts, which names the sources and their key mappings; this file is what runs.
// Lifecycle:
// - watch(): subscribes to every source. Keys mapped before start() go to `whileStarting` (or are dropped): a
//   controller is started once what it reconciles from has been read, and its owner then queues every key it needs
//   (requeue);
// - start(): from then on every mapped key is queued;
// - stop(): unsubscribes, stops taking keys and resolves once the reconciles in flight have finished.
// Each reconcile is counted and timed by result (`observeReconcile`); one that fails is retried with backoff by the
// queue, and one cut short by a stop (`cancelled`) counts as neither success nor failure.
import type { Logger } from '../observability/log.ts';
import type { BackoffPolicy } from './backoff.ts';
import { WorkQueue, type WorkQueueMetrics } from './work-queue.ts';

/**
 * Something that tells of changes: `emit(event, resync)` for each one, `resync` when it comes from a periodic pass
 * over everything (queued behind every change, `WorkQueue.addLow`). Returns a function that unsubscribes.
 */
export interface EventSource<E> {
  subscribe(emit: (event: E, resync: boolean) => void): () => void;
}

/** The keys an event concerns; none when it concerns nothing this controller reconciles. */
export type KeyMapping<E, K> = (event: E) => Iterable<K>;

/** One source with its key mapping, as the builder collects them. */
export interface Watch<K> {
  subscribe(add: (key: K, resync: boolean) => void): () => void;
}

/** Counts and durations of reconciles, and the queue's hooks; labelled by controller name. */
export interface ControllerMetrics {
  readonly workQueue: WorkQueueMetrics;
  observeReconcile(controller: string, result: 'success' | 'error', seconds: number): void;
}

export interface ControllerOptions<K> {
  /** Label of the queue, the metrics and the logs. */
  name: string;
  watches: readonly Watch<K>[];
  reconcile: (key: K) => Promise<void>;
  /** Keys reconciled at once (different keys; one key is never reconciled twice at a time). */
  concurrency: number;
  /** Awaited before each reconcile (for example until every cache is current again). */
  reconcileWhen?: () => Promise<void>;
  /** Keys mapped after watch() and before start(); dropped when not set. */
  whileStarting?: (key: K) => void;
  /** An error that only means a stop cut the reconcile short: not counted, not retried. */
  cancelled?: (err: unknown) => boolean;
  /** Aborted when the controller's owner stops: a reconcile that waited in `reconcileWhen` then does not start. */
  signal?: AbortSignal;
  toKey?: (key: K) => string;
  backoff?: BackoffPolicy;
  metrics?: ControllerMetrics;
  logger?: Logger;
}

export class Controller<K> {
  readonly name: string;
  readonly #o: ControllerOptions<K>;
  readonly #queue: WorkQueue<K>;
  readonly #unsubscribe: Array<() => void> = [];
  #started = false;
  #stopped = false;

  constructor(o: ControllerOptions<K>) {
    this.name = o.name;
    this.#o = o;
    this.#queue = new WorkQueue<K>({
      name: o.name,
      concurrency: o.concurrency,
      handler: (key) => this.#reconcile(key),
      ...(o.toKey ? { toKey: o.toKey } : {}),
      ...(o.backoff ? { backoff: o.backoff } : {}),
      ...(o.metrics ? { metrics: o.metrics.workQueue } : {}),
      ...(o.logger ? { logger: o.logger } : {}),
    });
  }

  /** Whether keys wait or are being reconciled, and when the queue last made progress (for liveness). */
  get progress(): { busy: boolean; progressAt: number } {
    return this.#queue.progress;
  }

  /** Subscribes to every source; idempotent. */
  watch(): void {
    if (this.#unsubscribe.length > 0 || this.#stopped) return;
    for (const w of this.#o.watches) this.#unsubscribe.push(w.subscribe((key, resync) => this.#mapped(key, resync)));
  }

  /** Queues every key the sources map to from now on. */
  start(): void {
    if (!this.#stopped) this.#started = true;
  }

  /** Queues `key` if started (a key asked for from outside the sources: a write of another controller). */
  add(key: K): void {
    if (this.#started) this.#queue.add(key);
  }

  /** Queues each of `keys`, in order, if started. */
  requeue(keys: Iterable<K>): void {
    for (const key of keys) this.add(key);
  }

  /** Queues `key` after `ms` (the earliest schedule wins). */
  addAfter(key: K, ms: number): void {
    if (this.#started) this.#queue.addAfter(key, ms);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#started = false;
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    await this.#queue.shutdown();
  }

  #mapped(key: K, resync: boolean): void {
    if (!this.#started) this.#o.whileStarting?.(key);
    else if (resync) this.#queue.addLow(key);
    else this.#queue.add(key);
  }

  async #reconcile(key: K): Promise<void> {
    await this.#o.reconcileWhen?.();
    if (this.#o.signal?.aborted) return;
    const started = performance.now();
    try {
      await this.#o.reconcile(key);
      this.#o.metrics?.observeReconcile(this.name, 'success', (performance.now() - started) / 1000);
    } catch (err) {
      if (this.#o.cancelled?.(err)) return;
      this.#o.metrics?.observeReconcile(this.name, 'error', (performance.now() - started) / 1000);
      throw err;
    }
  }
}
