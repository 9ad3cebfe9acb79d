// The reconcilers of a cluster that has an identity in a ClusterSet: the Cloud Map adapter and change watcher bound to
// that identity, the export and import work queues (keys `namespace/name`), and the routing of informer and Cloud
// Map events to keys. Started when the identity is known (and this replica leads), stopped when either ends.
//
// Nothing is reconciled before the watcher's first full read of Cloud Map: with an empty view the export side would
// re-register every instance and the import side would delete every ServiceImport.
import { CloudMapAdapter } from '../cloudmap/adapter.ts';
import { CallCancelledError } from '../cloudmap/errors.ts';
import { watchCloudMap, type CloudMapWatcher } from '../change-detection/cloudmap-watcher.ts';
import type { Reachability } from '../change-detection/marker-polling.ts';
import type { ServiceKey } from '../change-detection/service-cache.ts';
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID, CONTROLLER_NAME, LABEL_KUBE_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '../core/names.ts';
import { conditionTime, readyCondition } from '../core/conditions.ts';
import type { CloudMapInstance } from '../core/types.ts';
import { sleep } from '../runtime/backoff.ts';
import { errorText } from '../kube/api-error.ts';
import { kubeClientFor } from '../kube/client.ts';
import type { EventRecorder } from '../kube/event-recorder.ts';
import type { Informer, InformerHandlers } from '../runtime/informer.ts';
import type { ObjectWriter } from '../runtime/object-writer.ts';
import type { KubeObject } from '../kube/resources.ts';
import { WorkQueue } from '../runtime/work-queue.ts';
import type { Logger } from '../observability/log.ts';
import type { WorkerMetrics } from './metrics.ts';
import type { Identity } from './cluster-identity.ts';
import { reapDeadCluster } from './dead-cluster-reaper.ts';
import { DeadClusters } from './dead-clusters.ts';
import { ExportReconciler } from './export-reconciler.ts';
import { ExportStatusWriter } from './export-status.ts';
import { createdByUs, ImportReconciler, keptByUs } from './import-reconciler.ts';
import type { WorkerInformers } from './informers.ts';
import { InstanceView } from './instance-view.ts';
import type { LoopProgress } from './liveness.ts';
import { keyOf } from './objects.ts';
import { startOrder } from './start-order.ts';
import { KubeCheckpointStore } from './checkpoint-store.ts';
import type { WorkerOptions } from './options.ts';
import type { KubeAccess } from '../kube/kube-access.ts';
import type { RegionState } from './regions.ts';

/**
 * How long after our write a Cloud Map read may still miss it; a watcher read begun later overrides the write. Past
 * the watcher's second recheck of a marker-driven read (1 s and a few seconds after it).
 */
const OWN_WRITES_SETTLE_MS = 5_000;
/**
 * How long the start waits for the first read of the other Regions: imports from a Region that does not answer then
 * start without its clusters (and keep what they had), rather than every import waiting for it.
 */
const OTHER_REGIONS_FIRST_READ_WAIT_MS = 20_000;

/** Cloud Map of another Region of the ClusterSet, read only. */
interface RegionReader {
  readonly region: string;
  readonly cloudMap: CloudMapAdapter;
  readonly watcher: CloudMapWatcher;
}

export interface MemberOptions {
  identity: Identity;
  options: WorkerOptions;
  /** The ClusterSet's Regions, this cluster's own (where it registers) first. */
  regions: readonly string[];
  kubeConfig: KubeAccess;
  informers: WorkerInformers;
  writer: ObjectWriter;
  events: EventRecorder;
  metrics: WorkerMetrics;
  /** Why this replica must not call Cloud Map now (its Lease may have passed to a standby), if it must not. */
  fence?: () => string | undefined;
  log: Logger;
  /** Logger of the Cloud Map adapter. */
  cloudMapLog: Logger;
}

