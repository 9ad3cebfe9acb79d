// Cloud Map namespaces and services (M1): find by name, create when missing, delete when empty, with a cache of
// name → id. Lists are paged and filtered client-side as well as server-side, because the emulator ignores Filters
// (see service-namespaces.ts for how services are told apart).
// Concurrent creators (another cluster, another replica) converge on the oldest namespace/service of a name: real
// Cloud Map refuses duplicates (NamespaceAlreadyExists, ServiceAlreadyExists, DuplicateRequest) but the emulator
// does not, and its DiscoverInstances reads the oldest.
import type { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import {
  CreateHttpNamespaceCommand, CreateServiceCommand, DeleteNamespaceCommand, DeleteServiceCommand, ListInstancesCommand,
  ListNamespacesCommand, ListServicesCommand,
} from '@aws-sdk/client-servicediscovery';
import type { Logger } from '../observability/log.ts';
import type { CloudMapCaller } from './call.ts';
import { CloudMapCallError, isNotFound } from './errors.ts';
import type { OperationWaiter } from './operations.ts';
import { collectPages } from './paging.ts';
import { captureServiceNamespaces, type ServiceNamespaceIndex } from './service-namespaces.ts';

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
}

function serviceKey(s: { namespaceId: string; name: string }): string {
  return `${s.namespaceId}/${s.name}`;
}

const DESCRIPTION = 'Created by mcs-cloudmap (Kubernetes Multi-Cluster Services)';

function isOlder(a: { id: string; createdAt: number }, b: { id: string; createdAt: number }): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);
}

/** The oldest of several same-named resources (ties broken by id), which every cluster picks alike. */
function oldest<T extends { id: string; createdAt: number }>(items: readonly T[]): T | undefined {
  return items.reduce<T | undefined>((best, item) => (best === undefined || isOlder(item, best) ? item : best), undefined);
}

/** key → id of the oldest item with that key. */
function oldestByKey<T extends { id: string; createdAt: number }>(items: readonly T[], key: (item: T) => string): Map<string, string> {
  const best = new Map<string, T>();
  for (const item of items) {
    const current = best.get(key(item));
    if (current === undefined || isOlder(item, current)) best.set(key(item), item);
  }
  return new Map([...best].map(([k, item]) => [k, item.id]));
}

/** A field the SDK puts on modelled errors (NamespaceAlreadyExists.NamespaceId, DuplicateRequest.DuplicateOperationId). */
function causeField(err: unknown, field: string): string | undefined {
  const cause = err instanceof CloudMapCallError ? err.cause : err;
  const value = typeof cause === 'object' && cause !== null ? (cause as Record<string, unknown>)[field] : undefined;
  return typeof value === 'string' ? value : undefined;
}

export class CloudMapRegistry {
  private readonly client: ServiceDiscoveryClient;
  private readonly caller: CloudMapCaller;
  private readonly operations: OperationWaiter;
  private readonly logger: Logger | undefined;
  private readonly serviceNamespaces: ServiceNamespaceIndex;
  private readonly namespaceIds = new Map<string, string>();
  /** `<namespaceId>/<service name>` → service id. */
  private readonly serviceIds = new Map<string, string>();
  /** One creation at a time per name within this process. */
  private readonly creating = new Map<string, Promise<string>>();

  constructor(client: ServiceDiscoveryClient, caller: CloudMapCaller, operations: OperationWaiter, logger?: Logger) {
    this.client = client;
    this.serviceNamespaces = captureServiceNamespaces(client);
    this.caller = caller;
    this.operations = operations;
    this.logger = logger;
  }

