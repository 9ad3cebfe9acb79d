// Reads one kubeconfig context into a ClusterView: ClusterProperties, ServiceExports with their Services and
// EndpointSlices, ServiceImports with their MCS EndpointSlices. Read-only; every failure becomes a ClusterView.error
// that says what to do.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../core/names.ts';
import { KubeClient } from '../kube/client.ts';
import {
  CLUSTER_PROPERTIES,
  ENDPOINT_SLICES,
  SERVICE_EXPORTS,
  SERVICE_IMPORTS,
  SERVICES,
  resourcePath,
  type ResourceType,
} from '../kube/resources.ts';
import { explainKubeError } from './explain-error.ts';
import {
  exportView,
  importView,
  type EndpointSliceJson,
  type ServiceExportJson,
  type ServiceImportJson,
  type ServiceJson,
} from './kube-views.ts';
import type { ClusterView } from './status-model.ts';

export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}

/** Loads the kubeconfig (the given paths, else $KUBECONFIG or ~/.kube/config) and checks that every context exists. */
export function loadKubeconfigs(
  path: string,
  contexts: readonly string[],
): { source: string; configs: Map<string, KubeConfig> } {
  // Like $KUBECONFIG, --kubeconfig may list several files (one per cluster, as the testbed writes them).
  const files = path.split(delimiter).filter(Boolean);
  const load = () => {
    const kc = new KubeConfig();
    if (files.length === 0) kc.loadFromDefault();
    for (const [i, file] of files.entries()) {
      if (i === 0) {
        kc.loadFromFile(file);
        continue;
      }
      const more = new KubeConfig();
      more.loadFromFile(file);
      kc.mergeConfig(more);
    }
    return kc;
  };
  const source = path || process.env.KUBECONFIG || join(homedir(), '.kube', 'config');
  // Without this check the client falls back to an unauthenticated http://localhost:8080 context.
  if (!path && !process.env.KUBECONFIG && !existsSync(source)) {
    throw new KubeconfigError(
      `no kubeconfig: ${source} does not exist and KUBECONFIG is unset; pass --kubeconfig or set KUBECONFIG.`,
    );
  }
  let probe: KubeConfig;
  try {
    probe = load();
  } catch (err) {
    throw new KubeconfigError(
      `cannot read the kubeconfig ${source}: ${err instanceof Error ? err.message : String(err)}; pass --kubeconfig with a readable file.`,
    );
  }
  const known = probe.getContexts().map((c) => c.name);
  if (known.length === 0)
    throw new KubeconfigError(
      `the kubeconfig ${source} has no contexts; pass --kubeconfig with the file your clusters are in.`,
    );
  const wanted = contexts.length > 0 ? contexts : currentContexts(files, probe);
  const missing = wanted.filter((c) => !known.includes(c));
  if (missing.length > 0) {
    throw new KubeconfigError(
      `context ${missing.map((m) => `"${m}"`).join(', ')} not found in ${source}; known contexts: ${known.join(', ')}. Pass --context with names from that list.`,
    );
  }
  const configs = new Map<string, KubeConfig>();
  for (const name of wanted) {
    const kc = load();
    kc.setCurrentContext(name);
    configs.set(name, kc);
  }
  return { source, configs };
}

/** Without --context: the current context of each kubeconfig file given (one cluster per file), else the merged one's. */
function currentContexts(files: readonly string[], merged: KubeConfig): string[] {
  if (files.length < 2) return [merged.getCurrentContext()];
  const names = files.map((file) => {
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    return kc.getCurrentContext();
  });
  return [...new Set(names.filter(Boolean))];
}

interface List<T> {
  items?: T[] | null;
  metadata?: { continue?: string };
}

async function listAll<T>(client: KubeClient, resource: ResourceType, namespace?: string): Promise<T[]> {
  const out: T[] = [];
  let cont: string | undefined;
  do {
    const page = await client.request<List<T>>({
      method: 'GET',
      path: resourcePath(resource, namespace),
      query: { limit: 500, continue: cont },
      target: `${resource.plural}${namespace ? ` in ${namespace}` : ''}`,
    });
    out.push(...(page.items ?? []));
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return out;
}

interface PropertyJson {
  metadata: { name: string };
  spec?: { value?: string };
}

export async function readCluster(context: string, kubeConfig: KubeConfig): Promise<ClusterView> {
  const server = kubeConfig.getCurrentCluster()?.server ?? '(no server)';
  const empty = { context, server, exports: [], imports: [] };
  let client: KubeClient;
  try {
    client = new KubeClient(kubeConfig, { cluster: context, requestTimeoutMs: 15_000 });
  } catch (err) {
    return { ...empty, error: `context "${context}": ${err instanceof Error ? err.message : String(err)}` };
  }
  let what = '';
  const step = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    what = label;
    return fn();
  };
  try {
    const properties = await step('clusterproperties.about.k8s.io', () =>
      listAll<PropertyJson>(client, CLUSTER_PROPERTIES),
    );
    const value = (name: string) => properties.find((p) => p.metadata.name === name)?.spec?.value;
    const clusterId = value(CLUSTER_ID_PROPERTY);
    const clustersetId = value(CLUSTERSET_ID_PROPERTY);
    const exports = await step('serviceexports.multicluster.x-k8s.io', () =>
      listAll<ServiceExportJson>(client, SERVICE_EXPORTS),
    );
    const imports = await step('serviceimports.multicluster.x-k8s.io', () =>
      listAll<ServiceImportJson>(client, SERVICE_IMPORTS),
    );
    const namespaces = [...new Set([...exports, ...imports].map((o) => o.metadata.namespace ?? ''))].sort();
    const services = new Map<string, ServiceJson[]>();
    const slices = new Map<string, EndpointSliceJson[]>();
    for (const ns of namespaces) {
      services.set(ns, await step(`services in ${ns}`, () => listAll<ServiceJson>(client, SERVICES, ns)));
      slices.set(
        ns,
        await step(`endpointslices in ${ns}`, () => listAll<EndpointSliceJson>(client, ENDPOINT_SLICES, ns)),
      );
    }
    const inNs = <T>(m: Map<string, T[]>, ns: string | undefined) => m.get(ns ?? '') ?? [];
    return {
      context,
      server,
      ...(clusterId === undefined ? {} : { clusterId }),
      ...(clustersetId === undefined ? {} : { clustersetId }),
      exports: exports.map((se) =>
        exportView(
          se,
          inNs(services, se.metadata.namespace).find((s) => s.metadata.name === se.metadata.name),
          inNs(slices, se.metadata.namespace),
        ),
      ),
      imports: imports.map((si) => importView(si, inNs(slices, si.metadata.namespace))),
    };
  } catch (err) {
    return { ...empty, error: explainKubeError(err, context, server, what) };
  } finally {
    client.close();
  }
}
