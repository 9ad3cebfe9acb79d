// A self-healing informer: list, then watch from the list's resourceVersion, keeping an indexed cache and calling
// handlers for every change. Unlike client-node's ListWatch (which stops for good on any error other than 410), it
// never gives up while started:
// - 410 Gone / expired resourceVersion (or continue token): relist from scratch; the cache diff turns the relist into
//   adds, updates and deletes, so handlers also hear about deletions they missed.
// - any other failure (refused, reset, 5xx, 403): reconnect after exponential backoff with jitter, watching from the
//   last resourceVersion seen (a stale one ends in 410 and a relist).
// - a watch the server ends (timeoutSeconds, 2–4 min): watch again at once from the last resourceVersion. A watch that
//   stays silent 30 s past its timeoutSeconds is a dead connection (no FIN/RST ever came) and counts as a failure.
//   (Quiet watches get no bookmarks from the apiserver's cache before their deadline, so silence alone is normal.)
// - every `resyncMs`, every cached object is re-delivered to onUpdate(obj, obj) so a handler that dropped work (a
//   failed reconcile that was forgotten) catches up.
// Each reconnect and relist is one JSON log line with the resource and the error.
//
// Plain and reusable: the worker and the webhook both use it. Usage:
//   const services = createInformer<Service>({ kubeConfig, path: resourcePath(SERVICES), resyncMs: 300_000,
//     trim: keepFields('spec') });   // optional: the cache keeps only metadata and spec (src/kube/trim.ts)
//   services.addHandlers({ onAdd: (s) => ..., onUpdate: (s, old) => ..., onDelete: (s) => ... });
//   services.start(); await services.waitForSync();
//   services.get('demo', 'nginx'); services.list('demo'); services.listByLabel(LABEL_SERVICE_NAME, 'nginx', 'demo');
//   await services.stop();

import { createLogger, type Logger } from '../observability/log.ts';
import { errorText, isGone, KubeApiError } from './api-error.ts';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff.ts';
import { kubeClientFor, type KubeClient, type WatchEvent } from './client.ts';
import { ObjectCache, type CacheChange } from './object-cache.ts';
import type { KubeObject } from './resources.ts';
import type { ObjectTrim } from './trim.ts';
import type { KubeAccess } from './kube-access.ts';

export interface InformerHandlers<T> {
  onAdd?(object: T): void;
  /** Also called with object === old on each periodic resync. */
  onUpdate?(object: T, old: T): void;
  /** Receives the object's last known state. */
  onDelete?(object: T): void;
}

/** Hooks for metrics; see src/observability/metrics.ts. */
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
  /** Backoff between failed attempts; default 500 ms doubling to 30 s, half jittered. */
  backoff?: BackoffPolicy;
  /** Items per list page. */
  pageSize?: number;
  logger?: Logger;
  metrics?: InformerMetrics;
  /** What the cache keeps of each object (src/kube/trim.ts); default: all of it. */
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
  /** Adds handlers; returns a function that removes them. */
  addHandlers(handlers: InformerHandlers<T>): () => void;
  /** '' (or undefined) as namespace for cluster-scoped objects. */
  get(namespace: string | undefined, name: string): T | undefined;
  list(namespace?: string): T[];
  listByLabel(key: string, value: string, namespace?: string): T[];
  listBySelector(selector: Readonly<Record<string, string>>, namespace?: string): T[];
  /** resourceVersion of the last list or event applied to the cache. */
  lastResourceVersion(): string;
}

export const DEFAULT_INFORMER_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 30_000, jitter: 0.5 };

interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

interface Status {
  code?: number;
  reason?: string;
  message?: string;
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
  /** Consecutive failures; reset by a successful list or any watch event. */
  #failures = 0;
  #synced = false;
  #started = false;
  #loop: Promise<void> | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  readonly #syncWaiters = new Set<{ resolve: () => void; reject: (err: Error) => void }>();

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
    this.#loop = this.#run();
    if (this.#opts.resyncMs > 0) {
      this.#resyncTimer = setInterval(() => this.#resync(), this.#opts.resyncMs);
      this.#resyncTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    clearInterval(this.#resyncTimer);
    for (const w of this.#syncWaiters) w.reject(new Error(`informer for ${this.path} stopped before its first list`));
    this.#syncWaiters.clear();
    await this.#loop;
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (this.#stop.signal.aborted) return Promise.reject(new Error(`informer for ${this.path} is stopped`));
    return new Promise((resolve, reject) => {
      const waiter = { resolve, reject };
      this.#syncWaiters.add(waiter);
      signal?.addEventListener('abort', () => {
        this.#syncWaiters.delete(waiter);
        reject(new Error(`gave up waiting for the first list of ${this.path}`));
      }, { once: true });
    });
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
        // The first expiry relists at once (the normal case after a long disconnection); repeated failures back off.
        const delayMs = expired && this.#failures === 1 ? 0 : backoffDelay(policy, this.#failures);
        const event = expired ? 'relist' : 'reconnect';
        this.#opts.metrics?.restarted(this.path, event);
        this.#log.warn({ event, err: errorText(err), attempt: this.#failures, delayMs, resourceVersion: this.#resourceVersion },
          expired ? 'resourceVersion expired; relisting' : 'list or watch failed; reconnecting');
        await sleep(delayMs, this.#stop.signal);
      }
    }
  }

