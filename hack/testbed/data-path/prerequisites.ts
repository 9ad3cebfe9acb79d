// What the data path needs from the machine, checked before anything starts: a missing piece is named with what to do,
// never found out as a hang. hack/install-testbed.sh installs all of it when run as root.
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../paths.ts';
import { cgroupV1Hierarchies } from './node-cgroup.ts';

/** The pods' sandbox image: a stand-in built by hack/image/data-path.sh (no registry is reachable). */
export const SANDBOX_IMAGE = 'registry.k8s.io/pause:3.10';

/** Debian's packages that hold the host tools, for the messages. */
const PACKAGES = 'containerd runc containernetworking-plugins iptables conntrack iproute2 util-linux';

export const DATA_PATH_TOOLS = {
  containerd: '/usr/bin/containerd',
  ctr: '/usr/bin/ctr',
  runc: '/usr/sbin/runc',
  cniBinDir: '/usr/lib/cni',
} as const;

/** Where hack/image/data-path.sh leaves the images archive. */
export function dataPathImagesDir(): string {
  return join(cacheDir(), 'image', 'data-path');
}

export class DataPathUnavailableError extends Error {
  override name = 'DataPathUnavailableError';
}

/**
 * Where Debian keeps root's tools (iptables, sysctl, runc). A shell that is not a login shell, or a CI runner, may leave
 * them off PATH even for root; the data path's own processes and these checks need them.
 */
const SYSTEM_BIN_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin'];

function withSystemBinDirs(): void {
  const dirs = (process.env.PATH ?? '').split(':').filter((d) => d !== '');
  process.env.PATH = [...dirs, ...SYSTEM_BIN_DIRS.filter((d) => !dirs.includes(d))].join(':');
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Each missing prerequisite with what to do about it; empty when the data path can start. */
export function missingDataPathPrerequisites(): string[] {
  withSystemBinDirs();
  const missing: string[] = [];
  if (process.getuid?.() !== 0)
    missing.push('root: network namespaces, bridges, cgroups and a kubelet need it (run as root)');
  for (const [what, path] of Object.entries(DATA_PATH_TOOLS)) {
    if (what !== 'cniBinDir' && !executable(path)) missing.push(`${path} (apt-get install ${PACKAGES})`);
  }
  for (const plugin of ['bridge', 'host-local', 'loopback']) {
    if (!executable(join(DATA_PATH_TOOLS.cniBinDir, plugin)))
      missing.push(
        `CNI plugin ${join(DATA_PATH_TOOLS.cniBinDir, plugin)} (apt-get install containernetworking-plugins)`,
      );
  }
  for (const command of ['ip', 'nsenter', 'unshare', 'iptables', 'sysctl']) {
    if (!onPath(command)) missing.push(`${command} on PATH (apt-get install ${PACKAGES} procps)`);
  }
  for (const name of ['kubelet', 'kube-proxy']) {
    if (!executable(join(cacheDir(), 'bin', name)))
      missing.push(`${join(cacheDir(), 'bin', name)} (run bash hack/install-testbed.sh)`);
  }
  if (!existsSync(join(dataPathImagesDir(), 'images.tar')))
    missing.push(`the data-path images in ${dataPathImagesDir()} (run bash hack/image/data-path.sh, as root)`);
  let hierarchies: string[] = [];
  try {
    hierarchies = cgroupV1Hierarchies(readFileSync('/proc/self/mountinfo', 'utf8'));
  } catch {
    // reported below
  }
  for (const controller of ['cpu', 'memory', 'pids', 'cpuset']) {
    if (!hierarchies.some((h) => h.endsWith(`/${controller}`))) {
      missing.push(
        `the cgroup v1 ${controller} hierarchy under /sys/fs/cgroup (the testbed's real nodes run the kubelet with cgroupfs on cgroup v1)`,
      );
    }
  }
  return missing;
}

export function assertDataPathPrerequisites(): void {
  const missing = missingDataPathPrerequisites();
  if (missing.length > 0) {
    throw new DataPathUnavailableError(
      `this machine cannot host the testbed's data path; missing:\n  - ${missing.join('\n  - ')}`,
    );
  }
}
