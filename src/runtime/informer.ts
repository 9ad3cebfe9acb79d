// A self-healing informer: list, then watch from the list's resourceVersion, keeping an indexed cache and calling
// handlers for every change. Unlike client-node's ListWatch (which stops for good on any error other than 410), it
// never gives up while started:
// - 410 Gone / expired resourceVersion: relist from scratch; the cache diff turns the relist into
//   adds, updates and deletes, so handlers also hear about deletions they missed. A 410 proves the server answers, so
//   it relists at once even after a run of failures (an apiserver back from a restart); only repeated 410s back off.
// - any other failure (refused, reset, 5xx, 403): reconnect after exponential backoff with jitter, watching from the
//   last resourceVersion seen (a stale one ends in 410 and a relist). Once per run of failures the backoff ends early
//   when a request on the same client is answered again after going unanswered (KubeClient.onAnsweredAgain): the
//   apiserver is back. A 429 (a starting apiserver's watch cache, API priority and fairness) is retried after 1 s, as
//   its Retry-After asks.
// - from a failure until the next list or watch the server accepts, the cache is not current (isCurrent()): writers
//   that compare it with what they want would repeat writes the cache cannot show them yet.
// - a watch the server ends (timeoutSeconds, 2–4 min): watch again at once from the last resourceVersion. A watch that
//   stays silent 30 s past its timeoutSeconds is a dead connection (no FIN/RST ever came) and counts as a failure.
//   (Quiet watches get no bookmarks from the apiserver's cache before their deadline, so silence alone is normal.)
// - every `resyncMs`, every cached object is re-delivered to onUpdate(obj, obj) so a handler that dropped work (a
//   failed reconcile that was forgotten) catches up.
// Each reconnect and relist is one JSON log line with the resource and the error.
//
// Plain and reusable: the worker and the webhook both use it. Usage:
//   const services = createInformer<Service>({ kubeConfig, path: resourcePath(SERVICES), resyncMs: 300_000,
//     trim: keepFields('spec') });   // optional: the cache keeps only metadata and spec (src/runtime/trim.ts)
//   services.addHandlers({ onAdd: (s) => ..., onUpdate: (s, old) => ..., onDelete: (s) => ... });
//   services.start(); await services.waitForSync();
//   services.get('demo', 'nginx'); services.list('demo'); services.listByLabel(LABEL_SERVICE_NAME, 'nginx', 'demo');
//   await services.stop();

import { createLogger, type Logger } from '../observability/log.ts';
import { errorText, isGone, KubeApiError } from '../kube/api-error.ts';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff.ts';
import { kubeClientFor, type KubeClient, type WatchEvent } from '../kube/client.ts';
import { ObjectCache, type CacheChange } from './object-cache.ts';
import type { KubeObject } from '../kube/resources.ts';
import type { ObjectTrim } from './trim.ts';
import type { KubeAccess } from '../kube/kube-access.ts';

export interface InformerHandlers<T> {
  onAdd?(object: T): void;
  /** Also called with object === old on each periodic resync. */
  onUpdate?(object: T, old: T): void;
  /** Receives the object's last known state. */
  onDelete?(object: T): void;
}

/** Hooks for metrics; see src/worker/metrics.ts. */
export interface InformerMetrics {
  restarted(resource: string, reason: 'relist' | 'reconnect'): void;
}

export interface InformerOptions<T extends KubeObject = KubeObject> {
  kubeConfig: KubeAccess;
  /** Collection path: `resourcePath(SERVICES)` for all namespaces, `resourcePath(SERVICES, 'demo')` for one. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Period of the re-delivery of every cached object to onUpdate; 0 turns it off. */
  resyncMs: number;
  /** Backoff between failed attempts; default 500 ms doubling to 10 s, half jittered. */
  backoff?: BackoffPolicy;
  logger?: Logger;
  metrics?: InformerMetrics;
  /** What the cache keeps of each object (src/runtime/trim.ts); default: all of it. */
  trim?: ObjectTrim<T>;
}

