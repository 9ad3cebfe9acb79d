// Export side of one ServiceExport (E1–E8, M1–M4, X4): keep this cluster's Cloud Map instances of the service equal to
// its endpoints × ports, report Valid / Ready / Conflict, and clean up behind the finalizer.
//   watch (informer caches, Cloud Map view) → desired (buildClusterExport, instancesForExport) → diff (diffInstances)
//   → apply (register / deregister, bump the ClusterSet change marker, wait for the operations).
import { exportsFromInstances, instancesForExport } from '../../../core/cloudmap-attributes.ts';
import {
  cloudMapFailingCondition,
  conflictCondition,
  readyCondition,
  validCondition,
  type ConditionUpdate,
} from '../../../core/conditions.ts';
import { resolveImport } from '../../../core/conflicts.ts';
import { diffInstances, withdrawalOrder, type InstancePlan } from '../../../core/instance-diff.ts';
import { latestById } from '../../../core/instance-id.ts';
import {
  fitInstances,
  INSTANCES_PER_SERVICE,
  markPartial,
  quotaCondition,
  readQuotaRefusal,
  type InstanceQuota,
  type QuotaRefusal,
} from '../../../core/instance-quota.ts';
import {
  CONTROLLER_NAME,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
  SERVICE_EXPORT_FINALIZER,
} from '../../../core/names.ts';
import { buildClusterExport, exportValidity } from '../../../core/service-export.ts';
import type { CloudMapInstance } from '../../../core/types.ts';
import type { CloudMapAdapter } from '../../../cloudmap/adapter.ts';
import { CloudMapCallError, isTemporary } from '../../../cloudmap/errors.ts';
import { forEachLimited } from '../../../runtime/for-each-limited.ts';
import { errorText } from '../../../kube/api-error.ts';
import type { Informer } from '../../../runtime/informer.ts';
import type { ObjectWriter } from '../../../runtime/object-writer.ts';
import { SERVICE_EXPORTS } from '../../../kube/resources.ts';
import type { Logger } from '../../../observability/log.ts';
import type { Identity } from '../../cluster-identity.ts';
import type { ExportStatusWriter } from './export-status.ts';
import type { InstanceView } from '../../instance-view.ts';
import {
  keyOf,
  parseKey,
  type EndpointSliceObject,
  type ServiceExportObject,
  type ServiceObject,
} from '../../objects.ts';

export interface ExportReconcilerOptions {
  identity: Identity;
  /** The C3 message while the cluster's identity changed under its exports (then nothing new is written). */
  frozen: () => string | undefined;
  serviceExports: Informer<ServiceExportObject>;
  services: Informer<ServiceObject>;
  endpointSlices: Informer<EndpointSliceObject>;
  cloudMap: CloudMapAdapter;
  /** This cluster's Region of Cloud Map, with its own writes: where it registers. */
  view: InstanceView;
  /** Every Region's instances of a service (conflicts are ClusterSet-wide); default: the view's. */
  clusterSetInstances?: (namespace: string, service: string) => CloudMapInstance[];
  /** Tells peers (through the ClusterSet change marker) that this cluster changed `service` in `namespace`. */
  markChanged: (namespace: string, service: string) => void;
  /** Tells peers a change is coming after a wait Cloud Map imposes, so they watch the marker closely (M7). */
  announceComing: () => void;
  /** Called after this cluster's instances of a service changed, so the local import follows at once. */
  onWritten: (key: string) => void;
  writer: ObjectWriter;
  status: ExportStatusWriter;
  controllerVersion: string;
  /** Delete a Cloud Map namespace once it holds no services. */
  namespaceCleanup: boolean;
  /** Whether a writer that does not bump the change marker (the AWS controller v0.3.1) is seen in this Cloud Map. */
  nonAnnouncingWriterSeen: () => boolean;
  /** How long an export held back by a Cloud Map quota waits before it tries to register the rest again (M8). */
  quotaRetryMs: number;
  /** Reconciles `key` again after `ms`. */
  retryAfter: (key: string, ms: number) => void;
  /** The exports held back by a quota, and their desired instances Cloud Map does not hold, by quota (M8). */
  onQuotaHolds?: (held: ReadonlyMap<InstanceQuota, { exports: number; unregistered: number }>) => void;
  log: Logger;
}

