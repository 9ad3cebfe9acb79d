// The testbed leaves no process behind: not after stop(), not after Ctrl-C (SIGINT), not even when
// the process that owns it is killed with SIGKILL (the watchdog then kills the process groups).
import { expect } from 'chai';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STATE_FILE, startClusterSet, type ClusterSetState } from '../../../hack/testbed/index.ts';
import { cacheDir } from '../../../hack/testbed/paths.ts';
import { eventually } from '../../support/eventually.ts';
import { CLUSTERSET_START_TIMEOUT_MS } from '../../support/clusterset.ts';

const OWNER = join(import.meta.dirname, 'fixtures', 'clusterset-owner.ts');

/** Pids among `pids` that are still running (zombies count as gone: they hold no resources and run nothing). */
function running(pids: number[]): number[] {
  if (pids.length === 0) return [];
  let out: string;
  try {
    out = execFileSync('ps', ['-o', 'pid=,stat=', '-p', pids.join(',')], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when none of the pids exists
  }
  return out
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([, stat]) => stat && !stat.startsWith('Z'))
    .map(([pid]) => Number(pid));
}

function statePids(dir: string): number[] {
  const state = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8')) as ClusterSetState;
  return Object.values(state.pids);
}

/** Starts the owner fixture on `dir` and resolves once its ClusterSet is up. */
async function startOwner(dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [OWNER, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('READY')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`the ClusterSet owner exited with code ${code} before it was ready`)),
    );
  });
  return child;
}

describe('testbed process supervision (no orphans)', function () {
  this.timeout(CLUSTERSET_START_TIMEOUT_MS);
  const dirs: string[] = [];
  const owners: ChildProcess[] = [];

  function newDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'mcs-cloudmap-supervision-'));
    dirs.push(dir);
    return dir;
  }

  after(() => {
    for (const o of owners) if (o.exitCode === null && o.signalCode === null) o.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('stop() ends every process it started and removes the directory', async () => {
    const cs = await startClusterSet({ clusters: 1, log: () => {} });
    const pids = statePids(cs.dir);
    expect(pids).to.have.length(6); // etcd, kube-apiserver, controller-manager, scheduler, kwok, moto
    expect(running(pids)).to.have.members(pids);
    await cs.stop();
    expect(running(pids)).to.deep.equal([]);
    expect(existsSync(cs.dir), `${cs.dir} removed`).to.equal(false);
  });

  it('on SIGINT kills every process, keeps the logs and exits 130', async () => {
    const dir = newDir();
    const owner = await startOwner(dir);
    owners.push(owner);
    const pids = statePids(dir);
    expect(running(pids)).to.have.members(pids);
    const exited = new Promise<number | null>((resolve) => owner.once('exit', (code) => resolve(code)));
    owner.kill('SIGINT');
    expect(await exited).to.equal(130);
    // SIGKILL was sent before the owner exited; the kernel may take a moment to finish them.
    await eventually('the SIGKILLed testbed processes to be gone', async () => running(pids).length === 0, 5000);
    expect(statSync(join(dir, 'cls1', 'logs', 'kube-apiserver.log')).size).to.be.above(0);
  });

  it('kills every process within seconds when the owner is killed with SIGKILL (watchdog)', async () => {
    const dir = newDir();
    const owner = await startOwner(dir);
    owners.push(owner);
    const pids = statePids(dir);
    owner.kill('SIGKILL');
    await eventually(
      'the watchdog to kill the orphaned testbed processes',
      async () => running(pids).length === 0,
      10_000,
    );
  });

  /** Runs `fn` with MCS_CLOUDMAP_CACHE pointing at `cache`. */
  async function withCache<T>(cache: string, fn: () => Promise<T>): Promise<T> {
    const saved = process.env.MCS_CLOUDMAP_CACHE;
    process.env.MCS_CLOUDMAP_CACHE = cache;
    try {
      return await fn();
    } finally {
      if (saved === undefined) delete process.env.MCS_CLOUDMAP_CACHE;
      else process.env.MCS_CLOUDMAP_CACHE = saved;
    }
  }

  it('fails with the install command when a binary is missing, and leaves no process', async () => {
    const cache = newDir();
    const err = await withCache(cache, () =>
      startClusterSet({ clusters: 1, dir: join(cache, 'testbed'), log: () => {} }),
    ).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/is not installed at .*: run "bash hack\/install-testbed\.sh"/);
  });

  it("fails at once, with the component's last log lines, when a component exits during the start, and leaves no process", async () => {
    // A cache whose kube-scheduler exits at once; every other binary is the real one.
    const cache = newDir();
    const real = cacheDir();
    mkdirSync(join(cache, 'bin'));
    for (const name of readdirSync(join(real, 'bin'))) {
      if (name !== 'kube-scheduler') symlinkSync(join(real, 'bin', name), join(cache, 'bin', name));
    }
    symlinkSync(join(real, 'kwok-stages'), join(cache, 'kwok-stages'));
    writeFileSync(join(cache, 'bin', 'kube-scheduler'), '#!/bin/sh\necho "simulated scheduler failure" >&2\nexit 3\n');
    chmodSync(join(cache, 'bin', 'kube-scheduler'), 0o755);

    const dir = join(cache, 'testbed');
    const started = Date.now();
    const err = await withCache(cache, () => startClusterSet({ clusters: 2, dir, log: () => {} })).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/kube-scheduler \(cls[12]\) exited with code 3 before \/healthz answers ok/);
    expect(err?.message).to.include('simulated scheduler failure');
    expect(err?.message).to.include(`logs kept in ${dir}`);
    expect(Date.now() - started, 'failed without waiting for a timeout').to.be.below(60_000);
    const leftovers = execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(dir));
    expect(leftovers).to.deep.equal([]);
  });
});
