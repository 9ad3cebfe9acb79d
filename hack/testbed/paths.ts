// Where the installer puts the testbed binaries, and the checks that say what to run when one is missing.
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Same rule as hack/install-testbed.sh: $MCS_CLOUDMAP_CACHE, else $XDG_CACHE_HOME/mcs-cloudmap, else ~/.cache/mcs-cloudmap. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MCS_CLOUDMAP_CACHE) return env.MCS_CLOUDMAP_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'mcs-cloudmap');
}

export type BinaryName =
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubectl'
  | 'kwok'
  | 'moto_server'
  | 'moto-python'
  | 'coredns'
  | 'helm'
  | 'promtool'
  | 'kubelet'
  | 'kube-proxy';

export class MissingBinaryError extends Error {
  override name = 'MissingBinaryError';
}

/** Absolute path of an installed binary; throws with the command that installs it when it is missing. */
export function binary(name: BinaryName): string {
  const path = join(cacheDir(), 'bin', name);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new MissingBinaryError(
      `${name} is not installed at ${path}: run "bash hack/install-testbed.sh" (set MCS_CLOUDMAP_CACHE to use another cache)`,
    );
  }
  return path;
}

/** kubectl of the testbed's Kubernetes version (kustomize built in): every script and test runs this one, not PATH's. */
export function kubectlBinary(): string {
  return binary('kubectl');
}

/** The kwok Stage files copied by the installer (node initialise + heartbeat with lease, pod lifecycle). */
export function kwokStageFiles(): string[] {
  const dir = join(cacheDir(), 'kwok-stages');
  const names = [
    'node-initialize.yaml',
    'node-heartbeat-with-lease.yaml',
    'pod-ready.yaml',
    'pod-complete.yaml',
    'pod-delete.yaml',
  ];
  const missing = names.filter((n) => !existsSync(join(dir, n)));
  if (missing.length > 0) {
    throw new MissingBinaryError(
      `kwok stages ${missing.join(', ')} are missing from ${dir}: run "bash hack/install-testbed.sh"`,
    );
  }
  return names.map((n) => join(dir, n));
}

export type CoreDnsAvailability = { available: true; path: string } | { available: false; reason: string };

/** Stock CoreDNS, built by the installer; the reason says how to install it when missing. */
export function coreDnsAvailability(): CoreDnsAvailability {
  try {
    return { available: true, path: binary('coredns') };
  } catch (err) {
    return { available: false, reason: (err as Error).message };
  }
}

/** The sigs.k8s.io/mcs-api release the installer downloads: its MCS_API_VERSION default, so the two cannot disagree. */
export function mcsApiVersion(): string {
  const script = readFileSync(join(import.meta.dirname, '..', 'install-testbed.sh'), 'utf8');
  const version = /^MCS_API_VERSION=\$\{MCS_API_VERSION:-(v[0-9][^}]*)\}$/m.exec(script)?.[1];
  if (version === undefined) throw new Error('hack/install-testbed.sh sets no MCS_API_VERSION default');
  return process.env.MCS_API_VERSION ?? version;
}

export type UpstreamCrd = { available: true; path: string } | { available: false; reason: string };

/** An upstream mcs-api CRD file (`serviceexports`, `serviceimports`) the installer copied into the cache (K5). */
export function upstreamCrd(plural: string): UpstreamCrd {
  const path = join(cacheDir(), 'mcs-api', mcsApiVersion(), `multicluster.x-k8s.io_${plural}.yaml`);
  return existsSync(path)
    ? { available: true, path }
    : { available: false, reason: `${path} is missing: run "bash hack/install-testbed.sh"` };
}