/** What one write pass did, for logs. */
interface Applied {
  registered: number;
  deregistered: number;
  /** Cloud Map refused a new instance for a quota: that one and those after it were not registered. */
  refusal?: CloudMapCallError;
  /** Instances of the plan's registrations that are not registered (refused or not sent). */
  notRegistered: number;
}

/** An export Cloud Map holds only part of because a quota is reached (M8). */
interface QuotaHold {
  readonly refusal: QuotaRefusal;
  /** How many of this cluster's instances the service held then: the slots it may refill without asking again. */
  readonly held: number;
  /** Desired instances left out. */
  readonly unregistered: number;
  /** Not before then does it try for more slots (the clock of Date.now). */
  readonly retryAt: number;
}

/** The error code of a refusal for a resource quota. */
const RESOURCE_LIMIT_EXCEEDED = 'ResourceLimitExceeded';

/** Updates of one export's registered instances in flight at once (the rate limits pace them anyway). */
const UPDATES_IN_FLIGHT = 16;

export class ExportReconciler {
  readonly #o: ExportReconcilerOptions;
  readonly #holds = new Map<string, QuotaHold>();

  constructor(options: ExportReconcilerOptions) {
    this.#o = options;
  }

  async reconcile(key: string): Promise<void> {
    const { namespace, name } = parseKey(key);
    const serviceExport = this.#o.serviceExports.get(namespace, name);
    if (serviceExport === undefined) {
      // Normally the finalizer brought us here before the export went; this covers exports deleted without it (E3).
      await this.#withdraw(namespace, name, 'ServiceExport is gone');
      return;
    }
    const finalizers = serviceExport.metadata.finalizers ?? [];
    if (serviceExport.metadata.deletionTimestamp !== undefined) {
      if (!finalizers.includes(SERVICE_EXPORT_FINALIZER)) return;
      await this.#withdraw(namespace, name, 'ServiceExport is being deleted');
      await this.#o.writer.removeFinalizer(SERVICE_EXPORTS, namespace, name, SERVICE_EXPORT_FINALIZER);
      this.#o.log.info(
        { event: 'export-removed', namespace, name },
        "ServiceExport deleted: this cluster's Cloud Map instances removed, finalizer released",
      );
      return;
    }
    // The webhook adds the finalizer at admission; without the webhook, add it before anything is registered.
    if (!finalizers.includes(SERVICE_EXPORT_FINALIZER))
      await this.#o.writer.addFinalizer(SERVICE_EXPORTS, namespace, name, SERVICE_EXPORT_FINALIZER);

