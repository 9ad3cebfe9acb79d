// The informer's in-memory store: objects by namespace/name with indexes by namespace and by label, and the changes
// each write makes. Pure (no I/O) so the relist and index rules are unit-tested on their own.
// It also takes the objects this process's own writes returned (`observe`), ahead of their watch events: a reconcile
// that runs again before the watch has caught up then sees what it already wrote instead of writing it again.

import { objectKey, type KubeObject } from '../kube/resources.ts';

export type CacheChange<T> =
  | { readonly type: 'add'; readonly object: T }
  | { readonly type: 'update'; readonly object: T; readonly old: T }
  | { readonly type: 'delete'; readonly object: T };

const SEP = '\u0000';

function keyOf(obj: KubeObject): string {
  return objectKey(obj.metadata.namespace, obj.metadata.name);
}

function labelIndexKeys(obj: KubeObject): string[] {
  return Object.entries(obj.metadata.labels ?? {}).map(([k, v]) => `${k}${SEP}${v}`);
}

function addToIndex(index: Map<string, Set<string>>, indexKey: string, key: string): void {
  let set = index.get(indexKey);
  if (!set) index.set(indexKey, (set = new Set()));
  set.add(key);
}

function removeFromIndex(index: Map<string, Set<string>>, indexKey: string, key: string): void {
  const set = index.get(indexKey);
  if (!set) return;
  set.delete(key);
  if (set.size === 0) index.delete(indexKey);
}

/**
 * resourceVersions are opaque to clients, but the apiserver's are etcd revisions, integers that grow with every write
 * (client-go's mutation cache compares them the same way). Undefined when either is not an integer.
 */
function newer(a: string | undefined, b: string | undefined): boolean | undefined {
  const x = Number(a);
  const y = Number(b);
  if (a === undefined || b === undefined || !Number.isSafeInteger(x) || !Number.isSafeInteger(y)) return undefined;
  return x > y;
}

export class ObjectCache<T extends KubeObject> {
  readonly #objects = new Map<string, T>();
  /** Keys whose cached object came from `observe`, with its resourceVersion, until the watch delivers that version. */
  readonly #observed = new Map<string, string>();
  readonly #byNamespace = new Map<string, Set<string>>();
  readonly #byLabel = new Map<string, Set<string>>();

  get size(): number {
    return this.#objects.size;
  }

  /** The object, or undefined; use '' (or omit) as namespace for cluster-scoped objects. */
  get(namespace: string | undefined, name: string): T | undefined {
    return this.#objects.get(objectKey(namespace, name));
  }

  /** Every object, or those of one namespace. */
  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.#objects.values()];
    return this.#resolve(this.#byNamespace.get(namespace));
  }

  /** Objects whose label `key` equals `value`, optionally only in one namespace. */
  listByLabel(key: string, value: string, namespace?: string): T[] {
    const found = this.#resolve(this.#byLabel.get(`${key}${SEP}${value}`));
    return namespace === undefined ? found : found.filter((o) => (o.metadata.namespace ?? '') === namespace);
  }

  /** Objects carrying every label of `selector` (equality only), optionally only in one namespace. */
  listBySelector(selector: Readonly<Record<string, string>>, namespace?: string): T[] {
    const entries = Object.entries(selector);
    if (entries.length === 0) return this.list(namespace);
    const [first, ...rest] = entries;
    return this.listByLabel(first![0], first![1], namespace).filter((o) =>
      rest.every(([k, v]) => o.metadata.labels?.[k] === v),
    );
  }

  /**
   * Stores `obj`; returns the change, or undefined when the cached copy has the same resourceVersion (a watch replaying
   * what a list already delivered).
   */
  upsert(obj: T): CacheChange<T> | undefined {
    const key = keyOf(obj);
    const old = this.#objects.get(key);
    const observed = this.#observed.get(key);
    if (observed !== undefined) {
      // An older state than one our own write returned: its own event is still to come, and is delivered then.
      if (newer(observed, obj.metadata.resourceVersion)) return undefined;
      // The watch caught up: the change is delivered now, even though the cache already showed it.
      this.#observed.delete(key);
    } else if (
      old &&
      old.metadata.resourceVersion !== undefined &&
      old.metadata.resourceVersion === obj.metadata.resourceVersion
    ) {
      return undefined;
    }
    if (old) this.#unindex(key, old);
    this.#objects.set(key, obj);
    this.#index(key, obj);
    return old ? { type: 'update', object: obj, old } : { type: 'add', object: obj };
  }

  /**
   * Stores an object as one of our own writes returned it, when it is newer than the cached copy (or there is none)
   * and than `watched`, the last resourceVersion the watch delivered, without a change for the handlers: they hear of
   * it when the watch delivers this version (upsert). A version the watch has passed is not stored: the object may
   * have been deleted since. Returns whether it was stored.
   */
  observe(obj: T, watched: string): boolean {
    const key = keyOf(obj);
    const old = this.#objects.get(key);
    const rv = obj.metadata.resourceVersion;
    if (newer(rv, watched) !== true || (old !== undefined && newer(rv, old.metadata.resourceVersion) !== true))
      return false;
    if (old) this.#unindex(key, old);
    this.#objects.set(key, obj);
    this.#index(key, obj);
    this.#observed.set(key, rv!);
    return true;
  }

  /** Objects cached from our own writes whose watch event has not come yet. */
  get observedCount(): number {
    return this.#observed.size;
  }

  /** Drops the object named like `obj`; the change carries `obj`, the final state the watch reported. */
  remove(obj: T): CacheChange<T> | undefined {
    const key = keyOf(obj);
    this.#observed.delete(key);
    const old = this.#objects.get(key);
    if (!old) return undefined;
    this.#unindex(key, old);
    this.#objects.delete(key);
    return { type: 'delete', object: obj };
  }

  /** Makes the cache equal to a fresh list: updates and adds for what is listed, deletes for what is gone. */
  replace(items: readonly T[]): CacheChange<T>[] {
    const listed = new Set(items.map(keyOf));
    const changes: CacheChange<T>[] = [];
    for (const [key, old] of [...this.#objects]) {
      if (listed.has(key)) continue;
      this.#unindex(key, old);
      this.#objects.delete(key);
      this.#observed.delete(key);
      changes.push({ type: 'delete', object: old });
    }
    for (const item of items) {
      const change = this.upsert(item);
      if (change) changes.push(change);
    }
    return changes;
  }

  #resolve(keys: Set<string> | undefined): T[] {
    return keys ? [...keys].map((k) => this.#objects.get(k)!) : [];
  }

  #index(key: string, obj: T): void {
    addToIndex(this.#byNamespace, obj.metadata.namespace ?? '', key);
    for (const lk of labelIndexKeys(obj)) addToIndex(this.#byLabel, lk, key);
  }

  #unindex(key: string, obj: T): void {
    removeFromIndex(this.#byNamespace, obj.metadata.namespace ?? '', key);
    for (const lk of labelIndexKeys(obj)) removeFromIndex(this.#byLabel, lk, key);
  }
}