  async #list(): Promise<void> {
    const items: T[] = [];
    let resourceVersion = '';
    let cont: string | undefined;
    do {
      const page = await this.#client.request<ObjectList<T>>({
        method: 'GET', path: this.path, signal: this.#stop.signal,
        query: {
          labelSelector: this.#opts.labelSelector, fieldSelector: this.#opts.fieldSelector,
          limit: this.#opts.pageSize ?? 500, continue: cont,
        },
      });
      // List items carry no apiVersion/kind; fill them in so handlers see the same shape as from the watch.
      const kind = page.kind?.replace(/List$/, '');
      for (const item of page.items ?? []) items.push(this.#trim({ apiVersion: page.apiVersion, kind, ...item }));
      resourceVersion = page.metadata?.resourceVersion ?? '';
      cont = page.metadata?.continue || undefined;
    } while (cont);
    if (this.#stop.signal.aborted) return;
    const changes = this.#cache.replace(items);
    this.#resourceVersion = resourceVersion;
    this.#failures = 0;
    this.#log.debug({ event: 'listed', count: items.length, changes: changes.length, resourceVersion }, 'listed');
    this.#deliver(changes);
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters) w.resolve();
      this.#syncWaiters.clear();
    }
  }

  /** One watch from the last resourceVersion, until the server ends it; throws on failure or in-stream 410. */
  async #watch(): Promise<void> {
    // Randomised so renewals of many informers and replicas spread out; short enough that a dead connection is
    // noticed within minutes.
    const timeoutSeconds = 120 + Math.floor(Math.random() * 120);
    const abort = new AbortController();
    const onStop = () => abort.abort();
    this.#stop.signal.addEventListener('abort', onStop, { once: true });
    let failure: Error | undefined;
    let delivered = false;
    const started = Date.now();
    try {
      await this.#client.watch<T | Status>(this.path, {
        resourceVersion: this.#resourceVersion, allowWatchBookmarks: true, timeoutSeconds,
        labelSelector: this.#opts.labelSelector, fieldSelector: this.#opts.fieldSelector,
      }, (event) => {
        if (failure) return;
        delivered = true;
        if (event.type !== 'ERROR') {
          this.#failures = 0;
          this.#apply(event as WatchEvent<T>);
          return;
        }
        const status = event.object as Status;
        failure = status.code === 410
          ? new WatchExpired(status.message ?? '410 Gone in watch stream')
          : new KubeApiError({ verb: 'WATCH', target: this.path, cluster: this.#client.cluster, statusCode: status.code,
            reason: status.reason, detail: status.message ?? 'error event in watch stream' });
        abort.abort();
      }, abort.signal, (timeoutSeconds + 30) * 1000);
    } finally {
      this.#stop.signal.removeEventListener('abort', onStop);
    }
    if (failure) throw failure;
    // Something between us and the apiserver that ends every watch at once must not turn this into a busy loop.
    if (!delivered && !this.#stop.signal.aborted && Date.now() - started < 1000) {
      throw new Error('watch ended by the server at once without any event');
    }
  }

  #apply(event: WatchEvent<T>): void {
    const rv = event.object.metadata?.resourceVersion;
    const obj = event.type === 'BOOKMARK' ? event.object : this.#trim(event.object);
    switch (event.type) {
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
        this.#log.error({ event: 'handler-error', err: errorText(err), object: obj.metadata.name, namespace: obj.metadata.namespace },
          'informer handler threw');
      }
    }
  }
}

export function createInformer<T extends KubeObject>(options: InformerOptions<T>): Informer<T> {
  return new SelfHealingInformer<T>(options);
}