    const generation = serviceExport.metadata.generation ?? 0;
    const frozen = this.#o.frozen();
    if (frozen !== undefined) {
      await this.#o.status.update(serviceExport, [readyCondition('Failed', generation, frozen)]);
      return;
    }
    const service = this.#o.services.get(namespace, name);
    const validity = exportValidity(service);
    if (service === undefined || !validity.valid) {
      // E4, E5: nothing of an unexportable Service stays in Cloud Map; it is exported as soon as it becomes valid.
      await this.#withdraw(namespace, name, `Service ${validity.reason}`);
      const ready =
        validity.reason === 'NoService'
          ? readyCondition('Pending', generation, `Service ${namespace}/${name} to be created`)
          : readyCondition(
              'Failed',
              generation,
              `Service ${namespace}/${name} is of type ExternalName, which cannot be exported`,
            );
      await this.#o.status.update(serviceExport, [
        validCondition(validity, generation),
        ready,
        conflictCondition([], generation),
      ]);
      return;
    }

    let desired: CloudMapInstance[];
    try {
      desired = instancesForExport(
        buildClusterExport({
          service,
          serviceExport,
          endpointSlices: this.#localSlices(namespace, name),
          ...this.#o.identity,
        }),
        this.#o.controllerVersion,
      );
    } catch (err) {
      // Data this cluster's objects hold that Cloud Map cannot carry: retrying cannot help, a change of them will.
      this.#o.log.warn(
        { event: 'export-invalid-data', namespace, name, err: errorText(err) },
        'cannot build the Cloud Map instances of this export',
      );
      await this.#o.status.update(serviceExport, [
        validCondition(validity, generation),
        readyCondition('Failed', generation, errorText(err)),
      ]);
      return;
    }

    const current = this.#o.view.instances(namespace, name);
    const registered = new Set(current.filter((i) => this.#o.view.isOurs(i)).map((i) => i.id));
    const hold = this.#holds.get(key);
    // M8: while held back by a quota, only the slots this cluster held are refilled; when the retry is due (or with no
    // hold), everything is tried but what the fixed per-service quota rules out.
    const due = hold === undefined || Date.now() >= hold.retryAt;
    const capacity = due ? INSTANCES_PER_SERVICE - (current.length - registered.size) : hold.held;
    const fit = fitInstances({ desired, registered, capacity });
    // While held back, one instance tells the importing clusters how many there are in all (I5).
    const mark = fit.left > 0 || hold !== undefined ? desired.length : undefined;
    const diff = diffInstances({ desired: markPartial(fit.chosen, mark, registered), current, ...this.#o.identity });
    // Updates of registered instances first: a quota refusal stops only the registrations after it, and Cloud Map
    // never refuses to replace an instance it holds.
    const updated = diff.register.filter((i) => registered.has(i.id));
    const plan = { ...diff, register: [...updated, ...diff.register.filter((i) => !registered.has(i.id))] };
    const updates: ConditionUpdate[] = [validCondition(validity, generation)];
    // The ServiceExport as its status now stands: a wait for Cloud Map reported during the writes changes it.
    let stored = serviceExport;
    let waitReported: Promise<void> | undefined;
    // The first export of a namespace waits for Cloud Map to create it (an operation, and the account's 0.5/s quota):
    // say so while it lasts, alongside the creation rather than before it (M1, M7).
    const onNamespaceWait = () => {
      this.#o.announceComing();
      waitReported ??= this.#o.status
        .update(serviceExport, [
          ...updates,
          readyCondition(
            'Pending',
            generation,
            `Cloud Map to create namespace ${namespace}, which the first export of a namespace waits for`,
          ),
        ])
        .then(
          (written) => {
            stored = written;
          },
          (err: unknown) =>
            this.#o.log.warn(
              { namespace, name, err: errorText(err) },
              'could not report the wait for the Cloud Map namespace',
            ),
        );
    };
    let applied: Applied;
    try {
      applied = await this.#apply(namespace, name, plan, {
        atQuota: hold !== undefined || fit.left > 0,
        newFrom: updated.length,
        onNamespaceWait,
      });
      if (applied.registered + applied.deregistered > 0) {
        this.#o.log.info(
          {
            event: 'export-synced',
            namespace,
            name,
            registered: applied.registered,
            deregistered: applied.deregistered,
            instances: desired.length,
          },
          'Cloud Map instances updated',
        );
      }
    } catch (err) {
      await waitReported;
      // Throttling or a slow Cloud Map is retried with backoff inside the call and is no failure of the export (M6).
      // A call that still failed after its retries is an outage the user should see while it lasts (Ready Unknown,
      // naming the call); operations still running and stale ids are retried silently; a refusal is Ready False.
      if (err instanceof CloudMapCallError && err.retryable)
        await this.#o.status.update(stored, [...updates, cloudMapFailingCondition(generation, errorText(err))]);
      else if (!isTemporary(err))
        await this.#o.status.update(stored, [...updates, readyCondition('Failed', generation, errorText(err))]);
      throw err;
    }
    await waitReported;
    const nextHold = this.#nextHold(key, { namespace, name }, hold, due, applied, fit.chosen.length, desired.length);
    if (plan.blocked.length > 0) {
      const owners = [...new Set(plan.blocked.map((b) => b.owner))].join(', ');
      updates.push(
        readyCondition(
          'Failed',
          generation,
          `${plan.blocked.length} Cloud Map instance id(s) of this export are held by ${owners}; two clusters may share a cluster id (C4), give each cluster its own`,
        ),
      );
    } else if (nextHold !== undefined) {
      const counts = { registered: desired.length - nextHold.unregistered, desired: desired.length };
      updates.push(
        quotaCondition(nextHold.refusal, counts, namespace, Math.round(this.#o.quotaRetryMs / 1000), generation),
      );
    } else {
      updates.push(readyCondition('Exported', generation));
    }
    updates.push(this.#conflict(namespace, name, generation));
    await this.#o.status.update(stored, updates);
  }

  /**
   * M8: the export's quota hold after a write pass. A refusal starts one, or a new back-off of one that was due (the
   * key is queued again when it ends); one not due is kept; none is needed once every desired instance is registered.
   */
  #nextHold(
    key: string,
    where: { namespace: string; name: string },
    hold: QuotaHold | undefined,
    due: boolean,
    applied: Applied,
    chosen: number,
    desired: number,
  ): QuotaHold | undefined {
    let next: QuotaHold | undefined;
    if (applied.refusal !== undefined) {
      const held = chosen - applied.notRegistered;
      next = this.#startHold(key, readQuotaRefusal(applied.refusal.message, held), held, desired);
      // A first refusal: at once again, to write the mark for the importing clusters.
      if (hold === undefined) this.#o.retryAfter(key, 0);
    } else if (chosen < desired && !due && hold !== undefined) {
      next = { ...hold, unregistered: desired - chosen };
      // Whatever queued this reconcile, the retry stays scheduled (the queue keeps the earliest time).
      this.#o.retryAfter(key, Math.max(0, hold.retryAt - Date.now()));
    } else if (chosen < desired) {
      // Past the per-service quota by arithmetic: nothing was sent that Cloud Map would refuse.
      next = this.#startHold(key, { quota: 'InstancesPerService', limit: INSTANCES_PER_SERVICE }, chosen, desired);
    }
    if (next === undefined) this.#holds.delete(key);
    else this.#holds.set(key, next);
    if (next !== undefined && next !== hold && next.retryAt !== hold?.retryAt) {
      this.#o.log.warn(
        {
          event: 'export-quota-held',
          ...where,
          quota: next.refusal.quota,
          limit: next.refusal.limit,
          held: next.held,
          desired,
          retryInMs: this.#o.quotaRetryMs,
        },
        'Cloud Map quota reached: the registered instances stay, the rest wait for room',
      );
    } else if (next === undefined && hold !== undefined) {
      // At once again, to clear the mark.
      this.#o.retryAfter(key, 0);
      this.#o.log.info(
        { event: 'export-quota-released', ...where, desired },
        'every instance of the export fits in Cloud Map again',
      );
    }
    this.#reportHolds();
    return next;
  }

  #startHold(key: string, refusal: QuotaRefusal, held: number, desired: number): QuotaHold {
    this.#o.retryAfter(key, this.#o.quotaRetryMs);
    return { refusal, held, unregistered: desired - held, retryAt: Date.now() + this.#o.quotaRetryMs };
  }

  #reportHolds(): void {
    const byQuota = new Map<InstanceQuota, { exports: number; unregistered: number }>([
      ['InstancesPerService', { exports: 0, unregistered: 0 }],
      ['InstancesPerNamespace', { exports: 0, unregistered: 0 }],
    ]);
    for (const hold of this.#holds.values()) {
      const sum = byQuota.get(hold.refusal.quota)!;
      sum.exports++;
      sum.unregistered += hold.unregistered;
    }
    this.#o.onQuotaHolds?.(byQuota);
  }

  /** EndpointSlices of the exported Service, never the ones this controller writes for imports. */
  #localSlices(namespace: string, name: string): EndpointSliceObject[] {
    return this.#o.endpointSlices
      .listByLabel(LABEL_KUBE_SERVICE_NAME, name, namespace)
      .filter((s) => s.metadata.labels?.[LABEL_MANAGED_BY] !== CONTROLLER_NAME);
  }

  /** X1–X3 from every cluster's instances, ours as just written; the condition goes on every exporting cluster. */
  #conflict(namespace: string, name: string, generation: number): ConditionUpdate {
    const instances = (this.#o.clusterSetInstances ?? ((ns, n) => this.#o.view.instances(ns, n)))(namespace, name);
    const { exports } = exportsFromInstances(instances, {
      clustersetId: this.#o.identity.clustersetId,
      namespace,
      name,
    });
    const conflict = exports.length > 0 ? resolveImport(exports).conflict : undefined;
    return conflict === undefined
      ? conflictCondition([], generation)
      : conflictCondition(conflict.reasons, generation, conflict.message);
  }

  /**
   * Carries out `plan` on the Cloud Map service namespace/name (created when something is to be registered, M1).
   * `atQuota`: deregister first, to free slots. `newFrom`: the registrations from this index on are new instances
   * (those before it replace registered ones). `onNamespaceWait` is called when the namespace has to be created first.
   */
  async #apply(
    namespace: string,
    name: string,
    plan: InstancePlan,
    how: { atQuota: boolean; newFrom: number; onNamespaceWait?: () => void },
  ): Promise<Applied> {
    const { atQuota, newFrom, onNamespaceWait } = how;
    if (plan.register.length === 0 && plan.deregister.length === 0)
      return { registered: 0, deregistered: 0, notRegistered: 0 };
    const { cloudMap } = this.#o;
    // Instances read from Cloud Map mean the service exists there, maybe created by another cluster (M6).
    const existing = this.#o.view.instances(namespace, name).length > 0;
    const serviceId =
      plan.register.length > 0
        ? await cloudMap.ensureService(await cloudMap.ensureNamespace(namespace, onNamespaceWait), name, existing)
        : await this.#findService(namespace, name);
    if (serviceId === undefined)
      return this.#written(namespace, name, plan, { registered: 0, deregistered: 0, notRegistered: 0 });
    let registered: { instance: CloudMapInstance; operation: string }[] = [];
    let refusal: CloudMapCallError | undefined;
    const deregister = async (ids: readonly string[]) => {
      if (ids.length === 0) return;
      const operations = await cloudMap.deregisterInstances(serviceId, ids);
      this.#o.markChanged(namespace, name);
      await cloudMap.waitForOperations(operations);
    };
    const register = async () => {
      if (plan.register.length === 0) return;
      ({ registered, refusal } = await this.#register(serviceId, plan.register, newFrom));
      if (registered.length > 0) {
        this.#o.markChanged(namespace, name);
        await cloudMap.waitForOperations(registered.map((r) => r.operation));
      }
    };
    try {
      // At a quota the slots must be freed first (M8). Otherwise an endpoint that is gone leaves alongside the
      // registrations rather than after them (E8), unless it is the last instance of its Service port: then it waits,
      // so that peers never see the port or this cluster drop out of the import in between (I3).
      // The peers are told as soon as the operations are submitted, not once they succeed: the marker's own operation
      // then runs alongside them instead of after them, which halves export-to-import latency (M7). A marker that
      // becomes visible before the instances is caught by the readers' quick recheck (change-detection/service-reads.ts).
      if (atQuota) {
        await deregister(plan.deregister);
        await register();
      } else {
        const { early, late } = withdrawalOrder({
          deregister: plan.deregister,
          current: this.#o.view.instances(namespace, name),
          ...this.#o.identity,
        });
        const outcomes = await Promise.allSettled([deregister(early), register()]);
        for (const o of outcomes) if (o.status === 'rejected') throw o.reason;
        await deregister(late);
      }
    } catch (err) {
      // Some of the writes may have landed (a registration answered by a timeout, one of several that failed): the
      // next diff must start from what Cloud Map holds, not from our last complete write, or an instance registered
      // here stays there, unseen, until a resync (M4, E8). The marker bump makes every cluster, this one included,
      // re-read the service now; the re-read queues this export again.
      this.#o.view.forget(namespace, name);
      this.#o.markChanged(namespace, name);
      throw err;
    }
    const done: InstancePlan = { ...plan, register: registered.map((r) => r.instance) };
    const notRegistered = plan.register.length - registered.length;
    return this.#written(namespace, name, done, {
      registered: registered.length,
      deregistered: plan.deregister.length,
      notRegistered,
      ...(refusal ? { refusal } : {}),
    });
  }

  /**
   * Registers `instances`: the updates before `newFrom` UPDATES_IN_FLIGHT at once (never refused by a quota), then
   * the new ones one at a time in their order, so that when Cloud Map refuses one for a quota (ResourceLimitExceeded)
   * exactly those before it in the order got the slots, and the rest are not sent (M8). The refusal is returned, not
   * thrown, with what was registered; any other failure is thrown once the calls in flight have ended. One at a time
   * costs a round trip per new instance, well under the time the rate limits give each (M6).
   */
  async #register(
    serviceId: string,
    instances: readonly CloudMapInstance[],
    newFrom: number,
  ): Promise<{
    registered: { instance: CloudMapInstance; operation: string }[];
    refusal: CloudMapCallError | undefined;
  }> {
    const registered: { instance: CloudMapInstance; operation: string }[] = [];
    let refusal: CloudMapCallError | undefined;
    for (const [batch, inFlight] of [
      [instances.slice(0, newFrom), UPDATES_IN_FLIGHT],
      [instances.slice(newFrom), 1],
    ] as const) {
      const failures = await forEachLimited(batch, inFlight, async (instance) => {
        if (refusal !== undefined) return;
        try {
          registered.push({ instance, operation: await this.#o.cloudMap.registerInstance(serviceId, instance) });
        } catch (err) {
          if (!(err instanceof CloudMapCallError && err.code === RESOURCE_LIMIT_EXCEEDED)) throw err;
          refusal ??= err;
        }
      });
      if (failures.length > 0) throw failures[0]!.error;
    }
    return { registered, refusal };
  }

  /** Records our instances after `plan` and tells the local import. */
  #written(namespace: string, name: string, plan: InstancePlan, applied: Applied): Applied {
    const ours = latestById(this.#o.view.ours(namespace, name));
    for (const id of plan.deregister) ours.delete(id);
    for (const instance of plan.register) ours.set(instance.id, instance);
    this.#o.view.recordWritten(namespace, name, [...ours.values()]);
    this.#o.onWritten(keyOf(namespace, name));
    return applied;
  }

  async #findService(namespace: string, name: string): Promise<string | undefined> {
    const namespaceId = await this.#o.cloudMap.findNamespace(namespace);
    return namespaceId === undefined ? undefined : this.#o.cloudMap.findService(namespaceId, name);
  }

  /**
   * E3: removes this cluster's instances of namespace/name (never another's, M4); then deletes the Cloud Map service
   * when no cluster has instances left, and the namespace when it is empty and clean-up is on (the AWS controller left
   * them orphaned: aws-cloud-map-mcs-controller-for-k8s issue 232).
   */
  async #withdraw(namespace: string, name: string, why: string): Promise<void> {
    if (this.#holds.delete(keyOf(namespace, name))) this.#reportHolds();
    const ours = this.#o.view.ours(namespace, name);
    if (ours.length === 0) return;
    const plan: InstancePlan = { register: [], deregister: ours.map((i) => i.id), blocked: [] };
    await this.#apply(namespace, name, plan, { atQuota: false, newFrom: 0 });
    this.#o.log.info(
      { event: 'export-withdrawn', namespace, name, why, deregistered: ours.length },
      "this cluster's Cloud Map instances removed",
    );
    if (this.#o.view.instances(namespace, name).length > 0) return;
    // M3: v0.3.1 reads every namespace through a 10 s cache of its services and fails the namespace's whole import while
    // a cached service is gone; whenever it is deleted, that cache can hold it, so waiting would not help. The empty
    // service stays while such a controller is seen (nothing is imported from it); a later unexport deletes it.
    if (this.#o.nonAnnouncingWriterSeen()) {
      this.#o.log.info(
        { event: 'cloudmap-service-kept', namespace, name },
        'empty Cloud Map service kept: a controller that caches services (AWS v0.3.1) is active in this ClusterSet',
      );
      return;
    }
    const namespaceId = await this.#o.cloudMap.findNamespace(namespace);
    const serviceId = namespaceId === undefined ? undefined : await this.#o.cloudMap.findService(namespaceId, name);
    if (serviceId === undefined || !(await this.#o.cloudMap.deleteServiceIfEmpty(serviceId))) return;
    this.#o.log.info(
      { event: 'cloudmap-service-deleted', namespace, name },
      'Cloud Map service deleted: no cluster exports it any more',
    );
    if (
      this.#o.namespaceCleanup &&
      namespaceId !== undefined &&
      (await this.#o.cloudMap.deleteNamespaceIfEmpty(namespaceId))
    ) {
      this.#o.log.info(
        { event: 'cloudmap-namespace-deleted', namespace },
        'Cloud Map namespace deleted: it holds no services',
      );
    }
  }
}
