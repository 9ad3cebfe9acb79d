// Import side of one multi-cluster service (I1–I5, S1–S4): in a namespace that exists here, the ServiceImport, its
// derived Service and one set of EndpointSlices per exporting cluster, all computed from every cluster's Cloud Map
// instances; all of it removed once no cluster exports the service. Objects this controller did not create are never
// touched.
//   watch (Cloud Map view, informer caches) → desired (exportsFromInstances, resolveImport, desired*) → diff
//   (serviceImportNeedsUpdate, derivedServiceNeedsUpdate, diffEndpointSlices) → apply (server-side apply, patch, delete).
import { exportsFromInstances } from '../../../core/cloudmap-attributes.ts';
import { conditionTime, setCondition } from '../../../core/conditions.ts';
import { resolveImport, type ImportResolution } from '../../../core/conflicts.ts';
import {
  derivedServiceName,
  derivedServiceNeedsUpdate,
  desiredDerivedService,
  type DesiredDerivedService,
} from '../../../core/derived-service.ts';
import { diffEndpointSlices, planEndpointSlices } from '../../../core/endpoint-slices.ts';
import { partialExports, type QuotaCounts } from '../../../core/instance-quota.ts';
import { registrantExports, type RegistrantInstance } from '../../../core/registrants.ts';
import { servedWhilePortsChange, type ServedPorts } from '../../../core/ports.ts';
import { CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER } from '../../../core/names.ts';
import {
  desiredServiceImport,
  ENDPOINT_SLICE_OBJECTS,
  serviceImportNeedsUpdate,
  serviceImportOwnerReference,
  type DesiredServiceImport,
  type OwnerReference,
} from '../../../core/service-import.ts';
import type { CloudMapInstance, ClusterExport } from '../../../core/types.ts';
import { errorText, isInvalid } from '../../../kube/api-error.ts';
import { CONTENT_MERGE_PATCH, type KubeClient } from '../../../kube/client.ts';
import type { Informer } from '../../../runtime/informer.ts';
import type { ObjectWriter } from '../../../runtime/object-writer.ts';
import { ENDPOINT_SLICES, resourcePath, SERVICE_IMPORTS, SERVICES } from '../../../kube/resources.ts';
import type { Logger } from '../../../observability/log.ts';
import type { Identity } from '../../cluster-identity.ts';
import { regionsCondition, type RegionState } from '../../regions.ts';
import {
  createdByUs,
  keptByUs,
  keyOf,
  parseKey,
  type EndpointSliceObject,
  type NamespaceObject,
  type ServiceImportObject,
  type ServiceObject,
} from '../../objects.ts';

export interface ImportReconcilerOptions {
  identity: Identity;
  /** Every cluster's instances of a service, from every Region of the ClusterSet. */
  view: { instances(namespace: string, service: string): CloudMapInstance[] };
  /**
   * The Regions of a multi-Region ClusterSet as seen for one service (absent or one Region: single-Region, no
   * condition). While a Region was never read, nothing is removed that its clusters may still export.
   */
  regions?: (namespace: string, service: string) => readonly RegionState[];
  /**
   * The members that are not clusters (I9): instances of the service when its owner opted it in, and whether every
   * opted-in service was read since start (until then a missing member proves nothing).
   */
  registrants?: {
    instances(namespace: string, service: string): readonly RegistrantInstance[];
    readonly read: boolean;
  };
  namespaces: Informer<NamespaceObject>;
  serviceImports: Informer<ServiceImportObject>;
  services: Informer<ServiceObject>;
  endpointSlices: Informer<EndpointSliceObject>;
  writer: ObjectWriter;
  /** For JSON merge patches of the derived Service (which keep its ClusterIPs). */
  client: KubeClient;
  /**
   * Clusters whose heartbeat is older than --dead-cluster-ttl, each with when it was heard last: they stay in the
   * merge (ports, type, conflicts) but their endpoints are withdrawn and they leave status.clusters.
   */
  silent?: () => ReadonlyMap<string, number>;
  /** Called with the number of imported services and endpoints whenever they change (metrics). */
  onTotals?: (services: number, endpoints: number) => void;
  /** Called after a ServiceImport and its slices were written (export-to-import lag). */
  onImported?: (key: string) => void;
  log: Logger;
}

