// The Cloud Map adapter as the worker uses it: one object per cluster that wires the SDK client, rate limits and
// retries, the namespace/service registry, instance reads and writes and operation polling (change detection is
// built over it, in src/change-detection).
// Only plain data (CloudMapInstance, ids, names) crosses this boundary; SDK types stay in src/cloudmap.
import type { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import type { NamespaceNaming } from '../core/namespace-naming.ts';
import type { CloudMapInstance } from '../core/types.ts';
import type { Logger } from '../observability/log.ts';
import { CloudMapCaller, type CallerOptions } from './call.ts';
import { createCloudMapClient, type CloudMapClientOptions } from './client.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import { CloudMapInstances, type DiscoveredInstances } from './instances.ts';
import { DEFAULT_OPERATION_POLLING, OperationWaiter, type OperationPolling } from './operations.ts';
import type { Identity } from './ownership.ts';
import { CloudMapRegistry, type NamespaceSummary, type ServiceSummary } from './registry.ts';

export interface CloudMapAdapterOptions extends CallerOptions, Identity {
  /** Used to create the SDK client unless `sdkClient` is given. */
  client?: CloudMapClientOptions;
  sdkClient?: ServiceDiscoveryClient;
  operationPolling?: Partial<OperationPolling>;
  logger?: Logger;
  /** The account owning the ClusterSet's namespaces when it is not this cluster's (shared through AWS RAM). */
  namespaceOwner?: string;
  /** This cluster's AWS account, when known: instances claiming this cluster from another account are not its own (C4). */
  accountId?: string;
  /** Which Cloud Map namespace, of which kind, holds each Kubernetes namespace; default: HTTP namespaces of the same name. */
  naming?: NamespaceNaming;
}

export class CloudMapAdapter {
  readonly identity: Identity;
  readonly caller: CloudMapCaller;
  readonly registry: CloudMapRegistry;
  readonly instances: CloudMapInstances;
  readonly operations: OperationWaiter;
  readonly clock: Clock;
  readonly logger: Logger | undefined;
  readonly #client: ServiceDiscoveryClient;

  constructor(options: CloudMapAdapterOptions) {
    if (!options.sdkClient && !options.client)
      throw new Error('CloudMapAdapter needs either client options (region, endpoint) or an SDK client');
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger;
    this.identity = { clusterId: options.clusterId, clustersetId: options.clustersetId };
    // A silent socket is given up after the call deadline at the latest, whichever layer notices first.
    this.#client =
      options.sdkClient ??
      createCloudMapClient({
        ...(options.callTimeoutMs === undefined ? {} : { idleTimeoutMs: options.callTimeoutMs }),
        ...options.client!,
      });
    this.caller = new CloudMapCaller(options);
    const { namespaceOwner, accountId } = options;
    this.operations = new OperationWaiter(
      this.#client,
      this.caller,
      this.clock,
      { ...DEFAULT_OPERATION_POLLING, ...options.operationPolling },
      namespaceOwner,
    );
    this.registry = new CloudMapRegistry(
      this.#client,
      this.caller,
      this.operations,
      options.logger,
      namespaceOwner,
      options.naming,
    );
    this.instances = new CloudMapInstances(this.#client, this.caller, this.registry, this.operations, this.identity, {
      ...(namespaceOwner === undefined ? {} : { namespaceOwner }),
      ...(accountId === undefined ? {} : { accountId }),
    });
  }

  ensureNamespace(name: string, onCreating?: () => void): Promise<string> {
    return this.registry.ensureNamespace(name, onCreating);
  }

  ensureService(namespaceId: string, name: string, existing = false): Promise<string> {
    return this.registry.ensureService(namespaceId, name, existing);
  }

  findNamespace(name: string): Promise<string | undefined> {
    return this.registry.findNamespace(name);
  }

  findService(namespaceId: string, name: string): Promise<string | undefined> {
    return this.registry.findService(namespaceId, name);
  }

  listNamespaces(): Promise<NamespaceSummary[]> {
    return this.registry.listNamespaces();
  }

  listServices(namespaceId: string): Promise<ServiceSummary[]> {
    return this.registry.listServices(namespaceId);
  }

  listInstances(serviceId: string): Promise<CloudMapInstance[]> {
    return this.instances.listInstances(serviceId);
  }

  discoverInstances(
    namespace: string,
    service: string,
    options: { clustersetId?: string } = {},
  ): Promise<DiscoveredInstances | undefined> {
    return this.instances.discoverInstances(namespace, service, options);
  }

  registerInstance(serviceId: string, instance: CloudMapInstance): Promise<string> {
    return this.instances.registerInstance(serviceId, instance);
  }

  deregisterInstance(serviceId: string, instanceId: string): Promise<string[]> {
    return this.instances.deregisterInstance(serviceId, instanceId);
  }

  deregisterInstances(serviceId: string, instanceIds: readonly string[]): Promise<string[]> {
    return this.instances.deregisterInstances(serviceId, instanceIds);
  }

  waitForOperations(operationIds: readonly string[]): Promise<void> {
    return this.operations.wait(operationIds);
  }

  deleteServiceIfEmpty(serviceId: string): Promise<boolean> {
    return this.registry.deleteServiceIfEmpty(serviceId);
  }

  deleteNamespaceIfEmpty(namespaceId: string): Promise<boolean> {
    return this.registry.deleteNamespaceIfEmpty(namespaceId);
  }

  /** Closes the SDK client's sockets. */
  destroy(): void {
    this.#client.destroy();
  }
}
