// Writers that never bump the change marker (the AWS controller v0.3.1 during a migration, core/announcing-writers.ts).
// Optionally, every service of a namespace where such a writer has instances is checked (revision first) and the
// namespace's services listed each short interval, so that writer's changes and new services show within seconds, at
// a cost per such namespace and service only (M6).
import { namespacesWithNonAnnouncing } from '../core/announcing-writers.ts';
import { forEachLimited } from '../runtime/for-each-limited.ts';
import type { ServiceCache } from './service-cache.ts';
import type { ServiceReads } from './service-reads.ts';
import type { WatchContext } from './watch-options.ts';

export class NonAnnouncingWriters {
  readonly #ctx: WatchContext;
  readonly #cache: ServiceCache;
  readonly #reads: ServiceReads;
  #nextCheck = 0;
  /** When each namespace where a writer that does not bump the marker has instances was last listed. */
  readonly #listedAt = new Map<string, number>();

  constructor(ctx: WatchContext, cache: ServiceCache, reads: ServiceReads) {
    this.#ctx = ctx;
    this.#cache = cache;
    this.#reads = reads;
  }

  /** The namespaces where a writer that does not bump the change marker has instances, as last read. */
  namespaces(): Set<string> {
    return namespacesWithNonAnnouncing(this.#cache.instancesByNamespace());
  }

  /**
   * Every service of a namespace where a writer that does not bump the marker has instances (v0.3.1 during a
   * migration), checked each interval by revision (DiscoverInstancesRevision, 3,000/s per account), so its changes
   * show within seconds instead of at the resync; the cost is per such service, not per service (M6).
   */
  async step(): Promise<void> {
    const { opts, counts } = this.#ctx;
    const { nonAnnouncingPollIntervalMs, clock, concurrency } = opts;
    if (!(nonAnnouncingPollIntervalMs > 0) || clock.now() < this.#nextCheck) return;
    this.#nextCheck = clock.now() + nonAnnouncingPollIntervalMs;
    const namespaces = this.namespaces();
    if (namespaces.size === 0) {
      this.#listedAt.clear();
      return;
    }
    const watched = this.#cache.keys().filter((k) => namespaces.has(k.namespace));
    counts.nonAnnouncingChecks += watched.length;
    const failures = await forEachLimited(watched, concurrency, (s) =>
      this.#reads.refreshService(s.namespace, s.service, false).then(() => {}),
    );
    for (const { item } of failures) this.#reads.requeue(item.namespace, [item.service]);
    // Such a writer also creates services (v0.3.1 exporting a new Service) that no marker names, so one of these
    // namespaces, the one listed longest ago, is listed per interval (one ListServices page per 100 services) and what
    // is new is read at once. One, not all: ListServices is the scarcest quota (2/s per account, v0.3.1's too).
    const namespace = [...namespaces].sort((a, b) => (this.#listedAt.get(a) ?? 0) - (this.#listedAt.get(b) ?? 0))[0];
    for (const listed of this.#listedAt.keys()) if (!namespaces.has(listed)) this.#listedAt.delete(listed);
    if (namespace === undefined || this.#ctx.signal().aborted) return;
    this.#listedAt.set(namespace, clock.now());
    const namespaceId = await opts.registry.findNamespace(namespace);
    if (namespaceId === undefined) return;
    counts.nonAnnouncingListings++;
    const unread = (await opts.registry.listServices(namespaceId))
      .map((s) => s.name)
      .filter((service) => !this.#cache.has(namespace, service));
    const failed = await forEachLimited(unread, concurrency, (service) =>
      this.#reads.refreshService(namespace, service, true).then(() => {}),
    );
    this.#reads.requeue(
      namespace,
      failed.map((f) => f.item),
    );
  }
}
