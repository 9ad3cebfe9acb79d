// What a conformance run ran on: the machine, the Kubernetes version the apiservers report, the cluster DNS version,
// Go and Node.js. The cluster DNS is whatever the testbed runs: CoreDNS prints its version as it starts, so it is read
// from the DNS log of the cluster's real node, and reported as unknown rather than guessed when that log lacks it.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { TestCluster } from '../testbed/index.ts';
import { kubectlBinary } from '../testbed/paths.ts';
import { goVersion } from './suite-build.ts';
import type { Machine, Versions } from './summary.ts';

export function machine(): Machine {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    loadAverage: Math.round(loadavg()[0]! * 10) / 10,
  };
}

function kubernetesVersion(cluster: TestCluster): string {
  const out = execFileSync(kubectlBinary(), ['--kubeconfig', cluster.kubeconfigPath, 'version', '-o', 'json'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return (JSON.parse(out) as { serverVersion?: { gitVersion?: string } }).serverVersion?.gitVersion ?? 'unknown';
}

/** `CoreDNS-1.11.4` as CoreDNS prints it at start-up, from a log's text. */
export function coreDnsVersionIn(log: string): string | undefined {
  return /CoreDNS-\d+\.\d+\.\d+\S*/.exec(log)?.[0];
}

function clusterDnsVersion(cluster: TestCluster): string {
  const path = join(cluster.logsDir, 'coredns.log');
  let log = '';
  try {
    log = readFileSync(path, 'utf8');
  } catch {
    /* reported below */
  }
  return coreDnsVersionIn(log) ?? `unknown (no CoreDNS version in ${path})`;
}

/** One value when every cluster agrees, else each cluster's. */
function agreed(clusters: readonly TestCluster[], of: (c: TestCluster) => string): string {
  const values = clusters.map((c) => [c.id, of(c)] as const);
  return new Set(values.map(([, v]) => v)).size === 1
    ? values[0]![1]
    : values.map(([id, v]) => `${id}: ${v}`).join(', ');
}

export function versions(clusters: readonly TestCluster[]): Versions {
  return {
    kubernetes: agreed(clusters, kubernetesVersion),
    coredns: agreed(clusters, clusterDnsVersion),
    go: goVersion(),
    node: process.version,
  };
}
