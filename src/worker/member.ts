// The reconcilers of a cluster that has an identity in a ClusterSet: the Cloud Map adapter and change watcher bound to
// that identity, the export and import work queues (keys `namespace/name`), and the routing of informer and Cloud
// Map events to keys. Started when the identity is known (and this replica leads), stopped when either ends.
//
// Nothing is reconciled before the watcher's first full read of Cloud Map: with an empty view the export side would
// re-register every instance and the import side would delete every ServiceImport.
import { CloudMapAdapter } from '../cloudmap/adapter.ts';
import type { CloudMapWatcher, ServiceKey } from '../cloudmap/watcher.ts';
import { CONTROLLER_NAME, LABEL_KUBE_SERVICE_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '../core/names.ts';
import { errorText } from '../kube/api-error.ts';
import { kubeClientFor } from '../kube/client.ts';
import type { EventRecorder } from '../kube/event-recorder.ts';
import type { InformerHandlers } from '../kube/informer.ts';
import type { ObjectWriter } from '../kube/object-writer.ts';
import type { KubeObject } from '../kube/resources.ts';
import { WorkQueue } from '../kube/work-queue.ts';
import type { Logger } from '../observability/log.ts';
import type { WorkerMetrics } from '../observability/metrics.ts';
import type { Identity } from './cluster-identity.ts';
import { ExportReconciler } from './export-reconciler.ts';
import { ExportStatusWriter } from './export-status.ts';
import { createdByUs, ImportReconciler } from './import-reconciler.ts';
import type { WorkerInformers } from './informers.ts';
import { InstanceView } from './instance-view.ts';
import { keyOf } from './objects.ts';
import type { WorkerOptions } from './options.ts';
import type { KubeAccess } from '../kube/kube-access.ts';

/** How long our own writes override the watcher's view: several marker polls plus its eventual-consistency recheck. */
const OWN_WRITES_TTL_MS = 30_000;

export interface MemberOptions {
  identity: Identity;
  options: WorkerOptions;
  region: string;
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
  readonly #view: InstanceView;
  readonly #exports: WorkQueue<string>;
  readonly #imports: WorkQueue<string>;
  readonly #removeHandlers: Array<() => void> = [];
  /** Start of the export reconcile whose writes the local import has not shown yet, per key (lag metric). */
  readonly #exportStarted = new Map<string, number>();
  readonly #pendingLag = new Map<string, number>();
  readonly #stopped = new AbortController();
  #frozen: string | undefined;
  #synced = false;

  constructor(o: MemberOptions) {
    this.identity = o.identity;
    this.#o = o;
    this.#log = o.log.child({ clusterId: o.identity.clusterId, clustersetId: o.identity.clustersetId });
    const { options } = o;
    this.#cloudMap = new CloudMapAdapter({
      ...o.identity,
      client: { region: o.region, ...(options.cloudMapEndpoint ? { endpoint: options.cloudMapEndpoint } : {}) },
      rateLimits: options.rateLimits,
      quotas: options.cloudMapQuotas,
      clusters: options.clusters,
      metrics: o.metrics.cloudMap,
      ...(o.fence ? { fence: o.fence } : {}),
      logger: o.cloudMapLog.child({ clusterId: o.identity.clusterId }),
    });
    this.#watcher = this.#cloudMap.watch({
      onChange: (change) => this.#onCloudMapChange(change),
      pollIntervalMs: options.pollInterval,
      fullResyncIntervalMs: options.fullResyncInterval,
      resyncBudgetPerMinute: options.resyncBudget,
      // What this cluster exports and imports is read first; the rest of Cloud Map is listed after start (M6).
      knownServices: () => [
        ...o.informers.serviceExports.list().map((se) => ({ namespace: se.metadata.namespace ?? '', service: se.metadata.name })),
        ...o.informers.serviceImports.list().filter(createdByUs).map((si) => ({ namespace: si.metadata.namespace ?? '', service: si.metadata.name })),
      ],
    });
    this.#view = new InstanceView((namespace, service) => this.#watcher.snapshot(namespace, service), o.identity, OWN_WRITES_TTL_MS);

    const { informers } = o;
    const exporter = new ExportReconciler({
      identity: o.identity,
      frozen: () => this.#frozen,
      serviceExports: informers.serviceExports,
      services: informers.services,
      endpointSlices: informers.endpointSlices,
      cloudMap: this.#cloudMap,
      view: this.#view,
      markChanged: (namespace, service) => {
        this.#watcher.markChanged(namespace, [service]).catch((err: unknown) => {
          this.#log.debug({ event: 'marker-bump-failed', namespace, service, err: errorText(err) }, 'change marker not bumped; peers catch up at their full resync');
        });
      },
      onWritten: (key) => {
        const started = this.#exportStarted.get(key);
        if (started !== undefined && !this.#pendingLag.has(key)) this.#pendingLag.set(key, started);
        this.#imports.add(key);
      },
      writer: o.writer,
      status: new ExportStatusWriter(o.writer, o.events),
      controllerVersion: options.controllerVersion,
      namespaceCleanup: options.namespaceCleanup,
      log: this.#log.child({ controller: 'export' }),
    });
    const importer = new ImportReconciler({
      identity: o.identity,
      view: this.#view,
      namespaces: informers.namespaces,
      serviceImports: informers.serviceImports,
      services: informers.services,
      endpointSlices: informers.endpointSlices,
      writer: o.writer,
      client: kubeClientFor(o.kubeConfig),
      onTotals: (services, endpoints) => {
        o.metrics.importedServices.set(services);
        o.metrics.importedEndpoints.set(endpoints);
      },
      onImported: (key) => {
        const started = this.#pendingLag.get(key);
        if (started === undefined) return;
        this.#pendingLag.delete(key);
        o.metrics.exportToImportLag.observe((Date.now() - started) / 1000);
      },
      log: this.#log.child({ controller: 'import' }),
    });
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

  #queue(name: 'export' | 'import', reconcile: (key: string) => Promise<void>): WorkQueue<string> {
    return new WorkQueue<string>({
      name,
      concurrency: name === 'export' ? this.#o.options.exportWorkers : this.#o.options.workers,
      metrics: this.#o.metrics.workQueue,
      logger: this.#log.child({ controller: name }),
      handler: async (key) => {
        const started = performance.now();
        try {
          await reconcile(key);
          this.#o.metrics.observeReconcile(name, 'success', (performance.now() - started) / 1000);
        } catch (err) {
          this.#o.metrics.observeReconcile(name, 'error', (performance.now() - started) / 1000);
          throw err;
        }
      },
    });
  }

  /** True once Cloud Map was read in full and every known key was queued. */
  get synced(): boolean {
    return this.#synced;
  }

  /**
   * Routes events, waits for the watcher's first full read of Cloud Map (retried until it succeeds), then queues every
   * key this cluster knows of. Resolves early, without starting, if stop() comes first.
   */
  async start(): Promise<void> {
    this.#route();
    const first = this.#watcher.start();
    const stopped = new Promise<void>((resolve) => this.#stopped.signal.addEventListener('abort', () => resolve(), { once: true }));
    await Promise.race([first, stopped]);
    if (this.#stopped.signal.aborted) return;
    this.#synced = true;
    const { informers } = this.#o;
    for (const se of informers.serviceExports.list()) this.#exports.add(keyOf(se.metadata.namespace ?? '', se.metadata.name));
    for (const si of informers.serviceImports.list()) if (createdByUs(si)) this.#imports.add(keyOf(si.metadata.namespace ?? '', si.metadata.name));
    for (const change of this.#watcher.services()) this.#onCloudMapChange(change);
    this.#log.info({ event: 'member-started', cloudMapServices: this.#watcher.services().length, serviceExports: informers.serviceExports.list().length },
      'Cloud Map read; reconciling exports and imports');
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
    await Promise.all([this.#exports.shutdown(), this.#imports.shutdown()]);
    await this.#watcher.stop();
    this.#cloudMap.destroy();
    this.#log.info({ event: 'member-stopped' }, 'stopped reconciling');
  }

  #requeueExports(): void {
    if (!this.#synced) return;
    for (const se of this.#o.informers.serviceExports.list()) this.#exports.add(keyOf(se.metadata.namespace ?? '', se.metadata.name));
  }

  #exportKey(namespace: string, name: string): void {
    if (this.#synced) this.#exports.add(keyOf(namespace, name));
  }

  #importKey(namespace: string, name: string): void {
    if (this.#synced) this.#imports.add(keyOf(namespace, name));
  }

  /** Every service of a Cloud Map change is imported again; a local export of it re-checks its instances and conflicts. */
  #onCloudMapChange({ namespace, service }: ServiceKey): void {
    this.#importKey(namespace, service);
    if (this.#o.informers.serviceExports.get(namespace, service) !== undefined || this.#view.ours(namespace, service).length > 0) {
      this.#exportKey(namespace, service);
    }
  }

  #route(): void {
    const { informers } = this.#o;
    const on = <T extends KubeObject>(informer: { addHandlers(h: InformerHandlers<T>): () => void }, route: (o: T) => void, onDelete = route) => {
      this.#removeHandlers.push(informer.addHandlers({ onAdd: route, onUpdate: (o) => route(o), onDelete }));
    };
    on(informers.serviceExports, (se) => this.#exportKey(se.metadata.namespace ?? '', se.metadata.name));
    on(informers.serviceImports, (si) => this.#importKey(si.metadata.namespace ?? '', si.metadata.name));
    on(informers.services, (svc) => {
      const namespace = svc.metadata.namespace ?? '';
      const imported = createdByUs(svc) ? svc.metadata.labels?.[LABEL_SERVICE_NAME] : undefined;
      if (imported !== undefined) this.#importKey(namespace, imported);
      else if (informers.serviceExports.get(namespace, svc.metadata.name) !== undefined) this.#exportKey(namespace, svc.metadata.name);
    });
    on(informers.endpointSlices, (slice) => {
      const namespace = slice.metadata.namespace ?? '';
      const labels = slice.metadata.labels ?? {};
      const imported = labels[LABEL_MANAGED_BY] === CONTROLLER_NAME ? labels[LABEL_SERVICE_NAME] : undefined;
      const exported = labels[LABEL_KUBE_SERVICE_NAME];
      if (imported !== undefined) this.#importKey(namespace, imported);
      else if (exported !== undefined && informers.serviceExports.get(namespace, exported) !== undefined) this.#exportKey(namespace, exported);
    });
    // I1: a namespace that appears can now hold the imports Cloud Map has for it.
    this.#removeHandlers.push(informers.namespaces.addHandlers({
      onAdd: (ns) => {
        for (const s of this.#watcher.services()) if (s.namespace === ns.metadata.name) this.#importKey(s.namespace, s.service);
      },
    }));
  }
}