export interface Informer<T extends KubeObject> {
  readonly path: string;
  /** Starts listing and watching; handlers added before start see the initial list as adds. */
  start(): void;
  /** Stops the watch and the resync; the cache keeps its last contents. */
  stop(): Promise<void>;
  /** True once the first list has been stored and delivered. */
  hasSynced(): boolean;
  /** Resolves once synced; rejects if the informer is stopped first or `signal` aborts. */
  waitForSync(signal?: AbortSignal): Promise<void>;
  /** True while the cache follows the server: synced, and no list or watch failed since the last one that worked. */
  isCurrent(): boolean;
  /** Resolves once current; rejects if the informer is stopped first or `signal` aborts. */
  waitUntilCurrent(signal?: AbortSignal): Promise<void>;
  /** Adds handlers; returns a function that removes them. */
  addHandlers(handlers: InformerHandlers<T>): () => void;
  /** '' (or undefined) as namespace for cluster-scoped objects. */
  get(namespace: string | undefined, name: string): T | undefined;
  list(namespace?: string): T[];
  listByLabel(key: string, value: string, namespace?: string): T[];
  listBySelector(selector: Readonly<Record<string, string>>, namespace?: string): T[];
  /** resourceVersion of the last list or event applied to the cache. */
  lastResourceVersion(): string;
  /**
   * Caches an object as one of our own writes returned it, if newer than the cached copy and than what the watch has
   * delivered; handlers hear of it when the watch delivers that version, as of any other change.
   */
  observe(written: T): void;
}

// Capped at 10 s: after an apiserver outage the reconcilers wait for current caches, so a long last sleep is a long
// pause of all reconciling (one list or watch call per kind every 5–10 s is no load for an apiserver).
export const DEFAULT_INFORMER_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 10_000, jitter: 0.5 };

/** A collection as the apiserver lists it: the items carry no apiVersion or kind, the list does. */
interface ObjectList<T> {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

/**
 * Items per list page, as client-go's pager asks. A page is held whole while it is parsed; each page after the first
 * costs the apiserver a read from etcd (its watch cache serves only a list's first page).
 */
const LIST_PAGE_SIZE = 500;

interface Status {
  code?: number;
  reason?: string;
  message?: string;
}

/**
 * A watch from a resourceVersion the server no longer has is accepted (200) and then ended by an in-stream 410; one
 * that stayed open this long without that, or delivered an event, is following the server again.
 */
const WATCH_SETTLED_MS = 1000;

/** The apiserver's Retry-After for a 429. */
const TOO_MANY_REQUESTS_RETRY_MS = 1000;

interface Waiter {
  resolve(): void;
  reject(err: Error): void;
}

/** Raised inside the watch loop when the server reports 410 in-stream: relist. */
class WatchExpired extends Error {}

class SelfHealingInformer<T extends KubeObject> implements Informer<T> {
  readonly path: string;
  readonly #client: KubeClient;
  readonly #opts: InformerOptions<T>;
  readonly #trim: ObjectTrim<T>;
  readonly #log: Logger;
  readonly #cache = new ObjectCache<T>();
  readonly #handlers = new Set<InformerHandlers<T>>();
  readonly #stop = new AbortController();
  #resourceVersion = '';
  /** Consecutive failures; reset by a successful list, a watch event, or a watch open for WATCH_SETTLED_MS. */
  #failures = 0;
  /** The last failure was a 410: the next one in a row backs off. */
  #lastExpired = false;
  #synced = false;
  #started = false;
  #loop: Promise<void> | undefined;
  /** Ends the current backoff sleep early; used at most once per run of failures. */
  #wake: AbortController | undefined;
  #wakeable = true;
  #removeAnsweredListener: (() => void) | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  readonly #syncWaiters = new Set<Waiter>();
  readonly #currentWaiters = new Set<Waiter>();

  constructor(opts: InformerOptions<T>) {
    this.path = opts.path;
    this.#opts = opts;
    this.#trim = opts.trim ?? ((o) => o);
    this.#client = kubeClientFor(opts.kubeConfig);
    this.#log = (opts.logger ?? createLogger('informer')).child({ resource: opts.path, cluster: this.#client.cluster });
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#removeAnsweredListener = this.#client.onAnsweredAgain(() => {
      if (this.#wake === undefined || !this.#wakeable) return;
      this.#wakeable = false;
      this.#wake.abort();
    });
    this.#loop = this.#run();
    if (this.#opts.resyncMs > 0) {
      this.#resyncTimer = setInterval(() => this.#resync(), this.#opts.resyncMs);
      this.#resyncTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#removeAnsweredListener?.();
    clearInterval(this.#resyncTimer);
    for (const w of this.#syncWaiters) w.reject(new Error(`informer for ${this.path} stopped before its first list`));
    this.#syncWaiters.clear();
    for (const w of this.#currentWaiters) w.reject(new Error(`informer for ${this.path} stopped while not current`));
    this.#currentWaiters.clear();
    await this.#loop;
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    return this.#wait(this.#synced, this.#syncWaiters, `the first list of ${this.path}`, signal);
  }

  isCurrent(): boolean {
    return this.#synced && this.#failures === 0;
  }

  waitUntilCurrent(signal?: AbortSignal): Promise<void> {
    return this.#wait(this.isCurrent(), this.#currentWaiters, `${this.path} to be current`, signal);
  }

  #wait(done: boolean, waiters: Set<Waiter>, what: string, signal?: AbortSignal): Promise<void> {
    if (done) return Promise.resolve();
    if (this.#stop.signal.aborted) return Promise.reject(new Error(`informer for ${this.path} is stopped`));
    if (signal?.aborted) return Promise.reject(new Error(`gave up waiting for ${what}`));
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      waiters.add(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          waiters.delete(waiter);
          reject(new Error(`gave up waiting for ${what}`));
        },
        { once: true },
      );
    });
  }

