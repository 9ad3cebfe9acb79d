// A stand-in for the AWS Cloud Map MCS Controller v0.3.1, as it behaves on the wire (M3): the tests of a ClusterSet
// mid-migration use it instead of building v0.3.1. Its instances carry v0.3.1's ids (`tcp-10_244_2_0-8080`, which
// repeat across clusters) and attributes (`HOSTNAME=""`, `K8S_CONTROLLER` = `aws-cloud-map-mcs-controller-for-k8s
// ...`), it never bumps our change marker, reads Cloud Map through 10 s caches of a namespace's services and a service's
// instances, keeps a ServiceExport with its own finalizer, registers before it deregisters, and deregisters every
// instance of its cluster it did not write (v0.3.1 diffs all of its cluster's endpoints by id). Its import side writes
// what v0.3.1 writes in Kubernetes (v1alpha1 ServiceImports with its derived-service annotation, its derived Services
// and EndpointSlices), simplified: one slice per service, every endpoint ready.
import {
  CreateHttpNamespaceCommand,
  CreateServiceCommand,
  ListNamespacesCommand,
  ListServicesCommand,
  ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import {
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  setHeaderOptions,
  type KubeConfig,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { CloudMapAdapter } from '../../src/cloudmap/adapter.ts';
import { MCS_GROUP, SERVICE_EXPORT_PLURAL } from '../../src/core/names.ts';
import { V031_DERIVED_SERVICE_ANNOTATION } from '../../src/core/service-import.ts';
import type { CloudMapInstance } from '../../src/core/types.ts';

export const V031_FINALIZER = 'multicluster.k8s.aws/service-export-finalizer';
export const V031_CONTROLLER = 'aws-cloud-map-mcs-controller-for-k8s v0.3.1 (d07e680)';
/** How long v0.3.1 keeps a namespace's services and a service's instances. */
export const V031_CACHE_MS = 10_000;

export interface V031Endpoint {
  ip: string;
  port?: number;
  servicePort?: number;
  protocol?: string;
  ready?: boolean;
  hostname?: string;
  nodeName?: string;
}

export interface V031Export {
  clusterId: string;
  clustersetId: string;
  /** The ServiceExport's creationTimestamp, Unix ms (v0.3.1 writes it as SERVICE_EXPORT_CREATION_TIMESTAMP). */
  exportedAt?: number;
  serviceType?: 'ClusterSetIP' | 'Headless';
}

/** v0.3.1's derived Service name: `imported-` and 10 base32hex digits (lower case) of sha256(namespace + name). */
export function v031DerivedName(namespace: string, name: string): string {
  const digest = createHash('sha256')
    .update(namespace + name)
    .digest();
  let bits = '';
  for (const byte of digest.subarray(0, 7)) bits += byte.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i < 10; i++)
    out += '0123456789abcdefghijklmnopqrstuv'[Number.parseInt(bits.slice(i * 5, i * 5 + 5), 2)]!;
  return `imported-${out}`;
}

/** v0.3.1's instance id: `<proto>-<ip with . and : as _>-<port>`. */
export function v031InstanceId(ip: string, port: number, protocol = 'TCP'): string {
  return `${protocol.toLowerCase()}-${ip.replaceAll(/[.:]/g, '_')}-${port}`;
}

/** An instance as v0.3.1 registers an endpoint address × port: its id, its attributes, no markers. */
export function v031Instance(exp: V031Export, endpoint: V031Endpoint): CloudMapInstance {
  const port = endpoint.port ?? 8080;
  const protocol = endpoint.protocol ?? 'TCP';
  return {
    id: v031InstanceId(endpoint.ip, port, protocol),
    attributes: {
      AWS_INSTANCE_IPV4: endpoint.ip,
      AWS_INSTANCE_PORT: String(port),
      CLUSTER_ID: exp.clusterId,
      CLUSTERSET_ID: exp.clustersetId,
      ENDPOINT_PORT_NAME: '',
      ENDPOINT_PROTOCOL: protocol,
      HOSTNAME: endpoint.hostname ?? '',
      K8S_CONTROLLER: V031_CONTROLLER,
      NODENAME: endpoint.nodeName ?? '',
      READY: String(endpoint.ready ?? true),
      SERVICE_EXPORT_CREATION_TIMESTAMP: String(exp.exportedAt ?? 1665108776000),
      SERVICE_PORT: String(endpoint.servicePort ?? port),
      SERVICE_PORT_NAME: '',
      SERVICE_PROTOCOL: protocol,
      SERVICE_TARGET_PORT: String(port),
      SERVICE_TYPE: exp.serviceType ?? 'ClusterSetIP',
    },
  };
}

/** v0.3.1's CRDs, as its installer leaves them: every kind served and stored as v1alpha1 only, no conversion. */
export function v031Crds(
  ours: ReadonlyArray<{
    metadata: { name: string; annotations?: Record<string, string> };
    spec: { versions: Array<{ name: string; storage: boolean }> };
  }>,
): object[] {
  return ours.map((crd) => ({
    // The approval annotation that groups under k8s.io need (upstream's CRDs carry it too).
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: crd.metadata.name,
      annotations: Object.fromEntries(
        Object.entries(crd.metadata.annotations ?? {}).filter(([k]) => k === 'api-approved.kubernetes.io'),
      ),
    },
    spec: {
      ...crd.spec,
      conversion: { strategy: 'None' },
      versions: crd.spec.versions.filter((v) => v.name === 'v1alpha1').map((v) => ({ ...v, storage: true })),
    },
  }));
}

