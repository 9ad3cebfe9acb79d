// How the watcher reads Cloud Map services into its cache: one service (its revision first, or its instances
// directly), a whole namespace (listed, revisions compared), and what is left to read: the services the markers named
// (and a listing found), read at the next poll and checked again a few seconds later, since Cloud Map reads are
// eventually consistent and writers announce a change when its operations are submitted.
import { forEachLimited } from '../runtime/for-each-limited.ts';
import { markDirty, type DirtyNamespaces } from './change-marker.ts';
import type { ServiceCache } from './service-cache.ts';
import type { WatchContext } from './watch-options.ts';

/** Cloud Map namespaces that can match a Kubernetes namespace (RFC 1123 labels); the marker namespace cannot. */
export const KUBERNETES_NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export class ServiceReads {
  readonly #ctx: WatchContext;
  readonly #cache: ServiceCache;
  readonly #dirty: DirtyNamespaces = new Map();
  #rechecks: { due: number; dirty: DirtyNamespaces }[] = [];

  constructor(ctx: WatchContext, cache: ServiceCache) {
    this.#ctx = ctx;
    this.#cache = cache;
  }

  /** These services (every one of the namespace's: 'all') are read at the next poll. */
  markDirty(namespace: string, services: Iterable<string> | 'all'): void {
    markDirty(this.#dirty, namespace, services);
  }

  /** Namespaces with reads to do or rechecks pending. */
  busyNamespaces(): Set<string> {
    return new Set([...this.#dirty.keys(), ...this.#rechecks.flatMap((r) => [...r.dirty.keys()])]);
  }

  /** Everything left to read, taken (covered by the caller's read). */
  takeDirty(): DirtyNamespaces {
    const taken = new Map(this.#dirty);
    this.#dirty.clear();
    return taken;
  }

  /** Reads these again (revision first) after each of the recheck delays. */
  recheckLater(work: DirtyNamespaces): void {
    const now = this.#ctx.opts.clock.now();
    for (const after of this.#ctx.opts.rechecksAfterMs) this.#rechecks.push({ due: now + after, dirty: work });
  }

  async processDirty(): Promise<void> {
    const work = this.takeDirty();
    if (work.size === 0) return;
    await this.#refreshDirty(work, true);
    this.recheckLater(work);
  }

  async processRechecks(): Promise<void> {
    const now = this.#ctx.opts.clock.now();
    const due = this.#rechecks.filter((r) => r.due <= now);
    if (due.length === 0) return;
    this.#rechecks = this.#rechecks.filter((r) => r.due > now);
    const merged: DirtyNamespaces = new Map();
    for (const r of due) for (const [namespace, services] of r.dirty) markDirty(merged, namespace, services);
    await this.#refreshDirty(merged, false);
  }

  /**
   * Re-reads what the markers named. Named services are read directly (we know they changed). A namespace marked
   * as a whole is compared by revision; when `suspectRepeats` and no revision in it moved although its marker did,
   * the revisions are not trusted (they may repeat) and every service in it is read.
   */
  async #refreshDirty(work: DirtyNamespaces, suspectRepeats: boolean): Promise<void> {
    for (const [namespace, services] of work) {
      if (services === 'all') {
        try {
          const moved = await this.scanNamespace(namespace, false);
          if (moved === false && suspectRepeats) await this.scanNamespace(namespace, true);
        } catch (err) {
          // Its listing failed: the namespace stays to do (and its checkpoint waits, M9), the others go on.
          this.requeue(namespace, 'all');
          if (!this.#ctx.signal().aborted)
            this.#ctx.log?.warn(
              { namespace, err: String(err) },
              'could not list the Cloud Map services of a changed namespace; retrying at the next poll',
            );
        }
        continue;
      }
      const failures = await forEachLimited(services, this.#ctx.opts.concurrency, (service) =>
        this.refreshService(namespace, service, suspectRepeats).then(() => {}),
      );
      this.requeue(
        namespace,
        failures.map((f) => f.item),
      );
    }
  }

  /**
   * Refreshes every service of `namespace` (listed, or cached from before); `deep` reads instances regardless of
   * revisions. Returns whether any revision moved (or a service appeared or vanished), or undefined if some failed.
   */
  async scanNamespace(namespace: string, deep: boolean): Promise<boolean | undefined> {
    const { opts, counts } = this.#ctx;
    counts.namespaceScans++;
    // Scanned because a marker or a listing named it: it may be newer than the registry's last listing.
    const namespaceId = await opts.registry.findNamespace(namespace, true);
    const listed = new Set(
      namespaceId === undefined ? [] : (await opts.registry.listServices(namespaceId)).map((s) => s.name),
    );
    const names = new Set([...listed, ...this.#cache.servicesIn(namespace).map(([name]) => name)]);
    let moved = false;
    const failures = await forEachLimited(names, opts.concurrency, async (service) => {
      if (await this.refreshService(namespace, service, deep && listed.has(service))) moved = true;
    });
    if (failures.length > 0) {
      this.requeue(namespace, 'all');
      this.#ctx.log?.warn(
        { namespace, failed: failures.length, err: String(failures[0]!.error) },
        'could not read some Cloud Map services; retrying at the next poll',
      );
      return undefined;
    }
    return moved;
  }

  /** What failed to read is read again at the next poll. */
  requeue(namespace: string, services: readonly string[] | 'all'): void {
    if (services === 'all' || services.length > 0) markDirty(this.#dirty, namespace, services);
  }

  /**
   * Reads one service: its revision first unless `direct`, then its instances when the revision moved. Returns
   * true when the revision moved, the service appeared or vanished, or (direct) the instances changed. Each read that
   * ends, failed or not, is progress of the loop.
   */
  async refreshService(namespace: string, service: string, direct: boolean): Promise<boolean> {
    try {
      return await this.#readService(namespace, service, direct);
    } finally {
      this.#ctx.progressed();
    }
  }

  /** Names of the Cloud Map namespaces that can be Kubernetes namespaces, listed or cached. */
  async namespaces(): Promise<Set<string>> {
    const listed = (await this.#ctx.opts.registry.listNamespaces())
      .map((n) => n.name)
      .filter((n) => KUBERNETES_NAMESPACE.test(n));
    return new Set([...listed, ...this.#cache.namespaces()]);
  }

  async #readService(namespace: string, service: string, direct: boolean): Promise<boolean> {
    const { clock, instances } = this.#ctx.opts;
    const startedAt = clock.now();
    const cached = this.#cache.get(namespace, service);
    let revision: number | undefined;
    if (!direct) {
      revision = await instances.discoverRevision(namespace, service);
      if (revision === undefined)
        return this.#cache.readDone(
          namespace,
          service,
          startedAt,
          this.#cache.update(namespace, service, undefined) || cached !== undefined,
        );
      if (cached !== undefined && revision === cached.revision) {
        cached.revisionChecks++;
        return this.#cache.readDone(namespace, service, startedAt, false);
      }
    }
    const found = await instances.discoverInstances(namespace, service);
    this.#cache.readDone(namespace, service, startedAt, false);
    if (found === undefined) return this.#cache.update(namespace, service, undefined) || cached !== undefined;
    const changed = this.#cache.update(namespace, service, {
      revision: found.revision ?? revision,
      instances: found.instances,
      revisionChecks: 0,
    });
    return direct ? changed : true;
  }
}
