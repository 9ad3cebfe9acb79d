// Cloud Map instances: read (ListInstances, DiscoverInstances, DiscoverInstancesRevision) and write
// (RegisterInstance, DeregisterInstance) with the ownership check of M4 on every write.
import { randomUUID } from 'node:crypto';
import type { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import {
  DeregisterInstanceCommand,
  DiscoverInstancesCommand,
  DiscoverInstancesRevisionCommand,
  GetInstanceCommand,
  ListInstancesCommand,
  RegisterInstanceCommand,
} from '@aws-sdk/client-servicediscovery';
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID } from '../core/names.ts';
import type { RegistrantInstance } from '../core/registrants.ts';
import type { CloudMapInstance } from '../core/types.ts';
import type { CloudMapCaller } from './call.ts';
import { causeField, describeContext, isNotFound, OwnershipError, type CallContext } from './errors.ts';
import { inClusterset, sameInstances } from './instance-set.ts';
import type { OperationWaiter } from './operations.ts';
import { assertOwnAccount, assertOwnInstance, type Identity } from './ownership.ts';
import { collectPages } from '../runtime/paging.ts';
import type { CloudMapRegistry } from './registry.ts';

/** DiscoverInstances returns at most this many instances; a full page may be truncated. */
export const DISCOVER_MAX_RESULTS = 1000;

export interface DiscoveredInstances {
  readonly instances: CloudMapInstance[];
  /** Cloud Map's InstancesRevision of the service, when the response carried it. */
  readonly revision: number | undefined;
}

function toInstance(id: string | undefined, attributes: Record<string, string> | undefined): CloudMapInstance[] {
  return id === undefined ? [] : [{ id, attributes: { ...attributes } }];
}

export class CloudMapInstances {
  readonly #client: ServiceDiscoveryClient;
  readonly #caller: CloudMapCaller;
  readonly #registry: CloudMapRegistry;
  readonly #operations: OperationWaiter;
  readonly #identity: Identity;
  /** The owner of the ClusterSet's namespaces when another account (discovery then names it, OwnerAccount). */
  readonly #owner: { OwnerAccount?: string };
  /** This cluster's account, when known: an instance claiming this cluster that another account registered is not ours (C4). */
  readonly #accountId: string | undefined;

  constructor(
    client: ServiceDiscoveryClient,
    caller: CloudMapCaller,
    registry: CloudMapRegistry,
    operations: OperationWaiter,
    identity: Identity,
    accounts: { namespaceOwner?: string; accountId?: string } = {},
  ) {
    this.#client = client;
    this.#owner = accounts.namespaceOwner === undefined ? {} : { OwnerAccount: accounts.namespaceOwner };
    this.#accountId = accounts.accountId;
    this.#caller = caller;
    this.#registry = registry;
    this.#operations = operations;
    this.#identity = identity;
  }

