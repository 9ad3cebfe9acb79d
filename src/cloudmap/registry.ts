// Cloud Map namespaces and services (M1): find by name, create when missing, delete when empty. The registry keeps
// name → id for every namespace and service it has seen, and knows when a listing was complete: after the one paged
// ListNamespaces and the one paged ListServices per namespace of the watcher's first read, a name it does not know
// does not exist, so finding costs no call and a new service costs one CreateService (M6). It stays current from our
// own writes and the watcher's later listings; a stale id shows up as ServiceNotFound/NamespaceNotFound on use and is
// dropped. Concurrent creators (another cluster, another replica) meet Cloud Map's uniqueness: ServiceAlreadyExists
// and NamespaceAlreadyExists carry the existing id, and a CreatorRequestId makes a retried creation safe
// (DuplicateRequest). Listings trust Cloud Map's filters; of same-named resources the oldest is used, as every cluster
// does. A service or namespace
// is deleted only when Cloud Map says it is ours: its description is the one we write at creation (docs/design.md,
// "What the worker deletes"); a same-named one made by hand, by ECS or by the AWS controller is used but never deleted.
import { randomUUID } from 'node:crypto';
import type { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import {
  CreateHttpNamespaceCommand,
  CreatePrivateDnsNamespaceCommand,
  CreateServiceCommand,
  DeleteNamespaceCommand,
  DeleteServiceCommand,
  GetNamespaceCommand,
  GetServiceCommand,
  ListInstancesCommand,
  ListTagsForResourceCommand,
  ListNamespacesCommand,
  ListServicesCommand,
} from '@aws-sdk/client-servicediscovery';
import { HTTP_NAMING, type NamespaceNaming } from '../core/namespace-naming.ts';
import type { Logger } from '../observability/log.ts';
import type { CloudMapCaller } from './call.ts';
import { causeField, CloudMapCallError, isNotFound } from './errors.ts';
import type { OperationWaiter } from './operations.ts';
import { collectPages } from '../runtime/paging.ts';
import { dnsConfig } from './dns-namespaces.ts';
import { NamespaceNotSharedError, resourceReference, serviceArnIn } from './shared-namespaces.ts';

export interface NamespaceSummary {
  readonly id: string;
  readonly name: string;
  /** HTTP, DNS_PRIVATE or DNS_PUBLIC. */
  readonly type: string;
  /** Unix ms; orders concurrent creations. */
  readonly createdAt: number;
}

export interface ServiceSummary {
  readonly id: string;
  readonly name: string;
  readonly namespaceId: string;
  readonly createdAt: number;
  /** The service's ARN, as ListServices gives it (tags are read by ARN). */
  readonly arn?: string;
  /** True when it carries our description: this controller created it. */
  readonly createdByUs?: boolean;
}

function serviceKey(s: { namespaceId: string; name: string }): string {
  return `${s.namespaceId}/${s.name}`;
}

/** Written on every service and namespace we create, and the mark of ours before a delete (M1). */
const OWNED_DESCRIPTION = 'Created by mcs-cloudmap (Kubernetes Multi-Cluster Services)';

/**
 * Least time between two listings of a namespace's services after collisions with another cluster's creations: a
 * listing costs one ListServices (2 a second per account) and learns up to 100 names.
 */
const COLLISION_LISTING_MS = 2_000;

/** How often a namespace creation's operation is asked for (ten GetOperation a second while one runs, rarely). */
export const NAMESPACE_OPERATION_POLL_MS = 100;

function isOlder(a: { id: string; createdAt: number }, b: { id: string; createdAt: number }): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);
}

/** The oldest of several same-named resources (ties broken by id), which every cluster picks alike. */
function oldest<T extends { id: string; createdAt: number }>(items: readonly T[]): T | undefined {
  return items.reduce<T | undefined>(
    (best, item) => (best === undefined || isOlder(item, best) ? item : best),
    undefined,
  );
}

/** key → id of the oldest item with that key. */
function oldestByKey<T extends { id: string; createdAt: number }>(
  items: readonly T[],
  key: (item: T) => string,
): Map<string, string> {
  const best = new Map<string, T>();
  for (const item of items) {
    const current = best.get(key(item));
    if (current === undefined || isOlder(item, current)) best.set(key(item), item);
  }
  return new Map([...best].map(([k, item]) => [k, item.id]));
}