/** The derived Service as the ServiceImport needs it, or why this cluster refused its IP families (I5). */
type DerivedState = { clusterIPs: string[]; ipFamilies: string[] } | { ipFamilyNotSupported: string };

export class ImportReconciler {
  readonly #o: ImportReconcilerOptions;
  /** Endpoints imported per service, for the totals. */
  readonly #endpoints = new Map<string, number>();
  /** ServiceImports someone else created, already reported (reported once each). */
  readonly #foreign = new Set<string>();
  /** ServiceImports of v0.3.1 taken over, already reported. */
  readonly #adopted = new Set<string>();

  constructor(options: ImportReconcilerOptions) {
    this.#o = options;
  }

  async reconcile(key: string): Promise<void> {
    const { namespace, name } = parseKey(key);
    const ns = this.#o.namespaces.get(undefined, namespace);
    // I1: only where the namespace exists; never created by us. A terminating namespace refuses new objects.
    if (ns === undefined || ns.metadata.deletionTimestamp !== undefined) return this.#setEndpoints(key, undefined);
    const existing = this.#o.serviceImports.get(namespace, name);
    if (existing !== undefined && !keptByUs(existing)) {
      if (!this.#foreign.has(key)) {
        this.#foreign.add(key);
        this.#o.log.warn(
          { event: 'import-not-ours', namespace, name },
          'a ServiceImport this controller did not create exists; leaving it and its service alone',
        );
      }
      return;
    }
    this.#foreign.delete(key);
    if (existing !== undefined && !createdByUs(existing) && !this.#adopted.has(key)) {
      this.#adopted.add(key);
      this.#o.log.info(
        { event: 'import-taken-over', namespace, name },
        'taking over a ServiceImport the AWS controller v0.3.1 created (delete its derived Service once every import is taken over)',
      );
    }
    const target = { clustersetId: this.#o.identity.clustersetId, namespace, name };
    const clusters = exportsFromInstances(this.#o.view.instances(namespace, name), target);
    const registrants = registrantExports(this.#o.registrants?.instances(namespace, name) ?? [], target);
    const exports = [...clusters.exports, ...registrants.exports];
    const skipped = [...clusters.skipped, ...registrants.skipped];
    if (exports.length === 0 && existing !== undefined && this.#o.registrants?.read === false) {
      this.#o.log.info(
        { event: 'import-kept-registrants-unread', namespace, name },
        'no member found yet, but the opted-in Cloud Map services were not read since start: the import is kept',
      );
      return;
    }
    if (skipped.length > 0) {
      this.#o.log.debug(
        { event: 'instances-skipped', namespace, name, skipped: skipped.slice(0, 5), count: skipped.length },
        'malformed Cloud Map instances left out of the import',
      );
    }
    const regions = this.#o.regions?.(namespace, name) ?? [];
    const unread = regions.filter((r) => !r.read).map((r) => r.region);
    if (exports.length === 0 && unread.length > 0) {
      // Never drop an import because a Region could not be read: its clusters may still export the service.
      if (existing !== undefined) await this.#keep(namespace, name, existing, regions);
      return;
    }
    if (exports.length === 0) {
      await this.#remove(namespace, name, existing);
      return this.#setEndpoints(key, undefined);
    }
    const silent = new Map(
      [...(this.#o.silent?.() ?? [])].filter(([clusterId]) => exports.some((e) => e.clusterId === clusterId)),
    );
    const partial = partialExports(this.#o.view.instances(namespace, name), this.#o.identity.clustersetId);
    await this.#sync(namespace, name, existing, resolveImport(exports), exports, regions, silent, partial);
    this.#o.onImported?.(key);
  }

  async #sync(
    namespace: string,
    name: string,
    existing: ServiceImportObject | undefined,
    resolution: ImportResolution,
    exports: ClusterExport[],
    regions: readonly RegionState[],
    silent: ReadonlyMap<string, number>,
    partial: ReadonlyMap<string, QuotaCounts>,
  ): Promise<void> {
    const derivedName = derivedServiceName(namespace, name);
    const now = new Date();
    const desiredFor = (
      stored: ServiceImportObject | undefined,
      derived: DerivedState | undefined,
    ): DesiredServiceImport => {
      const desired = desiredServiceImport({
        namespace,
        name,
        resolution,
        derivedServiceName: derivedName,
        derivedService: derived !== undefined && 'clusterIPs' in derived ? derived : undefined,
        ipFamilyNotSupported:
          derived !== undefined && 'ipFamilyNotSupported' in derived ? derived.ipFamilyNotSupported : undefined,
        generation: stored?.metadata.generation,
        currentConditions: stored?.status?.conditions,
        now: conditionTime(now),
        silent,
        partial,
      });
      if (regions.length < 2) return desired;
      const conditions = setCondition(desired.status.conditions, regionsCondition(regions), now);
      return { ...desired, status: { ...desired.status, conditions } };
    };

    // The ServiceImport owns what is derived from it, so it must exist (with a uid) first.
    let serviceImport = existing;
    if (serviceImport?.metadata.uid === undefined)
      serviceImport = await this.#applyServiceImport(namespace, name, desiredFor(undefined, undefined));
    const owner = serviceImportOwnerReference(name, serviceImport.metadata.uid!);

    const sliceExports = exports.filter((e) => !silent.has(e.clusterId));
    const keepOthers = regions.some((r) => !r.read);
    const zoneHints = resolution.properties.trafficDistribution === 'PreferClose';
    const interim = await this.#servedWhilePortsChange(namespace, serviceImport, derivedName, resolution);
    if (interim !== undefined)
      await this.#syncSlices(namespace, name, derivedName, owner, sliceExports, interim, keepOthers, zoneHints);

    const derived = await this.#syncDerivedService(
      desiredDerivedService({ namespace, importName: name, owner, properties: resolution.properties }),
    );
    let desired = desiredFor(serviceImport, derived);
    const changes = serviceImportNeedsUpdate(desired, serviceImport);
    if (changes.metadata || changes.spec) {
      serviceImport = await this.#applyServiceImport(namespace, name, desired);
      // A spec change moved the generation: the conditions must observe the new one, or the next pass writes them again.
      desired = desiredFor(serviceImport, derived);
    }
    await this.#syncSlices(namespace, name, derivedName, owner, sliceExports, resolution.served, keepOthers, zoneHints);
    // After the slices: status.endpointSliceObjects says they are Present, and status.clusters names no cluster before
    // its endpoints are in place.
    if (serviceImportNeedsUpdate(desired, serviceImport).status) {
      await this.#o.writer.applyStatus(SERVICE_IMPORTS, { metadata: { namespace, name }, status: desired.status });
    }
  }

  /**
   * X5, strict port conflicts: when a port is about to be restated (another number, protocol or appProtocol under its
   * name), the served ports the slices must narrow to first, so no write in between puts a cluster's endpoints behind a
   * port it does not define as stated. The informer cache may lag behind this worker's own last write, so a restatement
   * it shows is confirmed with the API server: narrowing for nothing would take the port's endpoints away for a moment.
   */
  async #servedWhilePortsChange(
    namespace: string,
    serviceImport: ServiceImportObject,
    derivedName: string,
    resolution: ImportResolution,
  ): Promise<ServedPorts | undefined> {
    const {
      served,
      properties: { ports },
    } = resolution;
    const cached = [serviceImport.spec?.ports, this.#o.services.get(namespace, derivedName)?.spec?.ports];
    if (
      servedWhilePortsChange(
        served,
        ports,
        cached.filter((p) => p !== undefined),
      ) === undefined
    )
      return undefined;
    const live = await Promise.all([
      this.#o.writer.get<ServiceImportObject>(SERVICE_IMPORTS, namespace, serviceImport.metadata.name),
      this.#o.writer.get<ServiceObject>(SERVICES, namespace, derivedName),
    ]);
    return servedWhilePortsChange(
      served,
      ports,
      live.map((o) => o?.spec?.ports).filter((p) => p !== undefined),
    );
  }

  /** Keeps a ServiceImport whose exporters may be in a Region not read yet; only its RegionsReachable condition moves. */
  async #keep(
    namespace: string,
    name: string,
    existing: ServiceImportObject,
    regions: readonly RegionState[],
  ): Promise<void> {
    const current = existing.status?.conditions ?? [];
    const conditions = setCondition(current, regionsCondition(regions), new Date());
    if (JSON.stringify(conditions) === JSON.stringify(current)) return;
    this.#o.log.info(
      { event: 'import-kept', namespace, name, unread: regions.filter((r) => !r.read).map((r) => r.region) },
      'no exports seen, but some Regions were not read yet; the ServiceImport is kept',
    );
    // An apply owns what it names: leaving out a field this worker set would remove it. The slices stay, so Present.
    const status = {
      clusters: existing.status?.clusters ?? [],
      conditions,
      endpointSliceObjects: ENDPOINT_SLICE_OBJECTS,
    };
    await this.#o.writer.applyStatus(SERVICE_IMPORTS, { metadata: { namespace, name }, status });
  }

  async #applyServiceImport(
    namespace: string,
    name: string,
    desired: DesiredServiceImport,
  ): Promise<ServiceImportObject> {
    return this.#o.writer.apply<ServiceImportObject>(SERVICE_IMPORTS, {
      metadata: { namespace, name, labels: desired.labels, annotations: desired.annotations },
      spec: desired.spec,
    });
  }

  /** I4: creates, patches or (Headless ⇄ ClusterSetIP, new primary family) recreates the derived Service. */
  async #syncDerivedService(desired: DesiredDerivedService): Promise<DerivedState> {
    const { namespace, name } = desired.metadata;
    const current = this.#o.services.get(namespace, name);
    if (current !== undefined && !createdByUs(current)) {
      throw new Error(
        `Service ${namespace}/${name} exists but was not created by ${CONTROLLER_NAME}; rename or delete it so the derived Service of ServiceImport ${namespace}/${desired.metadata.labels[LABEL_SERVICE_NAME]} can be created`,
      );
    }
    try {
      if (current === undefined)
        return derivedState(
          await this.#o.writer.apply<ServiceObject>(SERVICES, { metadata: desired.metadata, spec: desired.spec }),
        );
      const change = derivedServiceNeedsUpdate(desired, current);
      switch (change.action) {
        case 'none':
          return derivedState(current);
        case 'update':
          return derivedState(
            await this.#o.client.request<ServiceObject>({
              method: 'PATCH',
              path: resourcePath(SERVICES, namespace, name),
              contentType: CONTENT_MERGE_PATCH,
              body: change.patch,
              target: `Service ${namespace}/${name}`,
            }),
          );
        case 'recreate':
          this.#o.log.info(
            { event: 'derived-service-recreated', namespace, name, why: change.why },
            'recreating the derived Service',
          );
          await this.#o.writer.delete(
            SERVICES,
            namespace,
            name,
            current.metadata.uid === undefined ? {} : { uid: current.metadata.uid },
          );
          return derivedState(
            await this.#o.writer.apply<ServiceObject>(SERVICES, { metadata: desired.metadata, spec: desired.spec }),
          );
      }
    } catch (err) {
      // I5: the apiserver refuses IP families this cluster is not configured for (422 on spec.ipFamilies).
      if (isInvalid(err) && /ipFamil/i.test(errorText(err))) return { ipFamilyNotSupported: errorText(err) };
      throw err;
    }
  }

  /** S1–S4: our slices of the import equal to the plan; deletes first (an addressType change reuses the name). */
  async #syncSlices(
    namespace: string,
    name: string,
    derivedName: string,
    owner: OwnerReference,
    exports: ClusterExport[],
    served: ServedPorts,
    keepOthers: boolean,
    zoneHints: boolean,
  ): Promise<void> {
    const plan = planEndpointSlices({
      namespace,
      importName: name,
      derivedServiceName: derivedName,
      owner,
      exports,
      served,
      zoneHints,
    });
    if (plan.problems.length > 0) {
      this.#o.log.warn(
        {
          event: 'endpoints-left-out',
          namespace,
          name,
          problems: plan.problems.slice(0, 5),
          count: plan.problems.length,
        },
        'some exported endpoints cannot be imported',
      );
    }
    const diff = diffEndpointSlices(plan.slices, this.#ourSlices(namespace, name));
    // While a Region was never read, the slices of clusters not seen may be its clusters': kept, not dropped.
    const exporting = new Set(exports.map((e) => e.clusterId));
    const deletes = keepOthers
      ? diff.delete.filter((slice) => exporting.has(this.#sourceCluster(namespace, slice) ?? ''))
      : diff.delete;
    await Promise.all(deletes.map((slice) => this.#o.writer.delete(ENDPOINT_SLICES, namespace, slice)));
    // We are the only writer of these slices (I6): apply without resourceVersion so a lagging cache causes no conflict.
    await Promise.all(
      [...diff.create, ...diff.update].map(({ metadata: { resourceVersion: _, ...metadata }, ...slice }) =>
        this.#o.writer.apply(ENDPOINT_SLICES, { ...slice, metadata }),
      ),
    );
    this.#setEndpoints(
      keyOf(namespace, name),
      plan.slices.reduce((n, s) => n + s.endpoints.length, 0),
    );
  }

  #sourceCluster(namespace: string, slice: string): string | undefined {
    return this.#o.endpointSlices.get(namespace, slice)?.metadata.labels?.[LABEL_SOURCE_CLUSTER];
  }

  #ourSlices(namespace: string, name: string): EndpointSliceObject[] {
    return this.#o.endpointSlices
      .listByLabel(LABEL_SERVICE_NAME, name, namespace)
      .filter((s) => s.metadata.labels?.[LABEL_MANAGED_BY] === CONTROLLER_NAME);
  }

  /** I2, S3: nobody exports the service any more; our slices, derived Service and ServiceImport go. */
  async #remove(namespace: string, name: string, existing: ServiceImportObject | undefined): Promise<void> {
    const slices = this.#ourSlices(namespace, name);
    const derived = this.#o.services.get(namespace, derivedServiceName(namespace, name));
    await Promise.all(slices.map((s) => this.#o.writer.delete(ENDPOINT_SLICES, namespace, s.metadata.name, uidOf(s))));
    if (derived !== undefined && createdByUs(derived))
      await this.#o.writer.delete(SERVICES, namespace, derived.metadata.name, uidOf(derived));
    if (existing !== undefined) await this.#o.writer.delete(SERVICE_IMPORTS, namespace, name, uidOf(existing));
    if (slices.length > 0 || derived !== undefined || existing !== undefined) {
      this.#o.log.info(
        { event: 'import-removed', namespace, name },
        'no cluster exports this service any more: ServiceImport, derived Service and EndpointSlices removed',
      );
    }
  }

  #setEndpoints(key: string, endpoints: number | undefined): void {
    const before = this.#endpoints.get(key);
    if (before === endpoints) return;
    if (endpoints === undefined) this.#endpoints.delete(key);
    else this.#endpoints.set(key, endpoints);
    let total = 0;
    for (const n of this.#endpoints.values()) total += n;
    this.#o.onTotals?.(this.#endpoints.size, total);
  }
}

function uidOf(object: { metadata: { uid?: string } }): { uid?: string } {
  return object.metadata.uid === undefined ? {} : { uid: object.metadata.uid };
}

function derivedState(service: ServiceObject): DerivedState {
  const spec = service.spec ?? {};
  const clusterIPs = spec.clusterIPs ?? (spec.clusterIP ? [spec.clusterIP] : []);
  return { clusterIPs, ipFamilies: spec.ipFamilies ?? [] };
}
