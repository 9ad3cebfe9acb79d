// `npm run demo` on a fresh machine: with an empty cache the demo runs the installer before anything else, and the
// installer says what it builds and how long a cold install takes. The test stops the demo at the installer's first
// build step (a cold build takes minutes), so it checks that the installer starts, not that it finishes.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';

const REPO = join(import.meta.dirname, '..', '..');
const FIRST_BUILD_STEP = /^\[install\] \S+: started/m;

/** Runs the README's command until `stopAt` matches its output, then stops its whole process group. */
function demoUntil(
  env: NodeJS.ProcessEnv,
  stopAt: RegExp,
  timeoutMs: number,
): Promise<{ out: string; stoppedAt?: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'demo', '--', '--once'], {
      cwd: REPO,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let stoppedAt: string | undefined;
    const stop = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(stop, timeoutMs);
    const collect = (c: Buffer) => {
      out += c.toString();
      const m = stopAt.exec(out);
      if (m && stoppedAt === undefined) {
        stoppedAt = m[0];
        stop();
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', () => {
      clearTimeout(timer);
      resolve({ out, stoppedAt });
    });
  });
}

describe('demo on a fresh machine (README: npm ci && npm run demo)', function () {
  this.timeout(180_000);
  let cache: string;

  beforeEach(() => {
    cache = mkdtempSync(join(tmpdir(), 'mcs-cloudmap-empty-cache-'));
  });
  afterEach(() => {
    rmSync(cache, { recursive: true, force: true });
  });

  it('runs the installer first, which lists what it builds into the empty cache and how long a cold install takes', async () => {
    const { out, stoppedAt } = await demoUntil(
      { ...process.env, MCS_CLOUDMAP_CACHE: cache },
      FIRST_BUILD_STEP,
      150_000,
    );
    expect(stoppedAt, `the installer never started a build step; output:\n${out}`).to.not.equal(undefined);
    expect(out).to.include(`Install the testbed binaries into ${cache}`);
    expect(out).to.include(
      `[install] to build into ${cache}: moto etcd kwok kwok_stages mcs_api_crds kubernetes (kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy) coredns helm promtool`,
    );
    expect(out).to.match(/\[install\] a cold install of these takes about \d+ min on 2 idle cores/);
    // Nothing of the ClusterSet starts before the installer has finished.
    expect(out).to.not.include('Start a 2-cluster ClusterSet');
    expect(stoppedAt).to.equal('[install] moto: started');
    const leftovers = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(cache));
    expect(leftovers).to.deep.equal([]);
  });
});