interface ServiceExportV1Alpha1 {
  metadata: {
    name: string;
    namespace: string;
    creationTimestamp: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    resourceVersion: string;
  };
}

interface Cached<T> {
  at: number;
  value: T;
  namespaceId?: string;
}

export interface V031Options {
  kubeConfig: KubeConfig;
  clusterId: string;
  clustersetId: string;
  cloudMap: { region: string; endpoint: string };
  /** How often every ServiceExport is reconciled (v0.3.1 reacts to watch events; a short poll stands in). */
  intervalMs?: number;
  /** Namespaces whose Cloud Map services are imported (v0.3.1 imports every namespace; the tests name theirs). */
  importNamespaces?: readonly string[];
  /** Called with every failed reconcile (the loop goes on, as v0.3.1 retries). */
  onError?: (err: unknown) => void;
}

/** The stand-in controller of one cluster; start() runs it, stop() scales it to zero. */
export class V031StandIn {
  readonly #o: V031Options;
  readonly #cloudMap: CloudMapAdapter;
  /** For the calls v0.3.1 makes without what our adapter adds (descriptions). */
  readonly #sdk: ServiceDiscoveryClient;
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;
  readonly #discovery: DiscoveryV1Api;
  readonly #services = new Map<string, Cached<Map<string, string>>>();
  readonly #instances = new Map<string, Cached<CloudMapInstance[]>>();
  readonly #namespaceIds = new Map<string, string>();
  #running: Promise<void> | undefined;
  #stopping = false;
  /** Instances registered and deregistered so far. */
  readonly writes = { registered: 0, deregistered: 0 };
  /** The last steps taken, with their times, for a test that fails. */
  readonly trace: string[] = [];