export class Member {
  readonly identity: Identity;
  readonly #o: MemberOptions;
  readonly #log: Logger;
  readonly #cloudMap: CloudMapAdapter;
  readonly #watcher: CloudMapWatcher;
  /** The other Regions of the ClusterSet. */
  readonly #others: RegionReader[];
  readonly #view: InstanceView;
  readonly #deadClusters: DeadClusters;
  readonly #exports: WorkQueue<string>;
  readonly #imports: WorkQueue<string>;
  readonly #removeHandlers: Array<() => void> = [];
  /** Start of the export reconcile whose writes the local import has not shown yet, per key (lag metric). */
  readonly #exportStarted = new Map<string, number>();
  readonly #pendingLag = new Map<string, number>();
  readonly #stopped = new AbortController();
  #frozen: string | undefined;
  #synced = false;
  readonly #ownRegion: string;
  readonly #exportStatus: ExportStatusWriter;
  /** Why this cluster's Region of Cloud Map does not answer, while it does not. */
  #cloudMapDown: string | undefined;
  /** Set while reconciling waits for the caches to be current again. */
  #paused: Promise<void> | undefined;

  constructor(o: MemberOptions) {
    this.identity = o.identity;
    this.#o = o;
    this.#log = o.log.child({ clusterId: o.identity.clusterId, clustersetId: o.identity.clustersetId });
    const [ownRegion, ...otherRegions] = o.regions;
    // One client, rate limits (quotas are per account and Region), change watch and resync per Region.
    this.#ownRegion = ownRegion!;
    this.#exportStatus = new ExportStatusWriter(o.writer, o.events);
    this.#cloudMap = this.#adapterFor(ownRegion!);
    this.#watcher = watchCloudMap(this.#cloudMap, { ...this.#watchOptions(ownRegion!), ...this.#checkpointOptions(ownRegion!) });
    this.#others = otherRegions.map((region) => {
      const cloudMap = this.#adapterFor(region);
      return { region, cloudMap, watcher: watchCloudMap(cloudMap, { ...this.#watchOptions(region), readOnly: true }) };
    });
    for (const region of o.regions) o.metrics.regionReachable.set({ region }, 1);
    this.#view = new InstanceView(
      (namespace, service) => this.#watcher.snapshot(namespace, service), (namespace, service) => this.#watcher.readAt(namespace, service),
      o.identity, OWN_WRITES_SETTLE_MS, () => this.#watcher.now(),
    );
    this.#deadClusters = this.#createDeadClusters();
    const exporter = this.#createExporter();
    const importer = this.#createImporter();
    this.#exports = this.#queue('export', async (key) => {
      this.#exportStarted.set(key, Date.now());
      try {
        await exporter.reconcile(key);
      } finally {
        this.#exportStarted.delete(key);
      }
    });
    this.#imports = this.#queue('import', (key) => importer.reconcile(key));
  }

  /** The Cloud Map adapter of one Region of the ClusterSet. */
  #adapterFor(region: string): CloudMapAdapter {
    const { options, identity, metrics, cloudMapLog } = this.#o;
    const severalRegions = this.#o.regions.length > 1;
    return new CloudMapAdapter({
      ...identity,
      client: { region, connectTimeoutMs: options.cloudMapConnectTimeout, ...(options.cloudMapEndpoint ? { endpoint: options.cloudMapEndpoint } : {}) },
      callTimeoutMs: options.cloudMapCallTimeout,
      // Stopping abandons the calls in flight, so a stop never waits on Cloud Map (SIGTERM within the grace period).
      signal: this.#stopped.signal,
      rateLimits: options.rateLimits,
      quotas: options.cloudMapQuotas,
      clusters: options.clusters,
      quotaShare: options.cloudMapQuotaShare / 100,
      metrics: metrics.cloudMap(region),
      ...(this.#o.fence ? { fence: this.#o.fence } : {}),
      ...(options.namespaceOwnerAccount ? { namespaceOwner: options.namespaceOwnerAccount } : {}),
      ...(options.accountId ? { accountId: options.accountId } : {}),
      logger: cloudMapLog.child({ clusterId: identity.clusterId, ...(severalRegions ? { region } : {}) }),
    });
  }

  /** What the change watch of one Region reports to, and how often it reads. */
  #watchOptions(region: string) {
    const { options, metrics, informers } = this.#o;
    return {
      onChange: (change: ServiceKey) => this.#onCloudMapChange(change),
      onReachability: (reachability: Reachability) => this.#onReachability(region, reachability),
      pollIntervalMs: options.pollInterval,
      fullResyncIntervalMs: options.fullResyncInterval,
      resyncBudgetPerMinute: options.resyncBudget,
      nonAnnouncingPollIntervalMs: options.nonAnnouncingPollInterval,
      operationsPollIntervalMs: options.operationsPollInterval,
      heartbeatIntervalMs: options.heartbeatInterval,
      onHeartbeat: () => metrics.heartbeats.inc(),
      // What this cluster exports and imports is read first; the rest of Cloud Map is listed after start (M6). Asked
      // for once the namespaces and the markers are read: the ServiceImports may still be listing then (M9).
      knownServices: async () => {
        await Promise.all([informers.serviceExports.waitForSync(this.#stopped.signal), informers.serviceImports.waitForSync(this.#stopped.signal)]);
        return [
          ...informers.serviceExports.list().map((se) => ({ namespace: se.metadata.namespace ?? '', service: se.metadata.name })),
          ...informers.serviceImports.list().filter(keptByUs).map((si) => ({ namespace: si.metadata.namespace ?? '', service: si.metadata.name })),
        ];
      },
    };
  }

  /** Warm start (M9): this Region's reads are checkpointed in the worker's namespace; other Regions start cold. */
  #checkpointOptions(region: string) {
    const { options, identity, kubeConfig } = this.#o;
    if (!options.warmStart) return {};
    const checkpoints = new KubeCheckpointStore({
      client: kubeClientFor(kubeConfig), namespace: options.namespace, owner: { clusterId: identity.clusterId, clustersetId: identity.clustersetId, region },
      log: this.#log.child({ controller: 'checkpoint' }),
    });
    return { checkpoints, checkpointIntervalMs: options.checkpointInterval };
  }

  /** Liveness of the other clusters from their heartbeats, and the reaper when --reap-dead-clusters-after is set. */
  #createDeadClusters(): DeadClusters {
    const { options, identity, metrics } = this.#o;
    return new DeadClusters({
      self: identity.clusterId,
      ttlMs: options.deadClusterTtl,
      reapAfterMs: options.reapDeadClustersAfter,
      heartbeats: () => this.#watcher.heartbeats(),
      onChange: (clusters) => this.#onSilenceChange(clusters),
      reap: (clusterId) => reapDeadCluster({ cloudMap: this.#cloudMap, watcher: this.#watcher, log: this.#log.child({ controller: 'reaper' }) }, clusterId),
      onSilentCount: (n) => metrics.silentClusters.set(n),
      onReaped: (n) => metrics.reapedInstances.inc(n),
      log: this.#log.child({ controller: 'liveness' }),
    });
  }

  #createExporter(): ExportReconciler {
    const { options, identity, metrics, informers, writer } = this.#o;
    return new ExportReconciler({
      identity: identity,
      frozen: () => this.#frozen,
      serviceExports: informers.serviceExports,
      services: informers.services,
      endpointSlices: informers.endpointSlices,
      cloudMap: this.#cloudMap,
      view: this.#view,
      nonAnnouncingWriterSeen: () => this.#watcher.nonAnnouncingWriterSeen(),
      clusterSetInstances: (namespace, service) => this.#clusterSetInstances(namespace, service),
      markChanged: (namespace, service) => {
        this.#watcher.markChanged(namespace, [service]).catch((err: unknown) => {
          this.#log.debug({ event: 'marker-bump-failed', namespace, service, err: errorText(err) }, 'change marker not bumped; peers catch up at their full resync');
        });
      },
      announceComing: () => this.#watcher.announceComing(),
      onWritten: (key) => {
        const started = this.#exportStarted.get(key);
        if (started !== undefined && !this.#pendingLag.has(key)) this.#pendingLag.set(key, started);
        this.#imports.add(key);
      },
      writer: writer,
      status: this.#exportStatus,
      controllerVersion: options.controllerVersion,
      namespaceCleanup: options.namespaceCleanup,
      quotaRetryMs: options.quotaRetryInterval,
      retryAfter: (key, ms) => this.#exports.addAfter(key, ms),
      onQuotaHolds: (held) => {
        for (const [quota, { exports, unregistered }] of held) {
          metrics.quotaLimitedExports.set({ quota }, exports);
          metrics.quotaUnregisteredInstances.set({ quota }, unregistered);
        }
      },
      log: this.#log.child({ controller: 'export' }),
    });
  }

  #createImporter(): ImportReconciler {
    const { identity, metrics, informers, writer, kubeConfig } = this.#o;
    return new ImportReconciler({
      identity: identity,
      // This cluster's Region with its own writes, and every other Region as last read.
      view: { instances: (namespace, service) => this.#clusterSetInstances(namespace, service) },
      ...(this.#others.length > 0 ? { regions: (namespace: string, service: string) => this.#regionStates(namespace, service) } : {}),
      namespaces: informers.namespaces,
      serviceImports: informers.serviceImports,
      services: informers.services,
      endpointSlices: informers.endpointSlices,
      writer: writer,
      client: kubeClientFor(kubeConfig),
      silent: () => this.#deadClusters.silent,
      onTotals: (services, endpoints) => {
        metrics.importedServices.set(services);
        metrics.importedEndpoints.set(endpoints);
      },
      onImported: (key) => {
        const started = this.#pendingLag.get(key);
        if (started === undefined) return;
        this.#pendingLag.delete(key);
        metrics.exportToImportLag.observe((Date.now() - started) / 1000);
      },
      log: this.#log.child({ controller: 'import' }),
    });
  }

  #queue(name: 'export' | 'import', reconcile: (key: string) => Promise<void>): WorkQueue<string> {
    return new WorkQueue<string>({
      name,
      concurrency: name === 'export' ? this.#o.options.exportWorkers : this.#o.options.importWorkers,
      metrics: this.#o.metrics.workQueue,
      logger: this.#log.child({ controller: name }),
      handler: async (key) => {
        await this.#cachesCurrent();
        if (this.#stopped.signal.aborted) return;
        const started = performance.now();
        try {
          await reconcile(key);
          this.#o.metrics.observeReconcile(name, 'success', (performance.now() - started) / 1000);
        } catch (err) {
          // Cut short by stop(), which cancels the Cloud Map calls in flight: nothing failed, and nothing to retry here.
          if (err instanceof CallCancelledError) return;
          this.#o.metrics.observeReconcile(name, 'error', (performance.now() - started) / 1000);
          throw err;
        }
      },
    });
  }

  /**
   * Waits while some watch of this cluster's apiserver is recovering (an apiserver restart, a network cut): a reconcile
   * on a cache that does not show the last writes would repeat them, and an import would be written once per stale
   * pass instead of once (I3). Resolves at once when every cache is current, or when the member stops.
   */
  async #cachesCurrent(): Promise<void> {
    const { informers } = this.#o;
    if (informers.current()) return;
    this.#paused ??= (async () => {
      const since = Date.now();
      this.#log.warn({ event: 'reconcile-paused' }, 'a list or watch of this cluster\'s apiserver failed; reconciling waits until every cache has caught up');
      try {
        await informers.waitUntilCurrent(this.#stopped.signal);
        this.#log.info({ event: 'reconcile-resumed', pausedMs: Date.now() - since }, 'every cache is current again; reconciling');
      } catch {
        // Stopped while waiting: the handlers return without reconciling.
      } finally {
        this.#paused = undefined;
      }
    })();
    await this.#paused;
  }

  /** The loops liveness watches: every Region's change watcher and both work queues. */
  progress(): LoopProgress[] {
    return [
      { name: `Cloud Map watcher (${this.#o.regions[0]})`, ...this.#watcher.progress },
      ...this.#others.map((r) => ({ name: `Cloud Map watcher (${r.region})`, ...r.watcher.progress })),
      { name: 'export queue', ...this.#exports.progress },
      { name: 'import queue', ...this.#imports.progress },
    ];
  }

  /** True once Cloud Map was read in full and every known key was queued. */
  get synced(): boolean {
    return this.#synced;
  }

  /**
   * Routes events, waits for the watcher's first full read of Cloud Map (retried until it succeeds) and for every
   * informer's first list, then queues every key this cluster knows of. Resolves early, without starting, if stop()
   * comes first.
   */
  async start(): Promise<void> {
    this.#route();
    const { informers } = this.#o;
    const stopped = new Promise<void>((resolve) => this.#stopped.signal.addEventListener('abort', () => resolve(), { once: true }));
    // The first read starts from what this cluster exports and imports (knownServices, which waits for their lists);
    // every other kind, the bulk of a start's lists, goes on listing meanwhile and is needed only to reconcile (M9).
    const listed = (...kinds: Informer<KubeObject>[]) => Promise.race([Promise.all(kinds.map((i) => i.waitForSync(this.#stopped.signal))), stopped]);
    if (this.#stopped.signal.aborted) return;
    const first = this.#watcher.start();
    await Promise.race([first, stopped]);
    await listed(informers.serviceExports, informers.serviceImports, informers.services, informers.endpointSlices, informers.namespaces);
    // Each other Region's first read re-imports everything once it completes (until then its clusters are missing).
    const others = this.#others.map((r) => r.watcher.start().then(() => this.#requeueImports()));
    if (others.length > 0) await Promise.race([Promise.all(others), sleep(OTHER_REGIONS_FIRST_READ_WAIT_MS, this.#stopped.signal)]);
    if (this.#stopped.signal.aborted) return;
    this.#synced = true;
    this.#deadClusters.evaluate();
    this.#deadClusters.start();
    const exports = informers.serviceExports.list().map((se) => keyOf(se.metadata.namespace ?? '', se.metadata.name));
    for (const key of startOrder(this.identity.clusterId, exports)) this.#exports.add(key);
    for (const si of informers.serviceImports.list()) if (keptByUs(si)) this.#imports.add(keyOf(si.metadata.namespace ?? '', si.metadata.name));
    for (const change of this.#services()) this.#onCloudMapChange(change);
    this.#log.info({
      event: 'member-started', cloudMapServices: this.#services().length, serviceExports: informers.serviceExports.list().length,
      ...(this.#others.length > 0 ? { regions: this.#o.regions, unread: this.#others.filter((r) => !r.watcher.synced).map((r) => r.region) } : {}),
    }, 'Cloud Map read; reconciling exports and imports');
  }

  /** C3: stop writing exports (every ServiceExport reports `message`) until thaw(). */
  freeze(message: string): void {
    this.#frozen = message;
    this.#log.error({ event: 'identity-changed', message }, 'cluster identity changed while exporting; exports frozen');
    this.#requeueExports();
  }

  thaw(): void {
    this.#frozen = undefined;
    this.#log.info({ event: 'identity-restored' }, 'cluster identity restored; exporting again');
    this.#requeueExports();
  }

  async stop(): Promise<void> {
    this.#stopped.abort();
    this.#synced = false;
    for (const remove of this.#removeHandlers.splice(0)) remove();
    await this.#deadClusters.stop();
    await Promise.all([this.#exports.shutdown(), this.#imports.shutdown()]);
    await Promise.all([this.#watcher, ...this.#others.map((r) => r.watcher)].map((w) => w.stop()));
    for (const cloudMap of [this.#cloudMap, ...this.#others.map((r) => r.cloudMap)]) cloudMap.destroy();
    this.#log.info({ event: 'member-stopped' }, 'stopped reconciling');
  }

  /** Every Region's instances of the service: this cluster's Region with its own writes, the others as last read. */
  #clusterSetInstances(namespace: string, service: string): CloudMapInstance[] {
    return [...this.#view.instances(namespace, service), ...this.#others.flatMap((r) => r.watcher.snapshot(namespace, service))];
  }

  /** Every service with instances in some Region of the ClusterSet. */
  #services(): ServiceKey[] {
    return [this.#watcher, ...this.#others.map((r) => r.watcher)].flatMap((w) => w.services());
  }

  /** Every Region as seen for one service: read yet, answering, and which clusters' instances of it it holds. */
  #regionStates(namespace: string, service: string): RegionState[] {
    const { clustersetId } = this.#o.identity;
    const state = (region: string, watcher: CloudMapWatcher, instances: readonly CloudMapInstance[]): RegionState => {
      const { reachable, since } = watcher.reachability;
      const clusters = new Set(instances.filter((i) => i.attributes[ATTR_CLUSTERSET_ID] === clustersetId).map((i) => i.attributes[ATTR_CLUSTER_ID] ?? ''));
      return { region, read: watcher.synced, reachable, ...(reachable ? {} : { since: conditionTime(new Date(since)) }), clusters: [...clusters].sort() };
    };
    return [
      state(this.#o.regions[0]!, this.#watcher, this.#view.instances(namespace, service)),
      ...this.#others.map((r) => state(r.region, r.watcher, r.watcher.snapshot(namespace, service))),
    ];
  }

  /** A Region stopped or started answering: metric, log line, and every import's RegionsReachable condition again. */
  #onReachability(region: string, reachability: Reachability): void {
    this.#o.metrics.regionReachable.set({ region }, reachability.reachable ? 1 : 0);
    if (reachability.reachable) this.#log.info({ event: 'region-reachable', region }, 'Cloud Map of the Region answers again; its imports are current');
    else this.#log.warn({ event: 'region-unreachable', region, err: reachability.error }, 'Cloud Map of the Region does not answer; imports from it keep the last endpoints read');
    if (this.#others.length > 0) this.#requeueImports();
    if (region !== this.#ownRegion) return;
    this.#cloudMapDown = reachability.reachable ? undefined : reachability.error ?? 'no answer';
    for (const se of this.#o.informers.serviceExports.list()) this.#reportWaiting(se.metadata.namespace ?? '', se.metadata.name);
  }

  /**
   * Before the first read of Cloud Map nothing is reconciled; while Cloud Map does not answer, each export says so
   * (Ready=False, Pending, "Waiting for Cloud Map: <error>") rather than showing no status at all. The first read then
   * queues every export and the reconciler writes the real conditions.
   */
  #reportWaiting(namespace: string, name: string): void {
    const why = this.#cloudMapDown;
    if (this.#synced || why === undefined || this.#stopped.signal.aborted) return;
    const se = this.#o.informers.serviceExports.get(namespace, name);
    if (se === undefined || se.metadata.deletionTimestamp !== undefined) return;
    this.#exportStatus.update(se, [readyCondition('Pending', se.metadata.generation ?? 0, `Cloud Map: ${why}`)]).catch((err: unknown) => {
      this.#log.warn({ event: 'export-status-failed', namespace, name, err: errorText(err) }, 'could not say on the ServiceExport that Cloud Map does not answer');
    });
  }

  #requeueImports(): void {
    if (!this.#synced) return;
    for (const si of this.#o.informers.serviceImports.list()) if (keptByUs(si)) this.#imports.add(keyOf(si.metadata.namespace ?? '', si.metadata.name));
  }

  #requeueExports(): void {
    if (!this.#synced) return;
    for (const se of this.#o.informers.serviceExports.list()) this.#exports.add(keyOf(se.metadata.namespace ?? '', se.metadata.name));
  }

  /** `resync`: from an informer's periodic pass, queued behind every change (M7: a new export waits for no resync). */
  #exportKey(namespace: string, name: string, resync = false): void {
    if (!this.#synced) this.#reportWaiting(namespace, name);
    else if (resync) this.#exports.addLow(keyOf(namespace, name));
    else this.#exports.add(keyOf(namespace, name));
  }

  #importKey(namespace: string, name: string, resync = false): void {
    if (!this.#synced) return;
    if (resync) this.#imports.addLow(keyOf(namespace, name));
    else this.#imports.add(keyOf(namespace, name));
  }

  /** Every service of a Cloud Map change is imported again; a local export of it re-checks its instances and conflicts. */
  #onCloudMapChange({ namespace, service }: ServiceKey): void {
    this.#importKey(namespace, service);
    if (this.#o.informers.serviceExports.get(namespace, service) !== undefined || this.#view.ours(namespace, service).length > 0) {
      this.#exportKey(namespace, service);
    }
  }

  /** Imports of every service in which a cluster that turned silent, or was heard again, has instances. */
  #onSilenceChange(clusters: ReadonlySet<string>): void {
    for (const { namespace, service } of this.#watcher.services()) {
      if (this.#watcher.snapshot(namespace, service).some((i) => clusters.has(i.attributes[ATTR_CLUSTER_ID] ?? ''))) this.#importKey(namespace, service);
    }
  }

  #route(): void {
    const { informers } = this.#o;
    // An informer's periodic resync delivers each cached object as its own old version.
    const on = <T extends KubeObject>(informer: { addHandlers(h: InformerHandlers<T>): () => void }, route: (o: T, resync: boolean) => void) => {
      this.#removeHandlers.push(informer.addHandlers({ onAdd: (o) => route(o, false), onUpdate: (o, old) => route(o, o === old), onDelete: (o) => route(o, false) }));
    };
    on(informers.serviceExports, (se, resync) => this.#exportKey(se.metadata.namespace ?? '', se.metadata.name, resync));
    on(informers.serviceImports, (si, resync) => this.#importKey(si.metadata.namespace ?? '', si.metadata.name, resync));
    on(informers.services, (svc, resync) => {
      const namespace = svc.metadata.namespace ?? '';
      const imported = createdByUs(svc) ? svc.metadata.labels?.[LABEL_SERVICE_NAME] : undefined;
      if (imported !== undefined) this.#importKey(namespace, imported, resync);
      else if (informers.serviceExports.get(namespace, svc.metadata.name) !== undefined) this.#exportKey(namespace, svc.metadata.name, resync);
    });
    on(informers.endpointSlices, (slice, resync) => {
      const namespace = slice.metadata.namespace ?? '';
      const labels = slice.metadata.labels ?? {};
      const imported = labels[LABEL_MANAGED_BY] === CONTROLLER_NAME ? labels[LABEL_SERVICE_NAME] : undefined;
      const exported = labels[LABEL_KUBE_SERVICE_NAME];
      if (imported !== undefined) this.#importKey(namespace, imported, resync);
      else if (exported !== undefined && informers.serviceExports.get(namespace, exported) !== undefined) this.#exportKey(namespace, exported, resync);
    });
    // I1: a namespace that appears can now hold the imports Cloud Map has for it.
    this.#removeHandlers.push(informers.namespaces.addHandlers({
      onAdd: (ns) => {
        for (const s of this.#services()) if (s.namespace === ns.metadata.name) this.#importKey(s.namespace, s.service);
      },
    }));
  }
}
