// The load the testbed benchmarks create in a cluster: Namespaces, CRDs and ClusterProperties, then selector-less
// Services each with one EndpointSlice written by the benchmark (so endpoints cost no pods) and, optionally, a
// ServiceExport. Also reads a process's memory from outside it (/proc), as a kubelet would.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterProperties } from '../hack/demo/cluster-properties.ts';
import type { TestCluster, TestClusterSet } from '../hack/testbed/index.ts';
import { kubectlBinary } from '../hack/testbed/paths.ts';
import { forEachLimited } from '../src/runtime/for-each-limited.ts';
import {
  ABOUT_GROUP,
  CLUSTER_PROPERTY_PLURAL,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
  MCS_GROUP,
  SERVICE_EXPORT_PLURAL,
  SERVICE_IMPORT_PLURAL,
  STORAGE_VERSION,
  SYSTEM_NAMESPACE,
} from '../src/core/names.ts';
import { kubeClientFor, type KubeClient } from '../src/kube/client.ts';
import { ENDPOINT_SLICES, NAMESPACES, resourcePath, SERVICE_EXPORTS, SERVICES } from '../src/kube/resources.ts';

const BENCH_MANAGER = 'bench.mcs-cloudmap';
const CRD_NAMES = [
  `${SERVICE_EXPORT_PLURAL}.${MCS_GROUP}`,
  `${SERVICE_IMPORT_PLURAL}.${MCS_GROUP}`,
  `${CLUSTER_PROPERTY_PLURAL}.${ABOUT_GROUP}`,
];

/** Namespace of service `i` when spread over `count` namespaces. */
export const ns = (i: number, count: number) => `bench-${i % count}`;
export const name = (i: number) => `svc-${i}`;

/**
 * Endpoint k of service i in the `block`th exporting cluster: a distinct address in 10.(250 + block).0.0/16 (no pod
 * behind it; nothing connects to it), so two clusters exporting the same service never share an endpoint.
 */
export function address(i: number, k: number, per: number, block = 0): string {
  const n = i * per + k;
  return `10.${250 + block}.${Math.floor(n / 256) % 256}.${n % 256}`;
}

export function addresses(i: number, per: number, block = 0): string[] {
  return Array.from({ length: per }, (_, k) => address(i, k, per, block));
}

