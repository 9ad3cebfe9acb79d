// The controllers of a cluster that has an identity in a ClusterSet, and what they share: the Cloud Map adapter and
// change watcher of each Region bound to that identity, the view of Cloud Map with this cluster's own writes, and the
// liveness of the other clusters. The controllers are declared in controllers/ (export, import, dead-cluster); this
// file wires them. Started when the identity is known (and this replica leads), stopped when either ends.
//
// Nothing is reconciled before the watcher's first full read of Cloud Map: with an empty view the export side would
// re-register every instance and the import side would delete every ServiceImport.
import { CloudMapAdapter } from '../cloudmap/adapter.ts';
import { CallCancelledError } from '../cloudmap/errors.ts';
import { watchCloudMap, type CloudMapWatcher } from '../change-detection/cloudmap-watcher.ts';
import type { Reachability } from '../change-detection/marker-polling.ts';
import type { ServiceKey } from '../change-detection/service-cache.ts';
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID } from '../core/names.ts';
import { conditionTime } from '../core/conditions.ts';
import type { CloudMapInstance } from '../core/types.ts';
import { sleep } from '../runtime/backoff.ts';
import { errorText } from '../kube/api-error.ts';
import { kubeClientFor } from '../kube/client.ts';
import type { EventRecorder } from '../kube/event-recorder.ts';
import type { Controller } from '../runtime/controller.ts';
import type { ControllerSettings } from '../runtime/controller-builder.ts';
import { Channel } from '../runtime/event-sources.ts';
import type { Informer } from '../runtime/informer.ts';
import type { ObjectWriter } from '../runtime/object-writer.ts';
import type { KubeObject } from '../kube/resources.ts';
import type { Logger } from '../observability/log.ts';
import type { WorkerMetrics } from './metrics.ts';
import type { Identity } from './cluster-identity.ts';
import { deadClusterController } from './controllers/dead-cluster/controller.ts';
import { reapDeadCluster } from './controllers/dead-cluster/dead-cluster-reaper.ts';
import { DeadClusters } from './controllers/dead-cluster/dead-clusters.ts';
import { exportController, exportKeys } from './controllers/export/controller.ts';
import { ExportReconciler } from './controllers/export/export-reconciler.ts';
import { ExportStatusWriter } from './controllers/export/export-status.ts';
import { startOrder } from './controllers/export/start-order.ts';
import { WaitingStatus } from './controllers/export/waiting-status.ts';
import { importController, importKeys } from './controllers/import/controller.ts';
import { ImportReconciler } from './controllers/import/import-reconciler.ts';
import { ExportToImportLag } from './export-to-import-lag.ts';
import type { WorkerInformers } from './informers.ts';
import { InstanceView } from './instance-view.ts';
import type { LoopProgress } from './liveness.ts';
import { keptByUs } from './objects.ts';
import { KubeCheckpointStore } from './checkpoint-store.ts';
import { RegistrantWatch } from './registrants.ts';
import { namingOf, type WorkerOptions } from './options.ts';
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
  /** The opted-in Cloud Map services that no MCS controller registers (I9). */
  readonly #registrants: RegistrantWatch;
  /** Services of every Region that Cloud Map tells of a change to. */
  readonly #cloudMapChanges = new Channel<ServiceKey>();
  /** Clusters that turned silent or were heard again. */
  readonly #silenceChanges = new Channel<ReadonlySet<string>>();
  /** Clusters silent long enough to be reaped. */
  readonly #dueClusters = new Channel<readonly string[]>();
  readonly #exports: Controller<string>;
  readonly #imports: Controller<string>;
  readonly #deadClusterReaper: Controller<string>;
  readonly #lag: ExportToImportLag;
  readonly #stopped = new AbortController();
  #frozen: string | undefined;
  #synced = false;
  readonly #ownRegion: string;
  readonly #exportStatus: ExportStatusWriter;
  readonly #waiting: WaitingStatus;
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
    this.#watcher = watchCloudMap(this.#cloudMap, {
      ...this.#watchOptions(ownRegion!),
      ...this.#checkpointOptions(ownRegion!),
    });
    this.#others = otherRegions.map((region) => {
      const cloudMap = this.#adapterFor(region);
      return { region, cloudMap, watcher: watchCloudMap(cloudMap, { ...this.#watchOptions(region), readOnly: true }) };
    });
    for (const region of o.regions) o.metrics.regionReachable.set({ region }, 1);
    this.#view = new InstanceView(
      (namespace, service) => this.#watcher.snapshot(namespace, service),
      (namespace, service) => this.#watcher.readAt(namespace, service),
      o.identity,
      OWN_WRITES_SETTLE_MS,
      () => this.#watcher.now(),
    );
    this.#lag = new ExportToImportLag((seconds) => o.metrics.exportToImportLag.observe(seconds));
    this.#waiting = new WaitingStatus({
      serviceExports: o.informers.serviceExports,
      status: this.#exportStatus,
      waiting: () => !this.#synced && !this.#stopped.signal.aborted,
      log: this.#log,
    });
    this.#deadClusters = this.#createDeadClusters();
    this.#registrants = new RegistrantWatch({
      cloudMap: this.#cloudMap,
      namespaces: () => o.informers.namespaces.list().map((ns) => ns.metadata.name),
      scanIntervalMs: o.options.registrantScanInterval,
      pollIntervalMs: o.options.registrantPollInterval,
      onChange: (service) => this.#cloudMapChanges.emit(service),
      signal: this.#stopped.signal,
      log: this.#log.child({ controller: 'registrants' }),
    });
    // The controllers, each declared in its folder under controllers/.
    this.#exports = this.#exportController();
    this.#imports = this.#importController();
    this.#deadClusterReaper = this.#deadClusterController();
  }

  get #controllers(): Controller<string>[] {
    return [this.#exports, this.#imports, this.#deadClusterReaper];
  }

  /**
   * What the export and import controllers share: metrics, logs, the member's stop, and no reconcile while a cache
   * of this cluster's apiserver is recovering.
   */
  #settings(name: string): Omit<ControllerSettings<string>, 'concurrency'> {
    return {
      metrics: this.#o.metrics,
      logger: this.#log.child({ controller: name }),
      signal: this.#stopped.signal,
      reconcileWhen: () => this.#cachesCurrent(),
      // Cut short by stop(), which cancels the Cloud Map calls in flight: nothing failed, and nothing to retry here.
      cancelled: (err) => err instanceof CallCancelledError,
    };
  }

  /** The Cloud Map adapter of one Region of the ClusterSet. */
  #adapterFor(region: string): CloudMapAdapter {
    const { options, identity, metrics, cloudMapLog } = this.#o;
    const severalRegions = this.#o.regions.length > 1;
    return new CloudMapAdapter({
      ...identity,
      client: {
        region,
        connectTimeoutMs: options.cloudMapConnectTimeout,
        ...(options.cloudMapEndpoint ? { endpoint: options.cloudMapEndpoint } : {}),
      },
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
      naming: namingOf(options),
      logger: cloudMapLog.child({ clusterId: identity.clusterId, ...(severalRegions ? { region } : {}) }),
    });
  }

  /** What the change watch of one Region reports to, and how often it reads. */
  #watchOptions(region: string) {
    const { options, metrics, informers } = this.#o;
    return {
      onChange: (change: ServiceKey) => this.#cloudMapChanges.emit(change),
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
        await Promise.all([
          informers.serviceExports.waitForSync(this.#stopped.signal),
          informers.serviceImports.waitForSync(this.#stopped.signal),
        ]);
        return [
          ...informers.serviceExports
            .list()
            .map((se) => ({ namespace: se.metadata.namespace ?? '', service: se.metadata.name })),
          ...informers.serviceImports
            .list()
            .filter(keptByUs)
            .map((si) => ({ namespace: si.metadata.namespace ?? '', service: si.metadata.name })),
        ];
      },
    };
  }

  /** Warm start (M9): this Region's reads are checkpointed in the worker's namespace; other Regions start cold. */
  #checkpointOptions(region: string) {
    const { options, identity, kubeConfig } = this.#o;
    if (!options.warmStart) return {};
    const checkpoints = new KubeCheckpointStore({
      client: kubeClientFor(kubeConfig),
      namespace: options.namespace,
      owner: { clusterId: identity.clusterId, clustersetId: identity.clustersetId, region },
      log: this.#log.child({ controller: 'checkpoint' }),
    });
    return { checkpoints, checkpointIntervalMs: options.checkpointInterval };
  }

  /** Liveness of the other clusters from their heartbeats, and which are due a reap (--reap-dead-clusters-after). */
  #createDeadClusters(): DeadClusters {
    const { options, identity, metrics } = this.#o;
    return new DeadClusters({
      self: identity.clusterId,
      ttlMs: options.deadClusterTtl,
      reapAfterMs: options.reapDeadClustersAfter,
      heartbeats: () => this.#watcher.heartbeats(),
      onChange: (clusters) => this.#silenceChanges.emit(clusters),
      onDue: (clusters) => this.#dueClusters.emit(clusters),
      onSilentCount: (n) => metrics.silentClusters.set(n),
      log: this.#log.child({ controller: 'liveness' }),
    });
  }

  #exportController(): Controller<string> {
    const { options, identity, metrics, informers, writer } = this.#o;
    const exporter = new ExportReconciler({
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
          this.#log.debug(
            { event: 'marker-bump-failed', namespace, service, err: errorText(err) },
            'change marker not bumped; peers catch up at their full resync',
          );
        });
      },
      announceComing: () => this.#watcher.announceComing(),
      onWritten: (key) => {
        this.#lag.written(key);
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
    return exportController({
      settings: {
        ...this.#settings('export'),
        concurrency: options.exportWorkers,
        whileStarting: (key) => this.#waiting.reportKey(key),
      },
      informers,
      cloudMapChanges: this.#cloudMapChanges,
      ours: (namespace, service) => this.#view.ours(namespace, service).length > 0,
      reconcile: (key) => this.#lag.exporting(key, () => exporter.reconcile(key)),
    });
  }

  #importController(): Controller<string> {
    const { options, identity, metrics, informers, writer, kubeConfig } = this.#o;
    const importer = new ImportReconciler({
      identity: identity,
      // This cluster's Region with its own writes, and every other Region as last read.
      view: { instances: (namespace, service) => this.#clusterSetInstances(namespace, service) },
      ...(this.#others.length > 0
        ? { regions: (namespace: string, service: string) => this.#regionStates(namespace, service) }
        : {}),
      registrants: this.#registrants,
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
      onImported: (key) => this.#lag.imported(key),
      log: this.#log.child({ controller: 'import' }),
    });
    return importController({
      settings: { ...this.#settings('import'), concurrency: options.importWorkers },
      informers,
      cloudMapChanges: this.#cloudMapChanges,
      silenceChanges: this.#silenceChanges,
      cloudMapServices: () => [...this.#services(), ...this.#registrants.services()],
      // Silence is judged in this cluster's Region, where every cluster's heartbeat is.
      servicesOf: (clusters) =>
        this.#watcher
          .services()
          .filter(({ namespace, service }) =>
            this.#watcher.snapshot(namespace, service).some((i) => clusters.has(i.attributes[ATTR_CLUSTER_ID] ?? '')),
          ),
      reconcile: (key) => importer.reconcile(key),
    });
  }

  /** --reap-dead-clusters-after: the clusters DeadClusters finds silent that long, reaped one at a time. */
  #deadClusterController(): Controller<string> {
    const log = this.#log.child({ controller: 'reaper' });
    return deadClusterController({
      settings: { metrics: this.#o.metrics, logger: log, signal: this.#stopped.signal },
      due: this.#dueClusters,
      reap: (clusterId) => reapDeadCluster({ cloudMap: this.#cloudMap, watcher: this.#watcher, log }, clusterId),
      onReaped: (n) => this.#o.metrics.reapedInstances.inc(n),
      log: this.#log.child({ controller: 'liveness' }),
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
      this.#log.warn(
        { event: 'reconcile-paused' },
        "a list or watch of this cluster's apiserver failed; reconciling waits until every cache has caught up",
      );
      try {
        await informers.waitUntilCurrent(this.#stopped.signal);
        this.#log.info(
          { event: 'reconcile-resumed', pausedMs: Date.now() - since },
          'every cache is current again; reconciling',
        );
      } catch {
        // Stopped while waiting: the handlers return without reconciling.
      } finally {
        this.#paused = undefined;
      }
    })();
    await this.#paused;
  }

  /** The loops liveness watches: every Region's change watcher, and the export and import controllers' queues. */
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
   * Subscribes the controllers to their sources, waits for the watcher's first full read of Cloud Map (retried until it
   * succeeds) and for every informer's first list, then starts the controllers and queues every key this cluster knows
   * of. Resolves early, without starting, if stop() comes first.
   */
  async start(): Promise<void> {
    for (const controller of this.#controllers) controller.watch();
    const { informers } = this.#o;
    const stopped = new Promise<void>((resolve) =>
      this.#stopped.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    // The first read starts from what this cluster exports and imports (knownServices, which waits for their lists);
    // every other kind, the bulk of a start's lists, goes on listing meanwhile and is needed only to reconcile (M9).
    const listed = (...kinds: Informer<KubeObject>[]) =>
      Promise.race([Promise.all(kinds.map((i) => i.waitForSync(this.#stopped.signal))), stopped]);
    if (this.#stopped.signal.aborted) return;
    const first = this.#watcher.start();
    await Promise.race([first, stopped]);
    await listed(
      informers.serviceExports,
      informers.serviceImports,
      informers.services,
      informers.endpointSlices,
      informers.namespaces,
    );
    // Each other Region's first read re-imports everything once it completes (until then its clusters are missing).
    const others = this.#others.map((r) => r.watcher.start().then(() => this.#requeueImports()));
    if (others.length > 0)
      await Promise.race([Promise.all(others), sleep(OTHER_REGIONS_FIRST_READ_WAIT_MS, this.#stopped.signal)]);
    if (this.#stopped.signal.aborted) return;
    this.#synced = true;
    for (const controller of this.#controllers) controller.start();
    this.#deadClusters.evaluate();
    this.#deadClusters.start();
    this.#exports.requeue(startOrder(this.identity.clusterId, exportKeys(informers.serviceExports)));
    this.#imports.requeue(importKeys(informers.serviceImports));
    for (const change of this.#services()) this.#cloudMapChanges.emit(change);
    // The opted-in services of other registrants are found in the background: the start does not wait for their
    // listings (ListServices is 2/s per account). Until they are read an import without members is kept (I9); once
    // they are, every import is reconciled again, so one whose last member left meanwhile goes (I2).
    void this.#registrants.start().then(() => {
      if (!this.#stopped.signal.aborted) this.#requeueImports();
    });
    this.#log.info(
      {
        event: 'member-started',
        cloudMapServices: this.#services().length,
        serviceExports: informers.serviceExports.list().length,
        ...(this.#others.length > 0
          ? { regions: this.#o.regions, unread: this.#others.filter((r) => !r.watcher.synced).map((r) => r.region) }
          : {}),
      },
      'Cloud Map read; reconciling exports and imports',
    );
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
    this.#deadClusters.stop();
    // Each stops taking keys at once, then waits for its reconciles in flight (the reaper's reap too).
    await Promise.all(this.#controllers.map((c) => c.stop()));
    await Promise.all([this.#watcher, ...this.#others.map((r) => r.watcher)].map((w) => w.stop()));
    await this.#registrants.stop();
    for (const cloudMap of [this.#cloudMap, ...this.#others.map((r) => r.cloudMap)]) cloudMap.destroy();
    this.#log.info({ event: 'member-stopped' }, 'stopped reconciling');
  }

  /** Every Region's instances of the service: this cluster's Region with its own writes, the others as last read. */
  #clusterSetInstances(namespace: string, service: string): CloudMapInstance[] {
    return [
      ...this.#view.instances(namespace, service),
      ...this.#others.flatMap((r) => r.watcher.snapshot(namespace, service)),
    ];
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
      const clusters = new Set(
        instances
          .filter((i) => i.attributes[ATTR_CLUSTERSET_ID] === clustersetId)
          .map((i) => i.attributes[ATTR_CLUSTER_ID] ?? ''),
      );
      return {
        region,
        read: watcher.synced,
        reachable,
        ...(reachable ? {} : { since: conditionTime(new Date(since)) }),
        clusters: [...clusters].sort(),
      };
    };
    return [
      state(this.#o.regions[0]!, this.#watcher, this.#view.instances(namespace, service)),
      ...this.#others.map((r) => state(r.region, r.watcher, r.watcher.snapshot(namespace, service))),
    ];
  }

  /** A Region stopped or started answering: metric, log line, and every import's RegionsReachable condition again. */
  #onReachability(region: string, reachability: Reachability): void {
    this.#o.metrics.regionReachable.set({ region }, reachability.reachable ? 1 : 0);
    if (reachability.reachable)
      this.#log.info(
        { event: 'region-reachable', region },
        'Cloud Map of the Region answers again; its imports are current',
      );
    else
      this.#log.warn(
        { event: 'region-unreachable', region, err: reachability.error },
        'Cloud Map of the Region does not answer; imports from it keep the last endpoints read',
      );
    if (this.#others.length > 0) this.#requeueImports();
    if (region === this.#ownRegion)
      this.#waiting.cloudMapDown(reachability.reachable ? undefined : (reachability.error ?? 'no answer'));
  }

  #requeueImports(): void {
    this.#imports.requeue(importKeys(this.#o.informers.serviceImports));
  }

  #requeueExports(): void {
    this.#exports.requeue(exportKeys(this.#o.informers.serviceExports));
  }
}
