// The data path of a ClusterSet (startClusterSet({ dataPath: true })): prerequisites, a slot of its own on this
// machine, the host network before the clusters start, and a clean-up that leaves nothing behind: no process, cgroup,
// mount, namespace or bridge. A ClusterSet whose owner died without cleaning up is swept by the next data-path start.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterNetwork } from '../network.ts';
import { createHostNetwork, deleteHostNetwork } from './host-network.ts';
import { removeNodeCgroup } from './node-cgroup.ts';
import { dataPathPlan, MAX_SLOT, type DataPathPlan } from './plan.ts';
import { assertDataPathPrerequisites } from './prerequisites.ts';
import { tryRun } from './run.ts';

export type { DataPathPlan, RealNodePlan } from './plan.ts';
export type { RealNode } from './real-node.ts';
export { importIntoRealNode, startRealNode } from './real-node.ts';
export { createBridgeHost, deleteBridgeHost } from './host-network.ts';
export { DataPathUnavailableError, missingDataPathPrerequisites } from './prerequisites.ts';

/** One file per slot in use: its owner, directory and plan (on tmpfs, so a reboot forgets them with the namespaces). */
const SLOTS_DIR = '/run/mcs-cloudmap-testbed';

interface SlotRecord {
  ownerPid: number;
  dir: string;
  plan: DataPathPlan;
}

export interface DataPath {
  plan: DataPathPlan;
  /** Kills the nodes' processes and pods, unmounts and removes what they left, deletes namespaces and the bridge. */
  cleanup(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function slotFile(slot: number): string {
  return join(SLOTS_DIR, `slot-${slot}.json`);
}

function readSlots(): { slot: number; record: SlotRecord }[] {
  if (!existsSync(SLOTS_DIR)) return [];
  return readdirSync(SLOTS_DIR).flatMap((name) => {
    const m = /^slot-(\d+)\.json$/.exec(name);
    if (!m) return [];
    try {
      return [{ slot: Number(m[1]), record: JSON.parse(readFileSync(join(SLOTS_DIR, name), 'utf8')) as SlotRecord }];
    } catch {
      return [];
    }
  });
}

/** Mount points under `dir` (the kubelet's volume mounts), deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((m): m is string => m !== undefined && m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

async function cleanupSlot(slot: number, record: SlotRecord, othersActive: boolean): Promise<void> {
  const problems: string[] = [];
  for (const node of record.plan.nodes) {
    try {
      await removeNodeCgroup(node.cgroup);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  for (const m of mountsUnder(record.dir)) await tryRun('umount', ['-l', m]);
  // containerd's pod namespaces were mounted in its own mount namespace, gone with it; their empty files remain. While
  // another data-path ClusterSet runs, its files cannot be told apart from ours: leave them to the last one.
  if (!othersActive && existsSync('/run/netns')) {
    for (const name of readdirSync('/run/netns'))
      if (name.startsWith('cni-')) rmSync(join('/run/netns', name), { force: true });
  }
  await deleteHostNetwork(record.plan);
  rmSync(slotFile(slot), { force: true });
  if (problems.length > 0) throw new Error(`data-path clean-up of ${record.dir}: ${problems.join('; ')}`);
}

/** Cleans up after data-path ClusterSets whose owner process is gone (`npm run testbed -- down` runs it too). */
export async function sweepAbandonedDataPaths(log: (line: string) => void): Promise<void> {
  const slots = readSlots();
  const abandoned = slots.filter((s) => !alive(s.record.ownerPid));
  for (const s of abandoned) {
    log(`cleaning up the data path of an abandoned testbed (owner pid ${s.record.ownerPid} gone): ${s.record.dir}`);
    await cleanupSlot(s.slot, s.record, slots.length - abandoned.length > 0);
  }
}

/** Takes the lowest free slot by creating its file exclusively, so two starts never share one. */
function claimSlot(dir: string, networks: readonly ClusterNetwork[]): { slot: number; plan: DataPathPlan } {
  mkdirSync(SLOTS_DIR, { recursive: true });
  for (let slot = 0; slot <= MAX_SLOT; slot++) {
    const plan = dataPathPlan(slot, networks);
    try {
      writeFileSync(slotFile(slot), JSON.stringify({ ownerPid: process.pid, dir, plan } satisfies SlotRecord), {
        flag: 'wx',
      });
      return { slot, plan };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(
    `every data-path slot (0-${MAX_SLOT}) is taken: stop other data-path testbeds (npm run testbed -- down)`,
  );
}

export async function prepareDataPath(
  networks: readonly ClusterNetwork[],
  dir: string,
  log: (line: string) => void,
): Promise<DataPath> {
  assertDataPathPrerequisites();
  await sweepAbandonedDataPaths(log);
  const { slot, plan } = claimSlot(dir, networks);
  const record: SlotRecord = { ownerPid: process.pid, dir, plan };
  const cleanup = async () =>
    cleanupSlot(
      slot,
      record,
      readSlots().some((s) => s.slot !== slot),
    );
  try {
    await createHostNetwork(plan);
  } catch (err) {
    await cleanup();
    throw err;
  }
  log(
    `data path: bridge ${plan.bridge} ${plan.subnet}, real nodes ${plan.nodes.map((n) => `${n.name} ${n.nodeIps.join(',')} pods ${n.podCidrs.join(',')}`).join(', ')}`,
  );
  return { plan, cleanup };
}