function kubectl(cluster: TestCluster, args: string[], input?: string): string {
  return execFileSync(kubectlBinary(), ['--kubeconfig', cluster.kubeconfigPath, ...args], {
    encoding: 'utf8',
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

export function sliceBody(
  namespace: string,
  service: string,
  addresses: string[],
  unready: ReadonlySet<string> = new Set(),
) {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-bench`,
      namespace,
      labels: { [LABEL_KUBE_SERVICE_NAME]: service, [LABEL_MANAGED_BY]: BENCH_MANAGER },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: !unready.has(a) } })),
  };
}

export function serviceExportBody(namespace: string, service: string) {
  return {
    apiVersion: `${MCS_GROUP}/${STORAGE_VERSION}`,
    kind: 'ServiceExport',
    metadata: { name: service, namespace },
  };
}

/** A Service, its EndpointSlice when it has `addresses`, and its ServiceExport when `exportIt`. */
export async function createExported(
  client: KubeClient,
  namespace: string,
  service: string,
  addresses: string[],
  exportIt: boolean,
): Promise<void> {
  const post = (path: string, body: unknown) => client.request({ method: 'POST', path, body });
  await post(resourcePath(SERVICES, namespace), {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: service, namespace },
    spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 80 }] },
  });
  if (addresses.length > 0)
    await post(resourcePath(ENDPOINT_SLICES, namespace), sliceBody(namespace, service, addresses));
  if (exportIt) await post(resourcePath(SERVICE_EXPORTS, namespace), serviceExportBody(namespace, service));
}

/** Creates services `from` … `to - 1` (16 at a time) with endpoints of address block `block`; throws with the first failure. */
export async function createServices(
  client: KubeClient,
  from: number,
  to: number,
  namespaces: number,
  endpoints: number,
  exportIt: boolean,
  block = 0,
): Promise<void> {
  const failures = await forEachLimited(
    Array.from({ length: to - from }, (_, k) => from + k),
    16,
    (i) => createExported(client, ns(i, namespaces), name(i), addresses(i, endpoints, block), exportIt),
  );
  if (failures.length > 0)
    throw new Error(`creating ${failures.length} services failed, e.g. ${String(failures[0]!.error)}`);
}

/** CRDs, ClusterProperties, the system namespace and `namespaces` bench namespaces in every cluster. */
export async function prepare(cs: TestClusterSet, namespaces: number): Promise<void> {
  const repo = join(import.meta.dirname, '..');
  for (const cluster of cs.clusters) {
    kubectl(cluster, ['apply', '-k', join(repo, 'crds')]);
    // No webhook server runs here and every object is written and read in the storage version: without a conversion
    // webhook to call, the apiserver's watch cache of each other served version would list every object again every
    // second (failing each time), a load no installation has.
    for (const crd of CRD_NAMES)
      kubectl(cluster, [
        'patch',
        'crd',
        crd,
        '--type=merge',
        '-p',
        '{"spec":{"conversion":{"strategy":"None","webhook":null}}}',
      ]);
    kubectl(cluster, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    kubectl(cluster, ['apply', '-f', '-'], clusterProperties(cluster.id, cs.clustersetId));
    const client = kubeClientFor(cluster.kubeConfig());
    for (const namespace of [SYSTEM_NAMESPACE, ...Array.from({ length: namespaces }, (_, i) => ns(i, namespaces))]) {
      await client.request({
        method: 'POST',
        path: resourcePath(NAMESPACES),
        body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      });
    }
  }
}

export interface ProcessMemory {
  /** Resident set size now. */
  rss: number;
  /** Peak resident set size since the process started (VmHWM). */
  hwm: number;
}

/** Memory of process `pid` in bytes, from /proc/<pid>/status. */
export function processMemory(pid: number): ProcessMemory {
  const bytes = kibFields(`/proc/${pid}/status`);
  return { rss: bytes('VmRSS'), hwm: bytes('VmHWM') };
}

/** Reads a /proc file of `Field:   N kB` lines; the getter gives a field's value in bytes (0 when absent). */
function kibFields(path: string): (field: string) => number {
  const text = readFileSync(path, 'utf8');
  return (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0) * 1024;
}

/** Resident memory of process `pid` by kind, from /proc/<pid>/smaps_rollup: pages of mapped files (mostly the node
 *  binary, shared with every process running it) and anonymous memory (V8's heap, malloc, thread stacks). */
export function residentByKind(pid: number): { file: number; anonymous: number } {
  const bytes = kibFields(`/proc/${pid}/smaps_rollup`);
  return { file: bytes('Rss') - bytes('Anonymous'), anonymous: bytes('Anonymous') };
}

export interface HeapAccount {
  used: number;
  /** Committed V8 heap: the young generation (new), the old generation, code, and the rest (large objects, trusted). */
  total: number;
  new: number;
  old: number;
  code: number;
  /** Memory of ArrayBuffers and Buffers outside the V8 heap. */
  external: number;
}

/** The process's own account of its memory, from its Prometheus default metrics at `metricsUrl`. */
export async function heapAccount(metricsUrl: string): Promise<HeapAccount> {
  const text = await (await fetch(metricsUrl)).text();
  const metric = (name: string, space?: string) => {
    const m = new RegExp(
      `^mcs_\\w*nodejs_${name}${space === undefined ? '' : `\\{space="${space}"\\}`} (\\d+)`,
      'm',
    ).exec(text);
    return m ? Number(m[1]) : 0;
  };
  return {
    used: metric('heap_size_used_bytes'),
    total: metric('heap_size_total_bytes'),
    external: metric('external_memory_bytes'),
    new: metric('heap_space_size_total_bytes', 'new'),
    old: metric('heap_space_size_total_bytes', 'old'),
    code: metric('heap_space_size_total_bytes', 'code'),
  };
}

/** The p-th percentile (0–100) of ascending samples, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

/** CPU time (user + system) process `pid` has used so far, in seconds, from /proc/<pid>/stat (clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * CPU time the host took from this virtual machine's CPUs so far (steal, from /proc/stat), in seconds: on a busy host
 * a process's CPU seconds include time its vCPU was not running, so a figure that moved between days may be the host's.
 */
export function stolenSeconds(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  return Number(cpu[8] ?? 0) / 100;
}