  #step(what: string): void {
    this.trace.push(`${new Date().toISOString()} ${what}`);
    if (this.trace.length > 40) this.trace.shift();
  }

  constructor(options: V031Options) {
    this.#o = options;
    this.#cloudMap = new CloudMapAdapter({
      clusterId: options.clusterId,
      clustersetId: options.clustersetId,
      client: {
        region: options.cloudMap.region,
        endpoint: options.cloudMap.endpoint,
        credentials: { accessKeyId: 'testbed', secretAccessKey: 'testbed' },
      },
    });
    this.#sdk = new ServiceDiscoveryClient({
      region: options.cloudMap.region,
      endpoint: options.cloudMap.endpoint,
      credentials: { accessKeyId: 'testbed', secretAccessKey: 'testbed' },
      disableHostPrefix: true,
    });
    this.#custom = options.kubeConfig.makeApiClient(CustomObjectsApi);
    this.#core = options.kubeConfig.makeApiClient(CoreV1Api);
    this.#discovery = options.kubeConfig.makeApiClient(DiscoveryV1Api);
  }

  start(): void {
    this.#stopping = false;
    this.#running ??= (async () => {
      while (!this.#stopping) {
        await this.syncOnce().catch((err: unknown) => {
          this.#step(`failed: ${String(err).slice(0, 200)}`);
          this.#o.onError?.(err);
        });
        await new Promise((r) => setTimeout(r, this.#o.intervalMs ?? 1000));
      }
    })();
  }

  /** Stops after the reconcile in flight (as a Deployment scaled to zero; nothing is cleaned up). */
  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#running;
    this.#running = undefined;
  }

  destroy(): void {
    this.#cloudMap.destroy();
    this.#sdk.destroy();
  }

  /** Reconciles every ServiceExport of the cluster once, then the imports of `importNamespaces`. */
  async syncOnce(): Promise<void> {
    const list = (await this.#custom.listClusterCustomObject({
      group: MCS_GROUP,
      version: 'v1alpha1',
      plural: SERVICE_EXPORT_PLURAL,
    })) as { items: ServiceExportV1Alpha1[] };
    for (const serviceExport of list.items) await this.#reconcile(serviceExport);
    for (const namespace of this.#o.importNamespaces ?? []) await this.#importNamespace(namespace);
  }

  /**
   * v0.3.1's import side, for one namespace: a ServiceImport (v1alpha1, annotated with its derived Service's name) per
   * Cloud Map service with instances of this ClusterSet, a derived Service it owns, and one EndpointSlice of every
   * cluster's endpoints owned by that Service (labels as v0.3.1's); all through the 10 s caches.
   */
  async #importNamespace(namespace: string): Promise<void> {
    await this.#serviceId(namespace, '', false);
    for (const name of this.#services.get(namespace)?.value.keys() ?? []) {
      this.#step(`import ${namespace}/${name}`);
      const instances = (await this.#instancesOf(namespace, name)).filter(
        (i) => i.attributes.AWS_INSTANCE_IPV4 !== undefined && i.attributes.SERVICE_PORT !== undefined,
      );
      if (instances.length === 0) continue;
      const derived = v031DerivedName(namespace, name);
      const ports = [
        ...new Map(
          instances.map((i) => [
            `${i.attributes.SERVICE_PROTOCOL}/${i.attributes.SERVICE_PORT}`,
            {
              name: i.attributes.SERVICE_PORT_NAME ?? '',
              protocol: i.attributes.SERVICE_PROTOCOL ?? 'TCP',
              port: Number(i.attributes.SERVICE_PORT),
            },
          ]),
        ).values(),
      ];
      const headless = instances[0]!.attributes.SERVICE_TYPE === 'Headless';
      let serviceImport = (await this.#custom
        .getNamespacedCustomObject({ group: MCS_GROUP, version: 'v1alpha1', plural: 'serviceimports', namespace, name })
        .catch(() => undefined)) as { metadata: { uid: string }; spec: { ips?: string[] } } | undefined;
      serviceImport ??= (await this.#custom.createNamespacedCustomObject({
        group: MCS_GROUP,
        version: 'v1alpha1',
        plural: 'serviceimports',
        namespace,
        body: {
          apiVersion: `${MCS_GROUP}/v1alpha1`,
          kind: 'ServiceImport',
          metadata: { name, namespace, annotations: { [V031_DERIVED_SERVICE_ANNOTATION]: derived } },
          spec: { ips: [], type: headless ? 'Headless' : 'ClusterSetIP', ports },
        },
      })) as { metadata: { uid: string }; spec: { ips?: string[] } };
      let service = await this.#core.readNamespacedService({ namespace, name: derived }).catch(() => undefined);
      service ??= await this.#core.createNamespacedService({
        namespace,
        body: {
          metadata: {
            name: derived,
            namespace,
            ownerReferences: [
              {
                apiVersion: `${MCS_GROUP}/v1alpha1`,
                kind: 'ServiceImport',
                name,
                uid: serviceImport.metadata.uid,
                controller: true,
              },
            ],
          },
          spec: {
            type: 'ClusterIP',
            ...(headless ? { clusterIP: 'None' } : {}),
            ports: ports.map((p) => ({ ...p, targetPort: p.port })),
          },
        },
      });
      this.#step(`import ${namespace}/${name}: ServiceImport and derived Service ${derived} there`);
      const slices = (
        await this.#discovery.listNamespacedEndpointSlice({
          namespace,
          labelSelector: `kubernetes.io/service-name=${derived}`,
        })
      ).items;
      const endpoints = [...new Set(instances.map((i) => i.attributes.AWS_INSTANCE_IPV4!))]
        .sort()
        .map((ip) => ({ addresses: [ip], conditions: { ready: true } }));
      const slice = {
        metadata: {
          namespace,
          generateName: `${derived}-`,
          labels: {
            'kubernetes.io/service-name': derived,
            'multicluster.kubernetes.io/service-name': name,
            'endpointslice.kubernetes.io/managed-by': 'aws-cloud-map-mcs-controller-for-k8s',
          },
          ownerReferences: [
            { apiVersion: 'v1', kind: 'Service', name: derived, uid: service.metadata!.uid!, controller: true },
          ],
        },
        addressType: 'IPv4',
        endpoints,
        ports: [
          ...new Map(
            instances.map((i) => [
              i.attributes.AWS_INSTANCE_PORT,
              {
                name: i.attributes.ENDPOINT_PORT_NAME ?? '',
                protocol: i.attributes.ENDPOINT_PROTOCOL ?? 'TCP',
                port: Number(i.attributes.AWS_INSTANCE_PORT),
              },
            ]),
          ).values(),
        ],
      };
      const existing = slices[0];
      if (existing === undefined) await this.#discovery.createNamespacedEndpointSlice({ namespace, body: slice });
      else if (
        JSON.stringify((existing.endpoints ?? []).map((e) => e.addresses[0]).sort()) !==
        JSON.stringify(endpoints.map((e) => e.addresses[0]))
      ) {
        await this.#discovery.replaceNamespacedEndpointSlice({
          namespace,
          name: existing.metadata!.name!,
          body: { ...slice, metadata: { ...existing.metadata, ...slice.metadata } },
        });
      }
      const ips = service.spec?.clusterIP && service.spec.clusterIP !== 'None' ? [service.spec.clusterIP] : [];
      if (JSON.stringify(serviceImport.spec.ips ?? []) !== JSON.stringify(ips)) {
        await this.#custom.patchNamespacedCustomObject(
          { group: MCS_GROUP, version: 'v1alpha1', plural: 'serviceimports', namespace, name, body: { spec: { ips } } },
          setHeaderOptions('Content-Type', 'application/merge-patch+json'),
        );
      }
    }
  }

  async #reconcile(se: ServiceExportV1Alpha1): Promise<void> {
    const { namespace, name } = se.metadata;
    const service = await this.#core.readNamespacedService({ namespace, name }).catch(() => undefined);
    this.#step(
      `reconcile ${namespace}/${name}${se.metadata.deletionTimestamp ? ' (deleted)' : ''}, finalizers ${JSON.stringify(se.metadata.finalizers ?? [])}`,
    );
    if (se.metadata.deletionTimestamp !== undefined || service === undefined) {
      if (!(se.metadata.finalizers ?? []).includes(V031_FINALIZER)) return;
      const serviceId = await this.#serviceId(namespace, name, false);
      if (serviceId !== undefined)
        await this.#deregister(
          namespace,
          name,
          serviceId,
          (await this.#current(namespace, name)).map((i) => i.id),
        );
      await this.#setFinalizers(
        se,
        (se.metadata.finalizers ?? []).filter((f) => f !== V031_FINALIZER),
      );
      return;
    }
    if (!(se.metadata.finalizers ?? []).includes(V031_FINALIZER))
      await this.#setFinalizers(se, [...(se.metadata.finalizers ?? []), V031_FINALIZER]);
    const exp: V031Export = {
      clusterId: this.#o.clusterId,
      clustersetId: this.#o.clustersetId,
      exportedAt: Date.parse(se.metadata.creationTimestamp),
      serviceType: service.spec?.clusterIP === 'None' ? 'Headless' : 'ClusterSetIP',
    };
    const slices = (
      await this.#discovery.listNamespacedEndpointSlice({
        namespace,
        labelSelector: `kubernetes.io/service-name=${name}`,
      })
    ).items;
    const desired = desiredInstances(exp, slices, service.spec?.ports ?? []);
    const serviceId = await this.#serviceId(namespace, name, true);
    const current = await this.#current(namespace, name);
    const byId = new Map(current.map((i) => [i.id, i]));
    const upserts = desired.filter((i) => JSON.stringify(byId.get(i.id)?.attributes) !== JSON.stringify(i.attributes));
    if (upserts.length > 0) {
      await this.#cloudMap.waitForOperations(
        await Promise.all(upserts.map((i) => this.#cloudMap.registerInstance(serviceId!, i))),
      );
      this.writes.registered += upserts.length;
      this.#instances.delete(`${namespace}/${name}`);
    }
    const wanted = new Set(desired.map((i) => i.id));
    await this.#deregister(
      namespace,
      name,
      serviceId!,
      current.map((i) => i.id).filter((id) => !wanted.has(id)),
    );
  }

  async #deregister(namespace: string, name: string, serviceId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    this.#step(`deregister ${ids.join(' ')}`);
    await this.#cloudMap.waitForOperations(await this.#cloudMap.deregisterInstances(serviceId, ids));
    this.writes.deregistered += ids.length;
    this.#instances.delete(`${namespace}/${name}`);
  }

  /** An update of the whole object with its resourceVersion, as v0.3.1's client.Update. */
  async #setFinalizers(se: ServiceExportV1Alpha1, finalizers: string[]): Promise<void> {
    const { namespace, name } = se.metadata;
    this.#step(`finalizers of ${namespace}/${name} := ${JSON.stringify(finalizers)}`);
    await this.#custom.replaceNamespacedCustomObject({
      group: MCS_GROUP,
      version: 'v1alpha1',
      plural: SERVICE_EXPORT_PLURAL,
      namespace,
      name,
      body: { ...se, metadata: { ...se.metadata, finalizers } },
    });
  }

  /**
   * The Cloud Map service's id through the 10 s cache of the namespace's services; when `create`, the namespace and
   * service are created as v0.3.1 creates them: without a description.
   */
  async #serviceId(namespace: string, name: string, create: boolean): Promise<string | undefined> {
    let cached = this.#services.get(namespace);
    if (
      cached === undefined ||
      Date.now() - cached.at > V031_CACHE_MS ||
      (create && cached.namespaceId === undefined)
    ) {
      let namespaceId = await this.#namespaceId(namespace);
      if (namespaceId === undefined && create) {
        const created = await this.#sdk.send(new CreateHttpNamespaceCommand({ Name: namespace }));
        await this.#cloudMap.waitForOperations([created.OperationId!]);
        namespaceId = await this.#namespaceId(namespace);
      }
      const listed =
        namespaceId === undefined
          ? []
          : ((
              await this.#sdk.send(
                new ListServicesCommand({
                  Filters: [{ Name: 'NAMESPACE_ID', Values: [namespaceId], Condition: 'EQ' }],
                }),
              )
            ).Services ?? []);
      cached = { at: Date.now(), value: new Map(listed.map((s) => [s.Name!, s.Id!])), namespaceId };
      this.#services.set(namespace, cached);
    }
    const id = cached.value.get(name);
    if (id !== undefined || !create || cached.namespaceId === undefined) return id;
    const created = await this.#sdk
      .send(new CreateServiceCommand({ Name: name, NamespaceId: cached.namespaceId }))
      .then(
        (out) => out.Service!.Id!,
        (err: { name?: string; ServiceId?: string }) => {
          if (err.name === 'ServiceAlreadyExists' && err.ServiceId) return err.ServiceId;
          throw err;
        },
      );
    cached.value.set(name, created);
    return created;
  }

  /** Namespace ids, kept once found (ListNamespaces is 0.5/s per account). */
  async #namespaceId(namespace: string): Promise<string | undefined> {
    const known = this.#namespaceIds.get(namespace);
    if (known !== undefined) return known;
    const id = (await this.#sdk.send(new ListNamespacesCommand({}))).Namespaces?.find((n) => n.Name === namespace)?.Id;
    if (id !== undefined) this.#namespaceIds.set(namespace, id);
    return id;
  }

  /** This cluster's instances of the service, through the 10 s cache of its instances. */
  async #current(namespace: string, name: string): Promise<CloudMapInstance[]> {
    return (await this.#instancesOf(namespace, name)).filter((i) => i.attributes.CLUSTER_ID === this.#o.clusterId);
  }

  /** Every cluster's instances of the service in this ClusterSet, through the 10 s cache of its instances. */
  async #instancesOf(namespace: string, name: string): Promise<CloudMapInstance[]> {
    const key = `${namespace}/${name}`;
    let cached = this.#instances.get(key);
    if (cached === undefined || Date.now() - cached.at > V031_CACHE_MS) {
      const found = await this.#cloudMap.discoverInstances(namespace, name, { clustersetId: this.#o.clustersetId });
      cached = { at: Date.now(), value: found?.instances ?? [] };
      this.#instances.set(key, cached);
    }
    return cached.value;
  }
}

/** One instance per IPv4 address × slice port of the Service's slices, as v0.3.1 extracts its endpoints. */
function desiredInstances(
  exp: V031Export,
  slices: readonly V1EndpointSlice[],
  servicePorts: ReadonlyArray<{ name?: string; port: number }>,
): CloudMapInstance[] {
  const out = new Map<string, CloudMapInstance>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4') continue;
    for (const port of slice.ports ?? []) {
      const servicePort = servicePorts.find((p) => (p.name ?? '') === (port.name ?? ''))?.port ?? port.port!;
      for (const endpoint of slice.endpoints ?? []) {
        for (const ip of endpoint.addresses) {
          const instance = v031Instance(exp, {
            ip,
            port: port.port!,
            servicePort,
            protocol: port.protocol ?? 'TCP',
            ready: endpoint.conditions?.ready ?? true,
            ...(endpoint.hostname ? { hostname: endpoint.hostname } : {}),
            ...(endpoint.nodeName ? { nodeName: endpoint.nodeName } : {}),
          });
          out.set(instance.id, instance);
        }
      }
    }
  }
  return [...out.values()];
}
