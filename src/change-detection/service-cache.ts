// The watcher's cache: every Cloud Map service of the ClusterSet's namespaces as last read (revision and instances of
// this ClusterSet, all clusters), and when each read began. A change of a service's instances is called back.
import { sameInstances } from '../cloudmap/instance-set.ts';
import { ATTR_CLUSTER_ID } from '../core/names.ts';
import type { CloudMapInstance } from '../core/types.ts';
import type { Logger } from '../observability/log.ts';

export interface ServiceKey {
  readonly namespace: string;
  readonly service: string;
}

export interface Cached {
  readonly revision: number | undefined;
  readonly instances: readonly CloudMapInstance[];
  /** Checks since the instances were read that found the revision unchanged (and so read nothing). */
  revisionChecks: number;
}

export interface ServiceCacheOptions {
  /** Called when a service's instances changed. */
  onChange: (change: ServiceKey) => void;
  /** Called when what a namespace's checkpoint would hold changed (a revision, a service, its instances). */
  onNamespaceChanged: (namespace: string) => void;
  logger?: Logger | undefined;
}

export class ServiceCache {
  readonly #options: ServiceCacheOptions;
  readonly #cache = new Map<string, Map<string, Cached>>();
  /** Per namespace and service, when the last completed read of it began (readAt). */
  readonly #readStarted = new Map<string, Map<string, number>>();

  constructor(options: ServiceCacheOptions) {
    this.#options = options;
  }

  get(namespace: string, service: string): Cached | undefined {
    return this.#cache.get(namespace)?.get(service);
  }

  has(namespace: string, service: string): boolean {
    return this.#cache.get(namespace)?.has(service) ?? false;
  }

  hasNamespace(namespace: string): boolean {
    return this.#cache.has(namespace);
  }

  /** How many namespaces have cached services. */
  get namespaceCount(): number {
    return this.#cache.size;
  }

  /** The cached namespaces (those with at least one service). */
  namespaces(): IterableIterator<string> {
    return this.#cache.keys();
  }

  /** The cached services of `namespace` with their state. */
  servicesIn(namespace: string): Array<[string, Cached]> {
    return [...(this.#cache.get(namespace) ?? [])];
  }

  /** The instances of `namespace/service` as last read (empty when none). */
  snapshot(namespace: string, service: string): readonly CloudMapInstance[] {
    return this.get(namespace, service)?.instances ?? [];
  }

  /** When the last completed read of the service began. */
  readAt(namespace: string, service: string): number | undefined {
    return this.#readStarted.get(namespace)?.get(service);
  }

  /** Every cached service, with instances or not. */
  keys(): ServiceKey[] {
    return [...this.#cache].flatMap(([namespace, services]) =>
      [...services.keys()].map((service) => ({ namespace, service })),
    );
  }

  /** Every service that has instances. */
  services(): ServiceKey[] {
    const out: ServiceKey[] = [];
    for (const [namespace, services] of this.#cache) {
      for (const [service, cached] of services) if (cached.instances.length > 0) out.push({ namespace, service });
    }
    return out;
  }

  *instancesByNamespace(): Generator<{ namespace: string; instances: readonly CloudMapInstance[] }> {
    for (const [namespace, services] of this.#cache)
      for (const c of services.values()) yield { namespace, instances: c.instances };
  }

  /** The namespaces where cluster `clusterId` has instances, as last read. */
  namespacesOf(clusterId: string): string[] {
    return [...this.#cache]
      .filter(([, services]) =>
        [...services.values()].some((c) => c.instances.some((i) => i.attributes[ATTR_CLUSTER_ID] === clusterId)),
      )
      .map(([namespace]) => namespace);
  }

  /** Takes a service's state without a read (a checkpoint's); false when it was read since, which is newer. */
  seed(namespace: string, service: string, state: Cached): boolean {
    let cached = this.#cache.get(namespace);
    if (cached?.has(service)) return false;
    if (!cached) this.#cache.set(namespace, (cached = new Map<string, Cached>()));
    cached.set(service, state);
    return true;
  }

  /** Records when a completed read of the service began; returns `result`. */
  readDone(namespace: string, service: string, startedAt: number, result: boolean): boolean {
    let services = this.#readStarted.get(namespace);
    if (!services) this.#readStarted.set(namespace, (services = new Map<string, number>()));
    services.set(service, startedAt);
    return result;
  }

  /** Stores a service's state (undefined: gone); calls back and returns true when its instances changed. */
  update(namespace: string, service: string, next: Cached | undefined): boolean {
    let services = this.#cache.get(namespace);
    const cached = services?.get(service);
    const before = cached?.instances ?? [];
    if (cached?.revision !== next?.revision || (cached === undefined) !== (next === undefined))
      this.#options.onNamespaceChanged(namespace);
    if (next === undefined) {
      services?.delete(service);
      if (services?.size === 0) this.#cache.delete(namespace);
    } else {
      if (!services) this.#cache.set(namespace, (services = new Map<string, Cached>()));
      services.set(service, next);
    }
    if (sameInstances(before, next?.instances ?? [])) return false;
    this.#options.onNamespaceChanged(namespace);
    try {
      this.#options.onChange({ namespace, service });
    } catch (err) {
      this.#options.logger?.error({ namespace, service, err: String(err) }, 'Cloud Map change callback failed');
    }
    return true;
  }
}