  /** Every namespace of the account and Region (`name` narrows the server-side listing where supported). */
  async listNamespaces(name?: string): Promise<NamespaceSummary[]> {
    const Filters = name === undefined ? undefined : [{ Name: 'NAME' as const, Values: [name], Condition: 'EQ' as const }];
    const all = await collectPages(async (NextToken) => {
      const out = await this.caller.call('ListNamespaces', name === undefined ? {} : { namespace: name },
        () => this.client.send(new ListNamespacesCommand({ Filters, NextToken, MaxResults: 100 })));
      return { items: out.Namespaces ?? [], nextToken: out.NextToken };
    });
    const namespaces = all
      .filter((n) => n.Id !== undefined && n.Name !== undefined && (name === undefined || n.Name === name))
      .map((n) => ({ id: n.Id!, name: n.Name!, type: n.Type ?? 'HTTP', createdAt: n.CreateDate?.getTime() ?? 0 }));
    for (const [n, id] of oldestByKey(namespaces, (ns) => ns.name)) this.namespaceIds.set(n, id);
    return namespaces;
  }

  /** Services of one namespace. */
  async listServices(namespaceId: string): Promise<ServiceSummary[]> {
    const Filters = [{ Name: 'NAMESPACE_ID' as const, Values: [namespaceId], Condition: 'EQ' as const }];
    const all = await collectPages(async (NextToken) => {
      const out = await this.caller.call('ListServices', { namespaceId },
        () => this.client.send(new ListServicesCommand({ Filters, NextToken, MaxResults: 100 })));
      return { items: out.Services ?? [], nextToken: out.NextToken };
    });
    const services = all
      .filter((s) => s.Id !== undefined && s.Name !== undefined)
      .filter((s) => (this.serviceNamespaces.namespaceOf(s.Id!) ?? namespaceId) === namespaceId)
      .map((s) => ({ id: s.Id!, name: s.Name!, namespaceId, createdAt: s.CreateDate?.getTime() ?? 0 }));
    for (const [key, id] of oldestByKey(services, serviceKey)) this.serviceIds.set(key, id);
    return services;
  }

  /** The id of the namespace called `name`, or undefined when there is none. */
  async findNamespace(name: string): Promise<string | undefined> {
    return this.namespaceIds.get(name) ?? oldest(await this.listNamespaces(name))?.id;
  }

  /** The id of the namespace called `name`, created as an HTTP namespace when missing (M1). */
  async ensureNamespace(name: string): Promise<string> {
    return (await this.findNamespace(name)) ?? this.once(`ns/${name}`, () => this.createNamespace(name));
  }

  private async createNamespace(name: string): Promise<string> {
    const context = { namespace: name };
    try {
      const out = await this.caller.call('CreateHttpNamespace', context,
        () => this.client.send(new CreateHttpNamespaceCommand({ Name: name, Description: DESCRIPTION })));
      if (out.OperationId) {
        this.operations.track(out.OperationId, context);
        await this.operations.wait([out.OperationId]);
      }
    } catch (err) {
      // Someone else created it first, or the same creation is still running: either way, find it below.
      if (causeField(err, 'NamespaceId') === undefined && !(err instanceof CloudMapCallError && err.code === 'DuplicateRequest')) throw err;
      const duplicate = causeField(err, 'DuplicateOperationId');
      if (duplicate !== undefined) await this.operations.wait([duplicate]);
    }
    const id = oldest(await this.listNamespaces(name))?.id;
    if (id === undefined) throw new Error(`Cloud Map namespace "${name}" was created but cannot be found by ListNamespaces; it will be retried`);
    this.logger?.info({ namespace: name, namespaceId: id }, 'Cloud Map namespace ready');
    return id;
  }

  /** The id of service `name` in the namespace, or undefined when there is none. */
  async findService(namespaceId: string, name: string): Promise<string | undefined> {
    return this.serviceIds.get(serviceKey({ namespaceId, name })) ??
      oldest((await this.listServices(namespaceId)).filter((s) => s.name === name))?.id;
  }

  /** The id of service `name` in the namespace, created when missing (M1). */
  async ensureService(namespaceId: string, name: string): Promise<string> {
    return (await this.findService(namespaceId, name)) ?? this.once(`svc/${namespaceId}/${name}`, () => this.createService(namespaceId, name));
  }

