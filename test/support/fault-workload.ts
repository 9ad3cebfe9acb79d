// The workload of the fault tests: services exported round-robin from every cluster, whose ports, endpoints and
// readiness change in rounds, and the exact check that every cluster imports what is exported. `run()` is one Cloud
// Map fault window (the emulator's fault switch answering a share of the calls with errors, throttling or stalls while
// every service changes), then the time until every cluster converges and what it checks (M4, M6, E8, I3, X4): no
// duplicate instance in Cloud Map, no instance of another cluster written (from the emulator's request log), no
// ServiceImport deleted and created again, exports reporting a call that kept failing with Ready=Unknown/Failed.
// Used by test/e2e/cloudmap-faults.test.ts, test/e2e/control-plane-restart.test.ts and `npm run chaos -- --cloudmap`.
import { DiscoverInstancesCommand, type ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import type { CloudMapEmulatorControl, CloudMapFaults } from '../../hack/testbed/cloudmap-emulator.ts';
import { eventually } from './eventually.ts';
import {
  CONTROLLER_NAME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
  MCS_GROUP,
  SERVICE_EXPORT_PLURAL,
  SERVICE_IMPORT_PLURAL,
  STORAGE_VERSION,
} from '../../src/core/names.ts';
import type { E2ECluster, ObjectWithStatus, ServiceImportView } from './e2e-harness.ts';
import { createNamespaces, serviceExport } from './workloads.ts';

export interface FaultRunOptions {
  namespace: string;
  /** Services in all, exported round-robin from the clusters. */
  services: number;
  /** How long the faults last; the changes are spread over it. */
  faultMs: number;
  /** Rounds of changes (every service changes in each) while the faults last. */
  rounds: number;
  /** Bound of each wait for convergence. */
  convergeTimeoutMs: number;
  log?: (line: string) => void;
}

export interface FaultRunResult {
  faults: CloudMapFaults;
  faultMs: number;
  /** From the faults' end to every cluster importing exactly what is exported. */
  convergedMs: number;
  /** From the first change to the same point. */
  sinceFirstChangeMs: number;
  /** Cloud Map requests during the run (faults on and the convergence after), by API and outcome. */
  requests: Record<string, Record<string, number>>;
  /** Writes of an instance whose CLUSTER_ID is not the writer's (M4): must be none. */
  foreignWrites: string[];
  /** Instance ids listed more than once by DiscoverInstances, or counts that differ from the export: must be none. */
  duplicates: string[];
  /** ServiceImports deleted (and created again) during the run: must be none. */
  importsReplaced: string[];
  /** Ready conditions other than Exported seen on the exports while the run lasted, distinct, by cluster. */
  notReady: string[];
  /** Exports not Ready=True/Exported at the end: must be none. */
  notExportedAtEnd: string[];
}

interface ServiceShape {
  ports: Array<{ name: string; port: number }>;
  endpoints: Array<{ address: string; ready: boolean }>;
}

/** Service `i` as cluster `k` exports it in round `r`: the ports, addresses and readiness all move between rounds. */
export function serviceShape(i: number, k: number, r: number): ServiceShape {
  const ports =
    r % 2 === 0
      ? [{ name: 'http', port: 80 }]
      : [
          { name: 'http', port: 80 },
          { name: 'alt', port: 8080 },
        ];
  const endpoints = Array.from({ length: 2 + ((i + r) % 3) }, (_, e) => ({
    address: `10.${250 + k}.${i}.${(r % 20) * 10 + e + 1}`,
    ready: !(e === 0 && r % 2 === 1),
  }));
  return { ports, endpoints };
}

export const serviceName = (i: number): string => `svc-${i}`;

/** The Service without selector and its EndpointSlice for one shape. */
function serviceObjects(namespace: string, name: string, shape: ServiceShape): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: { ports: shape.ports.map((p) => ({ ...p, protocol: 'TCP', targetPort: p.port })) },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-local`, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: shape.ports.map((p) => ({ ...p, protocol: 'TCP' })),
      endpoints: shape.endpoints.map((e) => ({ addresses: [e.address], conditions: { ready: e.ready } })),
    },
  ];
}

const sortedText = (items: Iterable<string>): string => [...items].sort().join(' ');

export class FaultWorkload {
  readonly #clusters: readonly E2ECluster[];
  readonly #control: CloudMapEmulatorControl;
  readonly #cloudMap: ServiceDiscoveryClient;
  readonly #o: FaultRunOptions;
  /** The round of changes each service is at. */
  #rounds: number[];

  constructor(
    clusters: readonly E2ECluster[],
    control: CloudMapEmulatorControl,
    cloudMap: ServiceDiscoveryClient,
    options: FaultRunOptions,
  ) {
    this.#clusters = clusters;
    this.#control = control;
    this.#cloudMap = cloudMap;
    this.#o = options;
    this.#rounds = Array.from({ length: options.services }, () => 0);
  }

  #log(line: string): void {
    this.#o.log?.(line);
  }

  #exporter(i: number): number {
    return i % this.#clusters.length;
  }

  /** Every service (exported from the clusters at `only`, default all) one round further. */
  #apply(withExports: boolean, only?: readonly number[]): void {
    this.#clusters.forEach((cluster, k) => {
      if (only !== undefined && !only.includes(k)) return;
      const objects: object[] = [];
      for (let i = k; i < this.#o.services; i += this.#clusters.length) {
        objects.push(
          ...serviceObjects(
            this.#o.namespace,
            serviceName(i),
            serviceShape(i, k, withExports ? 0 : ++this.#rounds[i]!),
          ),
        );
        if (withExports) objects.push(serviceExport(this.#o.namespace, serviceName(i)));
      }
      cluster.apply(objects);
    });
  }

  /** Services whose import in `cluster` differs from what is exported now, with the first difference. */
  async #differences(cluster: E2ECluster): Promise<string[]> {
    const namespace = this.#o.namespace;
    const custom = cluster.kubeConfig.makeApiClient(CustomObjectsApi);
    const discovery = cluster.kubeConfig.makeApiClient(DiscoveryV1Api);
    const imports = (await custom.listNamespacedCustomObject({
      group: MCS_GROUP,
      version: STORAGE_VERSION,
      namespace,
      plural: SERVICE_IMPORT_PLURAL,
    })) as { items: ServiceImportView[] };
    const slices = (
      await discovery.listNamespacedEndpointSlice({
        namespace,
        labelSelector: `${LABEL_MANAGED_BY}=${CONTROLLER_NAME}`,
      })
    ).items;
    const byName = new Map(imports.items.map((i) => [i.metadata.name, i]));
    const differences: string[] = [];
    for (let i = 0; i < this.#o.services; i++) {
      const name = serviceName(i);
      const k = this.#exporter(i);
      const want = serviceShape(i, k, this.#rounds[i]!);
      const imported = byName.get(name);
      const wantPorts = sortedText(want.ports.map((p) => `${p.name}:${p.port}/TCP`));
      const gotPorts = sortedText(
        (imported?.spec.ports ?? []).map((p) => `${p.name ?? ''}:${p.port}/${p.protocol ?? 'TCP'}`),
      );
      const mine = slices.filter((s) => s.metadata?.labels?.[LABEL_SERVICE_NAME] === name);
      const wantEndpoints = sortedText(want.endpoints.map((e) => `${this.#clusters[k]!.id}|${e.address}|${e.ready}`));
      const gotEndpoints = sortedText(
        mine.flatMap((s) =>
          (s.endpoints ?? []).map(
            (e) => `${s.metadata?.labels?.[LABEL_SOURCE_CLUSTER]}|${e.addresses[0]}|${e.conditions?.ready === true}`,
          ),
        ),
      );
      const sliceUnits = new Set(mine.map((s) => sortedText((s.ports ?? []).map((p) => `${p.name ?? ''}:${p.port}`))));
      const wantSlicePorts = sortedText(want.ports.map((p) => `${p.name}:${p.port}`));
      if (imported === undefined) differences.push(`${name}: no ServiceImport`);
      else if (gotPorts !== wantPorts) differences.push(`${name}: ports ${gotPorts}, want ${wantPorts}`);
      else if (gotEndpoints !== wantEndpoints)
        differences.push(`${name}: endpoints ${gotEndpoints}, want ${wantEndpoints}`);
      else if (sliceUnits.size !== 1 || !sliceUnits.has(wantSlicePorts))
        differences.push(`${name}: slice ports ${[...sliceUnits].join(' / ')}, want ${wantSlicePorts}`);
    }
    return differences;
  }

  /** Changes every service exported from the clusters at these positions (default all) once more. */
  change(only?: readonly number[]): void {
    this.#apply(false, only);
  }

  /** Waits until every cluster imports exactly what is exported; returns when that was first seen. */
  async converged(what: string): Promise<number> {
    let last: string[] = [];
    await eventually(
      `${what}: every cluster to import exactly the exported ports, endpoints and readiness`,
      async () => {
        last = (
          await Promise.all(this.#clusters.map(async (c) => (await this.#differences(c)).map((d) => `${c.id} ${d}`)))
        ).flat();
        return last.length === 0;
      },
      this.#o.convergeTimeoutMs,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${last.length} differences, first: ${last.slice(0, 5).join('; ')}`, {
        cause: err,
      });
    });
    return Date.now();
  }

  async #exports(): Promise<ObjectWithStatus[][]> {
    return Promise.all(
      this.#clusters.map(async (c) => {
        const custom = c.kubeConfig.makeApiClient(CustomObjectsApi);
        return (
          (await custom.listNamespacedCustomObject({
            group: MCS_GROUP,
            version: STORAGE_VERSION,
            namespace: this.#o.namespace,
            plural: SERVICE_EXPORT_PLURAL,
          })) as { items: ObjectWithStatus[] }
        ).items;
      }),
    );
  }

  /** The uid of every ServiceImport, by `<cluster>/<name>`: a changed uid means deleted and created again. */
  async importUids(): Promise<Map<string, string>> {
    const uids = new Map<string, string>();
    await Promise.all(
      this.#clusters.map(async (c) => {
        const custom = c.kubeConfig.makeApiClient(CustomObjectsApi);
        const list = (await custom.listNamespacedCustomObject({
          group: MCS_GROUP,
          version: STORAGE_VERSION,
          namespace: this.#o.namespace,
          plural: SERVICE_IMPORT_PLURAL,
        })) as { items: ServiceImportView[] };
        for (const i of list.items) uids.set(`${c.id}/${i.metadata.name}`, i.metadata.uid);
      }),
    );
    return uids;
  }

  /** Creates the namespace and the exports and waits for their first import (the steady state before the faults). */
  async setUp(): Promise<number> {
    const started = Date.now();
    await createNamespaces(this.#clusters, this.#o.namespace);
    this.#apply(true);
    await this.converged('before the faults');
    return Date.now() - started;
  }

  /** One window of `faults` with changes, then convergence; the run's figures. `setUp()` first. */
  async run(faults: CloudMapFaults): Promise<FaultRunResult> {
    const { faultMs, rounds } = this.#o;
    const uidsBefore = await this.importUids();
    const notReady = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const lists = await this.#exports().catch(() => []);
        lists.forEach((items, k) => {
          for (const e of items) {
            const ready = e.status?.conditions?.find((c) => c.type === 'Ready');
            if (ready && ready.reason !== 'Exported')
              notReady.add(
                `${this.#clusters[k]!.id} ${e.metadata.name}: ${ready.status}/${ready.reason}: ${ready.message}`,
              );
          }
        });
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    const start = Date.now();
    await this.#control.setFaults(faults);
    this.#log(`faults on: ${JSON.stringify(faults)} for ${faultMs / 1000} s, ${rounds} rounds of changes`);
    let faultEnd: number;
    try {
      for (let r = 1; r <= rounds; r++) {
        this.#apply(false);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + (r * faultMs) / rounds - Date.now())));
      }
    } finally {
      await this.#control.clearFaults();
      faultEnd = Date.now();
    }
    this.#log(`faults off after ${((faultEnd - start) / 1000).toFixed(1)} s`);
    let convergedAt: number;
    try {
      convergedAt = await this.converged('after the faults');
    } finally {
      watching = false;
      await watcher;
    }
    const exportsAtEnd = await this.#exports();
    const requests = await this.#control.requests(start);
    const byApi: Record<string, Record<string, number>> = {};
    for (const r of requests) (byApi[r.api] ??= {})[r.outcome] = (byApi[r.api]![r.outcome] ?? 0) + 1;
    const foreignWrites = requests
      .filter((r) => (r.api === 'RegisterInstance' || r.api === 'DeregisterInstance') && r.clusterId !== '')
      .filter((r) => !this.#clusters.some((c) => r.app.startsWith(`${c.id}-`) && r.clusterId === c.id))
      .map((r) => `${r.app || r.accessKey} ${r.api} ${r.instanceId} of ${r.clusterId} (${r.outcome})`);
    const uidsAfter = await this.importUids();
    const importsReplaced = [...uidsBefore].filter(([key, uid]) => uidsAfter.get(key) !== uid).map(([key]) => key);
    return {
      faults,
      faultMs: faultEnd - start,
      convergedMs: convergedAt - faultEnd,
      sinceFirstChangeMs: convergedAt - start,
      requests: byApi,
      foreignWrites,
      duplicates: await this.#duplicates(),
      importsReplaced,
      notReady: [...notReady].sort(),
      notExportedAtEnd: exportsAtEnd.flatMap((items, k) =>
        items
          .filter((e) => e.status?.conditions?.find((c) => c.type === 'Ready')?.reason !== 'Exported')
          .map((e) => `${this.#clusters[k]!.id}/${e.metadata.name}`),
      ),
    };
  }

  /** Each service's instances in Cloud Map: ids unique and as many as its exporter's endpoints × ports. */
  async #duplicates(): Promise<string[]> {
    const found: string[] = [];
    for (let i = 0; i < this.#o.services; i++) {
      const want = serviceShape(i, this.#exporter(i), this.#rounds[i]!);
      const res = await this.#cloudMap.send(
        new DiscoverInstancesCommand({
          NamespaceName: this.#o.namespace,
          ServiceName: serviceName(i),
          HealthStatus: 'ALL',
          MaxResults: 1000,
        }),
      );
      const ids = (res.Instances ?? []).map((x) => x.InstanceId ?? '');
      if (new Set(ids).size !== ids.length)
        found.push(`${serviceName(i)}: ${ids.length - new Set(ids).size} id(s) listed twice`);
      if (ids.length !== want.endpoints.length * want.ports.length)
        found.push(`${serviceName(i)}: ${ids.length} instances, want ${want.endpoints.length * want.ports.length}`);
    }
    return found;
  }

  /** Changes one service while `faults` (e.g. every RegisterInstance failing) last `forMs`; the Ready conditions its
   * export showed meanwhile, and how long until it is Exported again once they stop. */
  async outage(faults: CloudMapFaults, forMs: number): Promise<{ seen: string[]; exportedAgainMs: number }> {
    const i = 0;
    const k = this.#exporter(i);
    const cluster = this.#clusters[k]!;
    const seen = new Set<string>();
    await this.#control.setFaults(faults);
    const until = Date.now() + forMs;
    let end: number;
    try {
      cluster.apply(serviceObjects(this.#o.namespace, serviceName(i), serviceShape(i, k, ++this.#rounds[i]!)));
      while (Date.now() < until) {
        const ready = (await cluster.serviceExport(this.#o.namespace, serviceName(i)))?.status?.conditions?.find(
          (c) => c.type === 'Ready',
        );
        if (ready) seen.add(`${ready.status}/${ready.reason}: ${ready.message}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    } finally {
      await this.#control.clearFaults();
      end = Date.now();
    }
    await eventually(
      `${cluster.id}'s export of ${serviceName(i)} to be Exported again`,
      async () =>
        (await cluster.serviceExport(this.#o.namespace, serviceName(i)))?.status?.conditions?.find(
          (c) => c.type === 'Ready',
        )?.reason === 'Exported',
      this.#o.convergeTimeoutMs,
    );
    const exportedAgainMs = Date.now() - end;
    await this.converged('after the outage');
    return { seen: [...seen], exportedAgainMs };
  }
}