export class CloudMapRegistry {
  readonly #client: ServiceDiscoveryClient;
  readonly #caller: CloudMapCaller;
  readonly #operations: OperationWaiter;
  readonly #logger: Logger | undefined;
  /** Kubernetes namespace name → id of its Cloud Map namespace (named by `naming`). */
  readonly #namespaceIds = new Map<string, string>();
  /** Namespace id → HTTP, DNS_PRIVATE or DNS_PUBLIC, as listed or created: a service gets DNS records only in a DNS one. */
  readonly #namespaceTypes = new Map<string, string>();
  /** True once every namespace was listed: a name not in namespaceIds then does not exist. */
  #namespacesComplete = false;
  /** `<namespaceId>/<service name>` → service id. */
  readonly #serviceIds = new Map<string, string>();
  /** Namespace ids whose services were all listed: a name not in serviceIds then does not exist there. */
  readonly #servicesComplete = new Set<string>();
  /** Namespace and name of services and namespaces looked up by id (an id never changes its name). */
  readonly #namedServices = new Map<string, { namespaceId: string; name: string }>();
  readonly #namedNamespaces = new Map<string, string>();
  /** When each namespace's services were last listed after a CreateService met another cluster's creation. */
  readonly #collisionListedAt = new Map<string, number>();
  /** One creation at a time per name within this process. */
  readonly #creating = new Map<string, Promise<string>>();
  /**
   * The account that owns the ClusterSet's namespaces when it is not this one: only its namespaces are used, named by
   * ARN, and never created here (shared-namespaces.ts).
   */
  readonly #owner: string | undefined;
  /** Which Cloud Map namespace, of which kind, holds each Kubernetes namespace (namespace-naming.ts). */
  readonly naming: NamespaceNaming;

  constructor(
    client: ServiceDiscoveryClient,
    caller: CloudMapCaller,
    operations: OperationWaiter,
    logger?: Logger,
    namespaceOwner?: string,
    naming: NamespaceNaming = HTTP_NAMING,
  ) {
    this.#client = client;
    this.#owner = namespaceOwner;
    this.naming = naming;
    this.#caller = caller;
    this.#operations = operations;
    this.#logger = logger;
  }

  /**
   * Every namespace of the account and Region that stands for a Kubernetes namespace, named by it (`name`, a
   * Kubernetes namespace, narrows the server-side listing where supported).
   */
  async listNamespaces(name?: string): Promise<NamespaceSummary[]> {
    const cloudMapName = name === undefined ? undefined : this.naming.cloudMapName(name);
    const Filters =
      cloudMapName === undefined
        ? undefined
        : [{ Name: 'NAME' as const, Values: [cloudMapName], Condition: 'EQ' as const }];
    const all = await collectPages(async (NextToken) => {
      const out = await this.#caller.call(
        'ListNamespaces',
        name === undefined ? {} : { namespace: name },
        (abortSignal) =>
          this.#client.send(new ListNamespacesCommand({ Filters, NextToken, MaxResults: 100 }), { abortSignal }),
      );
      return { items: out.Namespaces ?? [], nextToken: out.NextToken };
    });
    const shared = this.#owner !== undefined;
    const namespaces = all
      .filter((n) => n.Id !== undefined && n.Name !== undefined && (name === undefined || n.Name === cloudMapName))
      .filter((n) => !shared || n.ResourceOwner === this.#owner)
      .flatMap((n) => {
        const namespace = this.naming.namespaceOf(n.Name!);
        if (namespace === undefined) return [];
        return [
          {
            id: resourceReference(n, shared)!,
            name: namespace,
            type: n.Type ?? 'HTTP',
            createdAt: n.CreateDate?.getTime() ?? 0,
          },
        ];
      });
    for (const n of namespaces) this.#namespaceTypes.set(n.id, n.type);
    for (const [n, id] of oldestByKey(namespaces, (ns) => ns.name)) this.#namespaceIds.set(n, id);
    if (name === undefined) this.#namespacesComplete = true;
    return namespaces;
  }