  private async createService(namespaceId: string, name: string): Promise<string> {
    const context = { namespaceId, service: name };
    let created: string | undefined;
    try {
      const out = await this.caller.call('CreateService', context,
        () => this.client.send(new CreateServiceCommand({ Name: name, NamespaceId: namespaceId, Description: DESCRIPTION })));
      created = out.Service?.Id;
    } catch (err) {
      // A cached namespace id can outlive its namespace: drop it so the next ensureNamespace looks again.
      if (isNotFound(err, 'NamespaceNotFound')) this.forgetNamespace(namespaceId);
      if (causeField(err, 'ServiceId') === undefined) throw err;
    }
    const canonical = oldest((await this.listServices(namespaceId)).filter((s) => s.name === name))?.id;
    if (canonical === undefined) throw new Error(`Cloud Map service "${name}" in namespace id ${namespaceId} was created but cannot be found by ListServices; it will be retried`);
    if (created !== undefined && created !== canonical) {
      // Lost a creation race on a store without uniqueness checks: drop our empty duplicate.
      this.logger?.info({ namespaceId, service: name, duplicate: created, kept: canonical }, 'removing duplicate Cloud Map service created concurrently');
      await this.deleteServiceIfEmpty(created);
    }
    return canonical;
  }

  private once(key: string, create: () => Promise<string>): Promise<string> {
    let running = this.creating.get(key);
    if (!running) {
      running = create().finally(() => this.creating.delete(key));
      this.creating.set(key, running);
    }
    return running;
  }

  /** Drops cached ids after a NotFound, so the next find/ensure looks again. */
  forgetService(serviceId: string): void {
    for (const [key, id] of this.serviceIds) if (id === serviceId) this.serviceIds.delete(key);
  }

  forgetNamespace(namespaceId: string): void {
    for (const [name, id] of this.namespaceIds) if (id === namespaceId) this.namespaceIds.delete(name);
    for (const key of this.serviceIds.keys()) if (key.startsWith(`${namespaceId}/`)) this.serviceIds.delete(key);
  }

  /**
   * Deletes the service when it holds no instances (of any cluster). Returns true when it is gone. Real Cloud Map
   * refuses to delete a service that gained an instance meanwhile (ResourceInUse), which is reported as false.
   */
  async deleteServiceIfEmpty(serviceId: string): Promise<boolean> {
    const context = { serviceId };
    try {
      const page = await this.caller.call('ListInstances', context,
        () => this.client.send(new ListInstancesCommand({ ServiceId: serviceId, MaxResults: 1 })));
      if ((page.Instances ?? []).length > 0) return false;
      await this.caller.call('DeleteService', context, () => this.client.send(new DeleteServiceCommand({ Id: serviceId })));
    } catch (err) {
      if (err instanceof CloudMapCallError && err.code === 'ResourceInUse') return false;
      if (!isNotFound(err, 'ServiceNotFound')) throw err;
    }
    this.forgetService(serviceId);
    return true;
  }

  /** Deletes the namespace when it holds no services; true when it is gone. */
  async deleteNamespaceIfEmpty(namespaceId: string): Promise<boolean> {
    const context = { namespaceId };
    try {
      if ((await this.listServices(namespaceId)).length > 0) return false;
      const out = await this.caller.call('DeleteNamespace', context, () => this.client.send(new DeleteNamespaceCommand({ Id: namespaceId })));
      if (out.OperationId) {
        this.operations.track(out.OperationId, context);
        await this.operations.wait([out.OperationId]);
      }
    } catch (err) {
      if (err instanceof CloudMapCallError && err.code === 'ResourceInUse') return false;
      if (!isNotFound(err, 'NamespaceNotFound')) throw err;
    }
    this.forgetNamespace(namespaceId);
    return true;
  }
}
