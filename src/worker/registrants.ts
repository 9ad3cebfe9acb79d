// The Cloud Map services the platform team opted in to be imported although no MCS controller registers them (I9):
// ECS service discovery, or any registrant using Cloud Map's standard instance attributes. Such writers bump no change
// marker, and health changes move no InstancesRevision (DiscoverInstances API reference), so each opted-in service is
// read whole every poll interval. Which services are opted in is scanned more slowly: the tag is read from Cloud Map,
// the same for every cluster of the ClusterSet. Only reads: nothing here registers, deregisters, creates, deletes or
// tags anything (I9).
import type { CloudMapAdapter } from '../cloudmap/adapter.ts';
import type { RegistrantInstance } from '../core/registrants.ts';
import { compareText } from '../core/cluster-export.ts';
import type { Logger } from '../observability/log.ts';
import { sleep } from '../runtime/backoff.ts';
import { errorText } from '../kube/api-error.ts';
import { keyOf, type ServiceRef } from './objects.ts';

/** The tag, on a Cloud Map service, that opts it in (value `true`). Set by its owner, never by us. */
export const IMPORT_TAG = 'mcs-cloudmap/import';

export interface RegistrantWatchOptions {
  cloudMap: Pick<CloudMapAdapter, 'registry' | 'instances'>;
  /** The namespaces of this cluster: only there can an import exist (I1), so only there is Cloud Map scanned. */
  namespaces: () => Iterable<string>;
  /** How often the opted-in services are looked for (ListNamespaces, ListServices, ListTagsForResource). */
  scanIntervalMs: number;
  /** How often each opted-in service is read (one DiscoverInstances). */
  pollIntervalMs: number;
  /** An opted-in service whose instances or health changed, or that was opted in or out. */
  onChange: (service: ServiceRef) => void;
  signal: AbortSignal;
  log: Logger;
}

interface Watched {
  ref: ServiceRef;
  /** As last read; undefined until read once. */
  instances: RegistrantInstance[] | undefined;
  /** Comparable form of `instances`. */
  fingerprint: string;
}

function fingerprint(instances: readonly RegistrantInstance[]): string {
  return JSON.stringify(
    [...instances]
      .sort((a, b) => compareText(a.id, b.id))
      .map((i) => [i.id, i.health ?? '', Object.entries(i.attributes).sort(([a], [b]) => compareText(a, b))]),
  );
}

export class RegistrantWatch {
  readonly #o: RegistrantWatchOptions;
  readonly #watched = new Map<string, Watched>();
  #scanned = false;
  #nextScan = 0;
  #running: Promise<void> | undefined;
  readonly #firstRead: Promise<void>;
  #resolveFirstRead = () => {};

  constructor(options: RegistrantWatchOptions) {
    this.#o = options;
    this.#firstRead = new Promise((resolve) => (this.#resolveFirstRead = resolve));
  }

  /** Starts scanning and polling until the signal aborts; resolves once opted-in services were found and read. */
  start(): Promise<void> {
    this.#running ??= this.#loop();
    return this.#firstRead;
  }

  /** True once a scan completed and every service it found was read: until then, missing members prove nothing. */
  get read(): boolean {
    return this.#scanned && [...this.#watched.values()].every((w) => w.instances !== undefined);
  }

  /** The instances of an opted-in service as last read; none when it is not opted in. */
  instances(namespace: string, service: string): readonly RegistrantInstance[] {
    return this.#watched.get(keyOf(namespace, service))?.instances ?? [];
  }

  /** Every opted-in service. */
  services(): ServiceRef[] {
    return [...this.#watched.values()].map((w) => w.ref);
  }

  async stop(): Promise<void> {
    await this.#running;
  }

  async #loop(): Promise<void> {
    const { signal, pollIntervalMs, scanIntervalMs } = this.#o;
    while (!signal.aborted) {
      if (Date.now() >= this.#nextScan) {
        this.#nextScan = Date.now() + scanIntervalMs;
        await this.#scan();
      }
      await this.#poll();
      if (this.read) this.#resolveFirstRead();
      await sleep(pollIntervalMs, signal);
    }
    this.#resolveFirstRead();
  }

  /** Finds the opted-in services; a failed scan changes nothing (an import is never dropped because a call failed). */
  async #scan(): Promise<void> {
    const { cloudMap, log } = this.#o;
    try {
      const here = new Set(this.#o.namespaces());
      const found = new Map<string, ServiceRef>();
      // One listing per scan: the platform team creates namespaces no change marker names (ListNamespaces: 0.5/s per
      // account, so the scan interval is minutes by default).
      for (const ns of await cloudMap.registry.listNamespaces()) {
        // ns.name is the Kubernetes namespace: the registry names a DNS namespace <ns>.<domain> as <ns>.
        if (!here.has(ns.name)) continue;
        for (const s of await cloudMap.registry.listServices(ns.id)) {
          if (s.createdByUs === true || s.arn === undefined) continue;
          const tags = await cloudMap.registry.tags(s.arn);
          if (tags[IMPORT_TAG] === 'true') found.set(keyOf(ns.name, s.name), { namespace: ns.name, service: s.name });
        }
      }
      for (const [key, watched] of this.#watched) {
        if (found.has(key)) continue;
        this.#watched.delete(key);
        log.info({ event: 'registrant-service-opted-out', ...watched.ref }, 'Cloud Map service no longer opted in');
        this.#o.onChange(watched.ref);
      }
      for (const [key, ref] of found) {
        if (this.#watched.has(key)) continue;
        this.#watched.set(key, { ref, instances: undefined, fingerprint: '' });
        log.info({ event: 'registrant-service-opted-in', ...ref }, `Cloud Map service tagged ${IMPORT_TAG}=true`);
      }
      this.#scanned = true;
    } catch (err) {
      if (this.#o.signal.aborted) return;
      log.warn(
        { event: 'registrant-scan-failed', err: errorText(err) },
        'could not look for opted-in Cloud Map services (this needs servicediscovery:ListServices and ListTagsForResource, docs/non-kubernetes.md); keeping those found before',
      );
    }
  }

  /** Reads every opted-in service; one that fails keeps what was read before. */
  async #poll(): Promise<void> {
    const { cloudMap, log } = this.#o;
    for (const watched of this.#watched.values()) {
      if (this.#o.signal.aborted) return;
      const { namespace, service } = watched.ref;
      try {
        const instances = (await cloudMap.instances.discoverAll(namespace, service)) ?? [];
        const now = fingerprint(instances);
        if (watched.instances !== undefined && now === watched.fingerprint) continue;
        watched.instances = instances;
        watched.fingerprint = now;
        this.#o.onChange(watched.ref);
      } catch (err) {
        if (this.#o.signal.aborted) return;
        log.warn(
          { event: 'registrant-read-failed', namespace, service, err: errorText(err) },
          'could not read an opted-in Cloud Map service; its import keeps the endpoints read before',
        );
      }
    }
  }
}
