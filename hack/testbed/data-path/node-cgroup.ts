// One cgroup per real node, in every cgroup v1 hierarchy: its processes (containerd, kubelet, kube-proxy, CoreDNS) in
// <cgroup>/runtime, its pods below <cgroup>/kubepods (the kubelet's cgroupRoot). containerd's shims and the containers
// leave their parent's process group, so a stop finds them by cgroup: everything in the subtree is killed.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** Mount points of the cgroup v1 hierarchies, name=systemd's too: the kubelet wants its cgroupRoot in every one. */
export function cgroupV1Hierarchies(mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): string[] {
  const mounts: string[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const [fstype] = right.split(' ');
    const mountPoint = left.split(' ')[4];
    if (fstype === 'cgroup' && mountPoint?.startsWith(`${CGROUP_ROOT}/`)) mounts.push(mountPoint);
  }
  return mounts;
}

/** Creates <cgroup>/runtime everywhere; returns the cgroup.procs files a process writes its pid to, to join it. */
export function createNodeCgroup(cgroup: string): string[] {
  const hierarchies = cgroupV1Hierarchies();
  if (!hierarchies.some((h) => h.endsWith('/pids'))) {
    throw new Error(
      `no cgroup v1 pids hierarchy under ${CGROUP_ROOT}: the data path finds a node's processes by cgroup`,
    );
  }
  return hierarchies.map((h) => {
    const runtime = join(h, cgroup, 'runtime');
    mkdirSync(runtime, { recursive: true });
    // A new cpuset cgroup has no CPUs or memory nodes until given its parent's; nothing can join it before.
    if (h.endsWith('/cpuset')) {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        const value = readFileSync(join(h, file), 'utf8');
        writeFileSync(join(h, cgroup, file), value);
        writeFileSync(join(runtime, file), value);
      }
    }
    return join(runtime, 'cgroup.procs');
  });
}

/** Every cgroup directory of the subtree, deepest first. */
function subtree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const children = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
  return [...children.flatMap((c) => subtree(join(dir, c.name))), dir];
}

function pidsIn(dir: string): number[] {
  return subtree(dir).flatMap((d) => {
    try {
      return readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

/** Memory the node's processes and pods use now (the memory hierarchy's usage of the subtree), in bytes. */
export function nodeMemoryBytes(cgroup: string): number | undefined {
  try {
    return Number(readFileSync(join(CGROUP_ROOT, 'memory', cgroup, 'memory.usage_in_bytes'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** SIGKILLs every process in the node's subtree until none is left, then removes the cgroups. */
export async function removeNodeCgroup(cgroup: string, timeoutMs = 10_000): Promise<void> {
  const pids = join(CGROUP_ROOT, 'pids', cgroup);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = pidsIn(pids);
    if (left.length === 0) break;
    if (Date.now() > deadline)
      throw new Error(`processes ${left.join(', ')} of cgroup ${cgroup} survived SIGKILL for ${timeoutMs} ms`);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // exited meanwhile
      }
    }
    await sleep(50);
  }
  for (const h of cgroupV1Hierarchies()) {
    for (const dir of subtree(join(h, cgroup))) {
      for (let attempt = 0; ; attempt++) {
        try {
          rmdirSync(dir);
          break;
        } catch (err) {
          // A cgroup is busy for a moment after its last task exits.
          if (attempt >= 50) throw new Error(`removing cgroup ${dir}: ${(err as Error).message}`, { cause: err });
          await sleep(20);
        }
      }
    }
  }
}