  /** The server answered a list or accepted a watch: the failure run is over. */
  #succeeded(): void {
    this.#failures = 0;
    this.#lastExpired = false;
    this.#wakeable = true;
    if (!this.#synced) return;
    for (const w of this.#currentWaiters) w.resolve();
    this.#currentWaiters.clear();
  }

  addHandlers(handlers: InformerHandlers<T>): () => void {
    this.#handlers.add(handlers);
    return () => this.#handlers.delete(handlers);
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.#cache.get(namespace, name);
  }

  list(namespace?: string): T[] {
    return this.#cache.list(namespace);
  }

  listByLabel(key: string, value: string, namespace?: string): T[] {
    return this.#cache.listByLabel(key, value, namespace);
  }

  listBySelector(selector: Readonly<Record<string, string>>, namespace?: string): T[] {
    return this.#cache.listBySelector(selector, namespace);
  }

  lastResourceVersion(): string {
    return this.#resourceVersion;
  }

  observe(written: T): void {
    if (this.#synced) this.#cache.observe(this.#trim(written), this.#resourceVersion);
  }

  async #run(): Promise<void> {
    const policy = this.#opts.backoff ?? DEFAULT_INFORMER_BACKOFF;
    let needList = true;
    while (!this.#stop.signal.aborted) {
      try {
        if (needList) {
          await this.#list();
          needList = false;
        }
        await this.#watch();
      } catch (err) {
        if (this.#stop.signal.aborted) break;
        const expired = err instanceof WatchExpired || isGone(err);
        this.#failures++;
        if (expired) needList = true;
        const delayMs =
          expired && !this.#lastExpired
            ? 0
            : err instanceof KubeApiError && err.statusCode === 429
              ? Math.min(TOO_MANY_REQUESTS_RETRY_MS, backoffDelay(policy, this.#failures))
              : backoffDelay(policy, this.#failures);
        this.#lastExpired = expired;
        const event = expired ? 'relist' : 'reconnect';
        this.#opts.metrics?.restarted(this.path, event);
        this.#log.warn(
          { event, err: errorText(err), attempt: this.#failures, delayMs, resourceVersion: this.#resourceVersion },
          expired ? 'resourceVersion expired; relisting' : 'list or watch failed; reconnecting',
        );
        this.#wake = new AbortController();
        await sleep(delayMs, AbortSignal.any([this.#stop.signal, this.#wake.signal]));
        this.#wake = undefined;
      }
    }
  }

  async #list(): Promise<void> {
    const items: T[] = [];
    const started = performance.now();
    let list: ObjectList<T>;
    let token: string | undefined;
    // Consistent (no resourceVersion) rather than resourceVersion=0: a new leader must not reconcile from a cache behind
    // its predecessor's writes. Paged: each page is parsed whole and trimmed before the next is asked for, so a start
    // holds one page as received on top of the trimmed cache (docs/design.md, "Runtime: V8 compilers and list parsing").
    do {
      list = await this.#client.request<ObjectList<T>>({
        method: 'GET',
        path: this.path,
        signal: this.#stop.signal,
        query: {
          labelSelector: this.#opts.labelSelector,
          fieldSelector: this.#opts.fieldSelector,
          limit: LIST_PAGE_SIZE,
          continue: token,
        },
      });
      for (const item of list.items ?? []) items.push(this.#trim(item));
      token = list.metadata?.continue || undefined;
    } while (token !== undefined && !this.#stop.signal.aborted);
    // List items carry no apiVersion/kind; fill them in so handlers see the same shape as from the watch.
    const kind = list.kind?.replace(/List$/, '');
    for (const item of items) {
      item.apiVersion = list.apiVersion;
      item.kind = kind;
    }
    const resourceVersion = list.metadata?.resourceVersion ?? '';
    if (this.#stop.signal.aborted) return;
    const changes = this.#cache.replace(items);
    this.#resourceVersion = resourceVersion;
    // The first list is what a start waits for (M9): how long each kind took is worth a line at info.
    const listed = {
      event: 'listed',
      count: items.length,
      changes: changes.length,
      durationMs: Math.round(performance.now() - started),
      resourceVersion,
    };
    if (this.#synced) this.#log.debug(listed, 'listed');
    else this.#log.info(listed, 'first list done');
    this.#deliver(changes);
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters) w.resolve();
      this.#syncWaiters.clear();
    }
    this.#succeeded();
  }

  /** One watch from the last resourceVersion, until the server ends it; throws on failure or in-stream 410. */
  async #watch(): Promise<void> {
    // Randomised so renewals of many informers and replicas spread out; short enough that a dead connection is
    // noticed within minutes.
    const timeoutSeconds = 120 + Math.floor(Math.random() * 120);
    // stop() may have come while the list before this watch was finishing: its abort event has fired already.
    if (this.#stop.signal.aborted) return;
    const abort = new AbortController();
    const onStop = () => abort.abort();
    this.#stop.signal.addEventListener('abort', onStop, { once: true });
    let failure: Error | undefined;
    let delivered = false;
    let settled: NodeJS.Timeout | undefined;
    const started = Date.now();
    try {
      await this.#client.watch<T | Status>(
        this.path,
        {
          resourceVersion: this.#resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds,
          labelSelector: this.#opts.labelSelector,
          fieldSelector: this.#opts.fieldSelector,
        },
        (event) => {
          if (failure) return;
          delivered = true;
          if (event.type !== 'ERROR') {
            this.#succeeded();
            this.#apply(event.type, event.object as T);
            return;
          }
          const status = event.object as Status;
          failure =
            status.code === 410
              ? new WatchExpired(status.message ?? '410 Gone in watch stream')
              : new KubeApiError({
                  verb: 'WATCH',
                  target: this.path,
                  cluster: this.#client.cluster,
                  statusCode: status.code,
                  reason: status.reason,
                  detail: status.message ?? 'error event in watch stream',
                });
          abort.abort();
        },
        abort.signal,
        (timeoutSeconds + 30) * 1000,
        () => {
          if (this.#failures > 0) settled = setTimeout(() => this.#succeeded(), WATCH_SETTLED_MS);
        },
      );
    } finally {
      clearTimeout(settled);
      this.#stop.signal.removeEventListener('abort', onStop);
    }
    if (failure) throw failure;
    // Something between us and the apiserver that ends every watch at once must not turn this into a busy loop.
    if (!delivered && !this.#stop.signal.aborted && Date.now() - started < 1000) {
      throw new Error('watch ended by the server at once without any event');
    }
  }

  #apply(type: Exclude<WatchEvent['type'], 'ERROR'>, object: T): void {
    const rv = object.metadata?.resourceVersion;
    const obj = type === 'BOOKMARK' ? object : this.#trim(object);
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
        this.#deliver([this.#cache.upsert(obj)]);
        break;
      case 'DELETED':
        this.#deliver([this.#cache.remove(obj)]);
        break;
      case 'BOOKMARK':
        break;
    }
    if (rv) this.#resourceVersion = rv;
  }

  #resync(): void {
    if (!this.#synced) return;
    for (const obj of this.#cache.list()) this.#call((h) => h.onUpdate?.(obj, obj), obj);
  }

  #deliver(changes: readonly (CacheChange<T> | undefined)[]): void {
    for (const c of changes) {
      if (!c) continue;
      if (c.type === 'add') this.#call((h) => h.onAdd?.(c.object), c.object);
      else if (c.type === 'update') this.#call((h) => h.onUpdate?.(c.object, c.old), c.object);
      else this.#call((h) => h.onDelete?.(c.object), c.object);
    }
  }

  /** A throwing handler must not break the watch or starve the other handlers. */
  #call(fn: (h: InformerHandlers<T>) => void, obj: T): void {
    for (const h of this.#handlers) {
      try {
        fn(h);
      } catch (err) {
        this.#log.error(
          { event: 'handler-error', err: errorText(err), object: obj.metadata.name, namespace: obj.metadata.namespace },
          'informer handler threw',
        );
      }
    }
  }
}

export function createInformer<T extends KubeObject>(options: InformerOptions<T>): Informer<T> {
  return new SelfHealingInformer<T>(options);
}