  /** Runs a call on a service id; a ServiceNotFound drops the cached id so the next ensureService looks again. */
  async #onService<T>(
    api: string,
    context: CallContext & { serviceId: string },
    send: (signal: AbortSignal) => Promise<T>,
    urgent = false,
  ): Promise<T> {
    try {
      return await this.#caller.call(api, context, send, urgent);
    } catch (err) {
      if (isNotFound(err, 'ServiceNotFound')) this.#registry.forgetService(context.serviceId);
      throw err;
    }
  }

  /** Every instance of the service (all clusters, all ClusterSets), paged, with the account that registered it. */
  listInstances(serviceId: string): Promise<Array<CloudMapInstance & { createdByAccount?: string }>> {
    return collectPages(async (NextToken) => {
      const out = await this.#onService('ListInstances', { serviceId }, (abortSignal) =>
        this.#client.send(new ListInstancesCommand({ ServiceId: serviceId, NextToken, MaxResults: 100 }), {
          abortSignal,
        }),
      );
      const items = (out.Instances ?? []).flatMap((i) =>
        toInstance(i.Id, i.Attributes).map((instance) =>
          i.CreatedByAccount === undefined ? instance : { ...instance, createdByAccount: i.CreatedByAccount },
        ),
      );
      return { items, nextToken: out.NextToken };
    });
  }

  /**
   * Instances of `namespace/service` in the ClusterSet (M5), every health status, one entry per id; undefined when
   * the namespace or service does not exist. A full DiscoverInstances page may hide instances past the API's limit
   * (S4), so then the service is read with paged ListInstances instead.
   */
  async discoverInstances(
    namespace: string,
    service: string,
    options: { clustersetId?: string } = {},
  ): Promise<DiscoveredInstances | undefined> {
    const clustersetId = options.clustersetId ?? this.#identity.clustersetId;
    const out = await this.#discover(namespace, service, { [ATTR_CLUSTERSET_ID]: clustersetId });
    if (out === undefined) return undefined;
    const revision = out.InstancesRevision;
    const found = out.Instances ?? [];
    if (found.length < DISCOVER_MAX_RESULTS) {
      return { instances: found.flatMap((i) => toInstance(i.InstanceId, i.Attributes)), revision };
    }
    // Twice: a NotFound drops cached ids (the service may have been recreated), so the second lookup is fresh.
    for (let attempt = 0; ; attempt++) {
      const namespaceId = await this.#registry.findNamespace(namespace);
      const serviceId = namespaceId === undefined ? undefined : await this.#registry.findService(namespaceId, service);
      if (serviceId === undefined) return undefined;
      try {
        return { instances: inClusterset(await this.listInstances(serviceId), clustersetId), revision };
      } catch (err) {
        if (!isNotFound(err)) throw err;
        if (namespaceId !== undefined) this.#registry.forgetNamespace(namespaceId);
        if (attempt > 0) return undefined;
      }
    }
  }

  /**
   * Every instance of `namespace/service` whoever registered it, each with its health status (HealthStatus=ALL, no
   * query filter): how the members that are not clusters are read (I9, I11). Undefined when the service does not exist.
   */
  async discoverAll(namespace: string, service: string): Promise<RegistrantInstance[] | undefined> {
    const out = await this.#discover(namespace, service);
    if (out === undefined) return undefined;
    return (out.Instances ?? []).flatMap((i) =>
      toInstance(i.InstanceId, i.Attributes).map((instance) =>
        i.HealthStatus === undefined ? instance : { ...instance, health: i.HealthStatus },
      ),
    );
  }

  /** One DiscoverInstances page of `namespace/service` (every health status); undefined when it does not exist here. */
  async #discover(namespace: string, service: string, QueryParameters?: Record<string, string>) {
    try {
      return await this.#caller.call('DiscoverInstances', { namespace, service }, (abortSignal) =>
        this.#client.send(
          new DiscoverInstancesCommand({
            NamespaceName: this.#registry.naming.cloudMapName(namespace),
            ServiceName: service,
            HealthStatus: 'ALL',
            MaxResults: DISCOVER_MAX_RESULTS,
            ...this.#owner,
            ...(QueryParameters === undefined ? {} : { QueryParameters }),
          }),
          { abortSignal },
        ),
      );
    } catch (err) {
      if (this.#invisible(err)) return undefined;
      throw err;
    }
  }

  /** Cloud Map's InstancesRevision of `namespace/service`, or undefined when it does not exist. */
  async discoverRevision(namespace: string, service: string): Promise<number | undefined> {
    try {
      const out = await this.#caller.call('DiscoverInstancesRevision', { namespace, service }, (abortSignal) =>
        this.#client.send(
          new DiscoverInstancesRevisionCommand({
            NamespaceName: this.#registry.naming.cloudMapName(namespace),
            ServiceName: service,
            ...this.#owner,
          }),
          { abortSignal },
        ),
      );
      return out.InstancesRevision;
    } catch (err) {
      if (this.#invisible(err)) return undefined;
      throw err;
    }
  }

  /**
   * Whether a discovery error means "no such service here": not found, or, in another account's namespaces, access
   * denied (Cloud Map does not tell a namespace that is not shared from one that does not exist).
   */
  #invisible(err: unknown): boolean {
    return isNotFound(err) || (this.#owner.OwnerAccount !== undefined && isNotFound(err, 'AccessDeniedException'));
  }

  async #getInstance(serviceId: string, instanceId: string): Promise<CloudMapInstance | undefined> {
    try {
      const out = await this.#onService('GetInstance', { serviceId, instanceId }, (abortSignal) =>
        this.#client.send(new GetInstanceCommand({ ServiceId: serviceId, InstanceId: instanceId }), { abortSignal }),
      );
      return toInstance(out.Instance?.Id, out.Instance?.Attributes)[0];
    } catch (err) {
      if (isNotFound(err, 'InstanceNotFound')) return undefined;
      throw err;
    }
  }

  /**
   * Registers (or updates in place) one of this cluster's instances and returns the operation id to wait for.
   * Refuses an instance whose CLUSTER_ID or CLUSTERSET_ID is not this cluster's (M4). `urgent`: ahead of the
   * registrations waiting for the rate limit.
   */
  async registerInstance(serviceId: string, instance: CloudMapInstance, urgent = false): Promise<string> {
    const context = { serviceId, instanceId: instance.id };
    assertOwnInstance(instance, this.#identity, 'register', describeContext({ serviceId }));
    // Fixed across the caller's retries: a retry of a request that landed (its response lost) is answered with the
    // same operation instead of a second registration.
    const CreatorRequestId = randomUUID();
    const out = await this.#afterBusy(() =>
      this.#onService(
        'RegisterInstance',
        context,
        (abortSignal) =>
          this.#client.send(
            new RegisterInstanceCommand({
              ServiceId: serviceId,
              InstanceId: instance.id,
              Attributes: instance.attributes,
              CreatorRequestId,
            }),
            { abortSignal },
          ),
        urgent,
      ),
    );
    const operationId = this.#requireOperationId(out.OperationId, 'RegisterInstance', context);
    this.#operations.track(operationId, context, async () => {
      const current = await this.#getInstance(serviceId, instance.id);
      return current !== undefined && sameInstances([current], [instance]);
    });
    return operationId;
  }

  /**
   * Deregisters one of this cluster's instances; returns the operation ids to wait for (none when it is already
   * gone). See deregisterInstances.
   */
  deregisterInstance(serviceId: string, instanceId: string): Promise<string[]> {
    return this.deregisterInstances(serviceId, [instanceId]);
  }

  /**
   * Deregisters instances of this cluster from one service and returns the operation ids. The service is listed
   * first: an id alone does not prove ownership (the AWS controller's id format repeats across clusters), so every
   * listed instance must carry this cluster's CLUSTER_ID and CLUSTERSET_ID (M4), else OwnershipError is thrown before
   * anything is written.
   */
  deregisterInstances(serviceId: string, instanceIds: readonly string[]): Promise<string[]> {
    const wanted = new Set(instanceIds);
    return this.#deregisterOf(serviceId, (i) => wanted.has(i.id), this.#identity, 'deregister');
  }

  /**
   * Deregisters every instance of another cluster of this ClusterSet that is dead (listed now, so nothing a lagging
   * read missed stays): only for --reap-dead-clusters-after, once that cluster's heartbeat is older than it. `only`
   * narrows it to some ids. Every instance must carry that cluster's CLUSTER_ID and this CLUSTERSET_ID (M4: an id alone
   * proves nothing), and this cluster is never reaped.
   */
  reapInstances(serviceId: string, deadClusterId: string, only?: readonly string[]): Promise<string[]> {
    if (deadClusterId === this.#identity.clusterId)
      throw new OwnershipError(
        `refusing to reap instances of "${deadClusterId}" in ${describeContext({ serviceId })}: it is this cluster, which is alive`,
      );
    const dead = { clusterId: deadClusterId, clustersetId: this.#identity.clustersetId };
    const wanted = only === undefined ? undefined : new Set(only);
    return this.#deregisterOf(
      serviceId,
      (i) =>
        (wanted === undefined || wanted.has(i.id)) &&
        i.attributes[ATTR_CLUSTER_ID] === deadClusterId &&
        i.attributes[ATTR_CLUSTERSET_ID] === dead.clustersetId,
      dead,
      'reap',
    );
  }

  async #deregisterOf(
    serviceId: string,
    wanted: (instance: CloudMapInstance) => boolean,
    owner: Identity,
    action: string,
  ): Promise<string[]> {
    const listed = (await this.listInstances(serviceId)).filter(wanted);
    const where = describeContext({ serviceId });
    for (const instance of listed) {
      assertOwnInstance(instance, owner, action, where);
      // C4 for this cluster's own instances; a dead cluster's are reaped whatever account registered them.
      if (owner.clusterId === this.#identity.clusterId) assertOwnAccount(instance, owner, this.#accountId, where);
    }
    const operations = await Promise.all(listed.map((instance) => this.#deregisterOwned(serviceId, instance)));
    return operations.filter((id): id is string => id !== undefined);
  }

  async #deregisterOwned(serviceId: string, instance: CloudMapInstance): Promise<string | undefined> {
    const context = { serviceId, instanceId: instance.id };
    let out;
    try {
      out = await this.#afterBusy(() =>
        this.#onService('DeregisterInstance', context, (abortSignal) =>
          this.#client.send(new DeregisterInstanceCommand({ ServiceId: serviceId, InstanceId: instance.id }), {
            abortSignal,
          }),
        ),
      );
    } catch (err) {
      if (isNotFound(err, 'InstanceNotFound')) return undefined;
      throw err;
    }
    const operationId = this.#requireOperationId(out.OperationId, 'DeregisterInstance', context);
    this.#operations.track(
      operationId,
      context,
      async () => (await this.#getInstance(serviceId, instance.id)) === undefined,
    );
    return operationId;
  }

  /**
   * Cloud Map takes one operation at a time per instance: a write while another is running is refused with
   * DuplicateRequest naming it (e.g. an operation a killed predecessor left, or one whose wait timed out). Then that
   * operation is waited for, whatever its outcome, and the write sent once more.
   */
  async #afterBusy<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      const busy = causeField(err, 'DuplicateOperationId');
      if (busy === undefined) throw err;
      await this.#operations.wait([busy]).catch(() => {});
      return send();
    }
  }

  #requireOperationId(operationId: string | undefined, api: string, context: CallContext): string {
    if (operationId === undefined)
      throw new Error(`Cloud Map ${api} for ${describeContext(context)} returned no operation id; it will be retried`);
    return operationId;
  }
}
