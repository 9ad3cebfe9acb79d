// A ClusterSet that outlives the command that started it (`npm run testbed -- up`): a detached owner process runs
// startClusterSet() on a well-known directory and idles; `down` stops that process, which takes every child with it.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { sweepAbandonedDataPaths } from './data-path/index.ts';
import { familiesOfFlag, type IpFamilyFlagValue } from './network.ts';
import { cacheDir } from './paths.ts';
import { STATE_FILE, startClusterSet, type ClusterSetState } from './clusterset.ts';
import { logTail, waitFor } from './wait.ts';

export interface UpOptions {
  clusters: number;
  sharedPodCidr: boolean;
  /** The Cloud Map emulator's mode. */
  cloudMapMode: 'realistic' | 'fast';
  dataPath: boolean;
  /** Every cluster's IP families. */
  ipFamilies: IpFamilyFlagValue;
  /** Per cluster by position, replacing `ipFamilies` (a mixed ClusterSet); empty for none. */
  ipFamiliesPerCluster: IpFamilyFlagValue[];
}

/** $MCS_CLOUDMAP_TESTBED_DIR, else .testbed/ at the repository root (git-ignored). */
export function defaultTestbedDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MCS_CLOUDMAP_TESTBED_DIR || resolve(import.meta.dirname, '..', '..', '.testbed');
}

/** The owner's output goes next to the directory: the directory itself must be empty when the ClusterSet starts. */
export function ownerLogPath(dir: string): string {
  return `${dir}.log`;
}

function ownerPidPath(dir: string): string {
  return `${dir}.pid`;
}

export function readState(dir: string): ClusterSetState | undefined {
  const path = join(dir, STATE_FILE);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as ClusterSetState;
}

function readOwnerPid(dir: string): number | undefined {
  const path = ownerPidPath(dir);
  if (!existsSync(path)) return undefined;
  const pid = Number(readFileSync(path, 'utf8').trim());
  return pid > 1 ? pid : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when `pid` runs one of the installed testbed binaries: never signal a pid reused by something else. */
function isTestbedProcess(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(join(cacheDir(), 'bin'));
  } catch {
    return false;
  }
}

/** The running owner's pid, if any. */
export function runningOwner(dir: string): number | undefined {
  const pid = readOwnerPid(dir);
  return pid !== undefined && isAlive(pid) ? pid : undefined;
}

/** Starts the detached owner (`hack/testbed.ts serve`) and waits until its ClusterSet is ready. */
export async function up(script: string, dir: string, opts: UpOptions, timeoutMs = 180_000): Promise<ClusterSetState> {
  const owner = runningOwner(dir);
  if (owner !== undefined)
    throw new Error(
      `a testbed is already running in ${dir} (owner pid ${owner}): stop it first with "npm run testbed -- down"`,
    );
  if (existsSync(dir) || existsSync(ownerLogPath(dir))) {
    throw new Error(`${dir} is left from an earlier testbed: remove it with "npm run testbed -- down"`);
  }
  const log = openSync(ownerLogPath(dir), 'a');
  const args = [
    script,
    'serve',
    `--dir=${dir}`,
    `--clusters=${opts.clusters}`,
    `--shared-pod-cidr=${opts.sharedPodCidr}`,
    `--cloudmap-mode=${opts.cloudMapMode}`,
    `--data-path=${opts.dataPath}`,
    `--ip-families=${opts.ipFamilies}`,
    `--ip-families-per-cluster=${opts.ipFamiliesPerCluster.join(',')}`,
  ];
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', log, log] });
  closeSync(log);
  child.unref();
  writeFileSync(ownerPidPath(dir), `${child.pid}\n`);
  let exitCode: number | null | undefined;
  child.once('exit', (code) => (exitCode = code ?? -1));
  try {
    await waitFor(
      'the testbed to be ready',
      async () => {
        if (exitCode !== undefined) throw new Error(`the testbed owner exited with code ${exitCode}`);
        return readState(dir) !== undefined;
      },
      { timeoutMs, intervalMs: 200 },
    );
  } catch (err) {
    throw new Error(
      `${(err as Error).message}\n--- last lines of ${ownerLogPath(dir)} ---\n${logTail(ownerLogPath(dir), 25)}\n---\n` +
        'Clean up with "npm run testbed -- down".',
      { cause: err },
    );
  }
  return readState(dir)!;
}

/** Body of the detached owner: start the ClusterSet, then idle until SIGTERM/SIGINT stops it. */
export async function serve(dir: string, opts: UpOptions): Promise<void> {
  const cs = await startClusterSet({
    dir,
    clusters: opts.clusters,
    sharedPodCidr: opts.sharedPodCidr,
    cloudMap: { mode: opts.cloudMapMode },
    dataPath: opts.dataPath,
    ipFamilies: familiesOfFlag(opts.ipFamilies),
    ipFamiliesPerCluster: opts.ipFamiliesPerCluster.map(familiesOfFlag),
  });
  const keepAlive = setInterval(() => {}, 60_000);
  const shutdown = async () => {
    clearInterval(keepAlive);
    await cs.stop({ keepLogs: true }); // `down` removes the directory once this process is gone
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
}

/** Stops the owner (its children go with it), makes sure no testbed process of this directory is left, removes files. */
export async function down(dir: string): Promise<{ ownerStopped: boolean; leftoversKilled: number }> {
  const owner = runningOwner(dir);
  if (owner !== undefined) {
    process.kill(owner, 'SIGTERM');
    try {
      await waitFor(`testbed owner ${owner} to exit`, async () => !isAlive(owner), {
        timeoutMs: 20_000,
        intervalMs: 100,
      });
    } catch {
      process.kill(owner, 'SIGKILL');
    }
  }
  // The owner killed its process groups on the way out; give the kernel a moment to finish them. Whatever still runs
  // (owner and watchdog both crashed) is killed here.
  const pids = Object.values(readState(dir)?.pids ?? {});
  const remaining = () => pids.filter(isTestbedProcess);
  await waitFor('the testbed processes to exit', async () => remaining().length === 0, {
    timeoutMs: 3000,
    intervalMs: 50,
  }).catch(() => {});
  const leftovers = remaining();
  for (const pid of leftovers) process.kill(-pid, 'SIGKILL');
  await waitFor('leftover testbed processes to exit', async () => remaining().length === 0, {
    timeoutMs: 10_000,
    intervalMs: 100,
  });
  // A data path whose owner was killed before its clean-up: pods, mounts, namespaces and the bridge go here.
  if (process.getuid?.() === 0) await sweepAbandonedDataPaths((line) => console.log(line));
  rmSync(dir, { recursive: true, force: true });
  rmSync(ownerLogPath(dir), { force: true });
  rmSync(ownerPidPath(dir), { force: true });
  return { ownerStopped: owner !== undefined, leftoversKilled: leftovers.length };
}