  /** Services of one namespace (paged); afterwards the registry knows every service of it. */
  async listServices(namespaceId: string): Promise<ServiceSummary[]> {
    const Filters = [{ Name: 'NAMESPACE_ID' as const, Values: [namespaceId], Condition: 'EQ' as const }];
    const all = await collectPages(async (NextToken) => {
      const out = await this.#caller.call('ListServices', { namespaceId }, (abortSignal) =>
        this.#client.send(new ListServicesCommand({ Filters, NextToken, MaxResults: 100 }), { abortSignal }),
      );
      return { items: out.Services ?? [], nextToken: out.NextToken };
    });
    const services = all
      .filter((s) => s.Id !== undefined && s.Name !== undefined)
      .map((s) => ({
        id: resourceReference(s, this.#owner !== undefined)!,
        name: s.Name!,
        namespaceId,
        createdAt: s.CreateDate?.getTime() ?? 0,
        ...(s.Arn === undefined ? {} : { arn: s.Arn }),
        createdByUs: s.Description === OWNED_DESCRIPTION,
      }));
    for (const [key, id] of oldestByKey(services, serviceKey)) this.#serviceIds.set(key, id);
    this.#servicesComplete.add(namespaceId);
    return services;
  }

  /** The tags of a service or namespace, by its ARN (read only: we never tag what is not ours). */
  async tags(arn: string): Promise<Record<string, string>> {
    const out = await this.#caller.call('ListTagsForResource', { serviceId: arn }, (abortSignal) =>
      this.#client.send(new ListTagsForResourceCommand({ ResourceARN: arn }), { abortSignal }),
    );
    return Object.fromEntries((out.Tags ?? []).map((t): [string, string] => [t.Key ?? '', t.Value ?? '']));
  }

  /**
   * The id of the namespace called `name`, or undefined when there is none; no call once every namespace was listed,
   * unless `unlisted` says it may have been created since (the change marker named it).
   */
  async findNamespace(name: string, unlisted = false): Promise<string | undefined> {
    const known = this.#namespaceIds.get(name);
    if (known !== undefined || (this.#namespacesComplete && !unlisted)) return known;
    return oldest(await this.listNamespaces(name))?.id;
  }

  /**
   * The id of the namespace of Kubernetes namespace `name`, created when missing (M1): an HTTP namespace, or the private
   * DNS namespace `naming` names when it says so. One that exists with the other kind is used as it is (its services'
   * records then follow its kind, see createService). `onCreating` is called when
   * the caller has to wait for Cloud Map to create it (so the export can say so).
   */
  async ensureNamespace(name: string, onCreating?: () => void): Promise<string> {
    const known = await this.findNamespace(name);
    if (known !== undefined) return known;
    if (this.#owner === undefined) onCreating?.();
    return this.#once(`ns/${name}`, () => this.#createNamespace(name));
  }

  /**
   * Creating a namespace is asynchronous: its operation is polled closely and names the new id (Targets.NAMESPACE), so
   * no ListNamespaces (0.5 a second per account, shared with every cluster's listings) stands between the creation and
   * the first export in it (M7). A store whose operation names no id gets the lookup by name.
   */
  async #createNamespace(name: string): Promise<string> {
    if (this.#owner !== undefined) {
      // A consumer never creates: the namespace may have been shared since the last listing, so look once more.
      const shared = oldest(await this.listNamespaces(name))?.id;
      if (shared === undefined) throw new NamespaceNotSharedError(name, this.#owner);
      return this.#recordNamespace(name, shared, false);
    }
    const dns = this.naming.dns(name);
    const Name = this.naming.cloudMapName(name);
    const context = { namespace: name, ...(dns === undefined ? {} : { cloudMapNamespace: Name, vpc: dns.vpc }) };
    const CreatorRequestId = randomUUID();
    let ours = true;
    let operationId: string | undefined;
    try {
      const request = { Name, Description: OWNED_DESCRIPTION, CreatorRequestId };
      // The watcher may learn the namespace while this waits for the quota (another cluster's marker named it).
      const out = await this.#caller.callUnlessSettled(
        dns === undefined ? 'CreateHttpNamespace' : 'CreatePrivateDnsNamespace',
        context,
        () => this.#namespaceIds.has(name),
        (abortSignal) =>
          dns === undefined
            ? this.#client.send(new CreateHttpNamespaceCommand(request), { abortSignal })
            : this.#client.send(new CreatePrivateDnsNamespaceCommand({ ...request, Vpc: dns.vpc }), { abortSignal }),
      );
      if (out === undefined) return this.#namespaceIds.get(name)!;
      operationId = out.OperationId;
    } catch (err) {
      const existing = causeField(err, 'NamespaceId');
      if (existing !== undefined) return this.#recordNamespace(name, existing, false);
      // The same creation is still running (another cluster's, or a retry after a lost response): wait for it.
      operationId = causeField(err, 'DuplicateOperationId');
      if (operationId === undefined) throw err;
      ours = false;
    }
    if (operationId !== undefined) {
      this.#operations.track(operationId, context);
      const created = await this.#operations.settleOne(operationId, 'NAMESPACE', NAMESPACE_OPERATION_POLL_MS);
      if (created !== undefined) {
        if (ours) this.#namespaceTypes.set(created, dns === undefined ? 'HTTP' : 'DNS_PRIVATE');
        return this.#recordNamespace(name, created, ours);
      }
    }
    const id = oldest(await this.listNamespaces(name))?.id;
    if (id === undefined)
      throw new Error(
        `Cloud Map namespace "${name}" was created but cannot be found by ListNamespaces; it will be retried`,
      );
    return this.#recordNamespace(name, id, ours);
  }

  /** A namespace this process just created holds no services yet: finding one in it needs no listing. */
  #recordNamespace(name: string, id: string, createdHere: boolean): string {
    this.#namespaceIds.set(name, id);
    if (createdHere) this.#servicesComplete.add(id);
    this.#logger?.info({ namespace: name, namespaceId: id }, 'Cloud Map namespace ready');
    return id;
  }

  /** The id of service `name` in the namespace, or undefined when there is none; no call once the namespace was listed. */
  async findService(namespaceId: string, name: string): Promise<string | undefined> {
    const known = this.#serviceIds.get(serviceKey({ namespaceId, name }));
    if (known !== undefined || this.#servicesComplete.has(namespaceId)) return known;
    // Many exports of a namespace not listed yet share one listing.
    await this.#once(`list/${namespaceId}`, async () => (await this.listServices(namespaceId), namespaceId));
    return this.#serviceIds.get(serviceKey({ namespaceId, name }));
  }

  /**
   * The id of service `name` in the namespace, created when missing (M1). `existing`: another cluster's instances of
   * it were read, so it exists although this process never learnt its id. Then the namespace is listed again first
   * (one listing shared by every caller meanwhile): when several clusters export the same services, the listing finds
   * them all for one ListServices per 100 services, where CreateService would spend a call of its scarce quota on
   * each, answered ServiceAlreadyExists (M6).
   */
  async ensureService(namespaceId: string, name: string, existing = false): Promise<string> {
    const key = serviceKey({ namespaceId, name });
    let id = await this.findService(namespaceId, name);
    if (id === undefined && existing) {
      await this.#once(`list/${namespaceId}`, async () => (await this.listServices(namespaceId), namespaceId));
      id = this.#serviceIds.get(key);
    }
    return id ?? this.#once(`svc/${namespaceId}/${name}`, () => this.#createService(namespaceId, name));
  }

  /**
   * One CreateService, unless the service became known while the call waited for its rate limit. A service of that
   * name created meanwhile by another cluster answers ServiceAlreadyExists with its id; the CreatorRequestId makes the
   * caller's retry of a request whose response was lost return the same service.
   */
  async #createService(namespaceId: string, name: string): Promise<string> {
    const key = serviceKey({ namespaceId, name });
    const context = { namespaceId, service: name };
    const CreatorRequestId = randomUUID();
    const DnsConfig = this.#dnsConfigIn(namespaceId);
    let id: string | undefined;
    try {
      const out = await this.#caller.callUnlessSettled(
        'CreateService',
        context,
        () => this.#serviceIds.has(key),
        (abortSignal) =>
          this.#client.send(
            new CreateServiceCommand({
              Name: name,
              NamespaceId: namespaceId,
              Description: OWNED_DESCRIPTION,
              CreatorRequestId,
              ...(DnsConfig === undefined ? {} : { DnsConfig }),
            }),
            { abortSignal },
          ),
      );
      if (out === undefined) return this.#serviceIds.get(key)!;
      id = out.Service === undefined ? undefined : resourceReference(out.Service, this.#owner !== undefined);
    } catch (err) {
      // A cached namespace id can outlive its namespace: drop it so the next ensureNamespace looks again.
      if (isNotFound(err, 'NamespaceNotFound')) this.forgetNamespace(namespaceId);
      id = causeField(err, 'ServiceId');
      if (id === undefined) throw err;
      if (this.#owner !== undefined) id = serviceArnIn(namespaceId, id);
      await this.#learnCreatedServices(namespaceId);
    }
    if (id === undefined)
      throw new Error(
        `Cloud Map CreateService for service "${name}" in namespace id ${namespaceId} returned no service id; it will be retried`,
      );
    this.#serviceIds.set(key, id);
    return id;
  }

  /**
   * The DnsConfig of a new service in the namespace: records when its Kubernetes namespace is a DNS one and Cloud Map's
   * namespace is not an HTTP one (which refuses a DnsConfig). A DNS namespace we were not told of (made by hand, or by
   * a cluster configured otherwise) gets services without records, which only the API discovers.
   */
  #dnsConfigIn(namespaceId: string): ReturnType<typeof dnsConfig> | undefined {
    const name = [...this.#namespaceIds].find(([, id]) => id === namespaceId)?.[0];
    const settings = name === undefined ? undefined : this.naming.dns(name);
    if (settings === undefined) return undefined;
    if (this.#namespaceTypes.get(namespaceId) === 'HTTP') {
      this.#logger?.warn(
        { namespace: name, namespaceId, cloudMapNamespace: this.naming.cloudMapName(name!) },
        'Cloud Map namespace is an HTTP namespace although a DNS one is configured: its services get no DNS records (delete it while empty, or choose another domain)',
      );
      return undefined;
    }
    return dnsConfig(settings);
  }

  /** Whether a service or namespace carries our description; says why one that does not is left in place. */
  #ours(kind: 'service' | 'namespace', name: string | undefined, id: string, description: string | undefined): boolean {
    if (description === OWNED_DESCRIPTION) return true;
    this.#logger?.info(
      { [kind]: name, [`${kind}Id`]: id, description: description ?? null },
      `empty Cloud Map ${kind} left in place: mcs-cloudmap did not create it (its description is not "${OWNED_DESCRIPTION}")`,
    );
    return false;
  }

  /**
   * Our CreateService met a name another cluster had just created: it is creating the services of this namespace now,
   * as we are (clusters exporting the same services; the initial sync). One listing learns every name it created so
   * far, and the creations still queued here for those names are not sent (M6): at 300 services exported by two
   * clusters, a quarter of the CreateService calls, of 5 a second per account, had been answered ServiceAlreadyExists.
   * At most one such listing per namespace every COLLISION_LISTING_MS; one that fails costs only what it would save.
   */
  async #learnCreatedServices(namespaceId: string): Promise<void> {
    const now = Date.now();
    if (now - (this.#collisionListedAt.get(namespaceId) ?? Number.NEGATIVE_INFINITY) < COLLISION_LISTING_MS) return;
    this.#collisionListedAt.set(namespaceId, now);
    try {
      await this.#once(`list/${namespaceId}`, async () => (await this.listServices(namespaceId), namespaceId));
    } catch (err) {
      this.#logger?.warn(
        { namespaceId, err: err instanceof Error ? err.message : String(err) },
        'could not list the services another cluster is creating; creations go on one by one',
      );
    }
  }

  #once(key: string, create: () => Promise<string>): Promise<string> {
    let running = this.#creating.get(key);
    if (!running) {
      running = create().finally(() => this.#creating.delete(key));
      this.#creating.set(key, running);
    }
    return running;
  }

  /**
   * The namespace and name of a service known only by id (an operation's target): from what was listed or created,
   * else one GetService and, for a namespace not known either, one GetNamespace, each remembered. Undefined when the
   * service or its namespace is gone.
   */
  async nameOfService(serviceId: string): Promise<{ namespace: string; service: string } | undefined> {
    let named = this.#namedServices.get(serviceId);
    const key = named === undefined ? [...this.#serviceIds].find(([, id]) => id === serviceId)?.[0] : undefined;
    if (key !== undefined)
      named = { namespaceId: key.slice(0, key.lastIndexOf('/')), name: key.slice(key.lastIndexOf('/') + 1) };
    if (named === undefined) {
      const got = await this.#caller
        .call('GetService', { serviceId }, (abortSignal) =>
          this.#client.send(new GetServiceCommand({ Id: serviceId }), { abortSignal }),
        )
        .catch((err: unknown) => {
          if (isNotFound(err, 'ServiceNotFound')) return undefined;
          throw err;
        });
      if (got?.Service?.Name === undefined || got.Service.NamespaceId === undefined) return undefined;
      named = { namespaceId: got.Service.NamespaceId, name: got.Service.Name };
      this.#namedServices.set(serviceId, named);
    }
    const namespace = await this.#nameOfNamespace(named.namespaceId);
    return namespace === undefined ? undefined : { namespace, service: named.name };
  }

  async #nameOfNamespace(namespaceId: string): Promise<string | undefined> {
    const known =
      this.#namedNamespaces.get(namespaceId) ?? [...this.#namespaceIds].find(([, id]) => id === namespaceId)?.[0];
    if (known !== undefined) return known;
    const context = { namespaceId };
    const got = await this.#caller
      .call('GetNamespace', context, (abortSignal) =>
        this.#client.send(new GetNamespaceCommand({ Id: namespaceId }), { abortSignal }),
      )
      .catch((err: unknown) => {
        if (isNotFound(err, 'NamespaceNotFound')) return undefined;
        throw err;
      });
    const name = got?.Namespace?.Name === undefined ? undefined : this.naming.namespaceOf(got.Namespace.Name);
    if (name !== undefined) this.#namedNamespaces.set(namespaceId, name);
    return name;
  }

  /** Drops cached ids after a NotFound, so the next find/ensure creates or looks again. */
  forgetService(serviceId: string): void {
    for (const [key, id] of this.#serviceIds) if (id === serviceId) this.#serviceIds.delete(key);
  }

  forgetNamespace(namespaceId: string): void {
    for (const [name, id] of this.#namespaceIds) if (id === namespaceId) this.#namespaceIds.delete(name);
    for (const key of this.#serviceIds.keys()) if (key.startsWith(`${namespaceId}/`)) this.#serviceIds.delete(key);
    this.#servicesComplete.delete(namespaceId);
  }

  /**
   * Deletes the service when it holds no instances (of any cluster) and Cloud Map says we created it (its description).
   * Returns true when it is gone. Real Cloud Map refuses to delete a service that gained an instance meanwhile
   * (ResourceInUse), which is reported as false, as is a service that is not ours.
   */
  async deleteServiceIfEmpty(serviceId: string): Promise<boolean> {
    const context = { serviceId };
    try {
      const page = await this.#caller.call('ListInstances', context, (abortSignal) =>
        this.#client.send(new ListInstancesCommand({ ServiceId: serviceId, MaxResults: 1 }), { abortSignal }),
      );
      if ((page.Instances ?? []).length > 0) return false;
      const got = await this.#caller.call('GetService', context, (abortSignal) =>
        this.#client.send(new GetServiceCommand({ Id: serviceId }), { abortSignal }),
      );
      if (!this.#ours('service', got.Service?.Name, serviceId, got.Service?.Description)) return false;
      await this.#caller.call('DeleteService', context, (abortSignal) =>
        this.#client.send(new DeleteServiceCommand({ Id: serviceId }), { abortSignal }),
      );
    } catch (err) {
      if (err instanceof CloudMapCallError && err.code === 'ResourceInUse') return false;
      if (!isNotFound(err, 'ServiceNotFound')) throw err;
    }
    this.forgetService(serviceId);
    return true;
  }

  /**
   * Deletes the namespace when it holds no services and Cloud Map says we created it; true when it is gone. A consumer
   * never deletes the owner's.
   */
  async deleteNamespaceIfEmpty(namespaceId: string): Promise<boolean> {
    if (this.#owner !== undefined) return false;
    const context = { namespaceId };
    try {
      if ((await this.listServices(namespaceId)).length > 0) return false;
      const got = await this.#caller.call('GetNamespace', context, (abortSignal) =>
        this.#client.send(new GetNamespaceCommand({ Id: namespaceId }), { abortSignal }),
      );
      if (!this.#ours('namespace', got.Namespace?.Name, namespaceId, got.Namespace?.Description)) return false;
      const out = await this.#caller.call('DeleteNamespace', context, (abortSignal) =>
        this.#client.send(new DeleteNamespaceCommand({ Id: namespaceId }), { abortSignal }),
      );
      if (out.OperationId) {
        this.#operations.track(out.OperationId, context);
        await this.#operations.wait([out.OperationId]);
      }
    } catch (err) {
      if (err instanceof CloudMapCallError && err.code === 'ResourceInUse') return false;
      if (!isNotFound(err, 'NamespaceNotFound')) throw err;
    }
    this.forgetNamespace(namespaceId);
    return true;
  }
}
