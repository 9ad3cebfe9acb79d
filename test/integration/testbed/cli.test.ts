// `npm run testbed -- up` leaves a usable ClusterSet and prints how to use it; `status` reports it
// healthy; `down` stops every process and removes its files.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { STATE_FILE, type ClusterSetState } from '../../../hack/testbed/index.ts';
import { CLUSTERSET_START_TIMEOUT_MS } from '../../support/clusterset.ts';

const CLI = join(import.meta.dirname, '..', '..', '..', 'hack', 'testbed.ts');
const exec = promisify(execFile);

async function cli(...args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await exec(process.execPath, [CLI, ...args], { encoding: 'utf8' });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2]?.startsWith('Z');
  } catch {
    return false;
  }
}

describe('testbed CLI (npm run testbed -- up|status|down)', function () {
  this.timeout(CLUSTERSET_START_TIMEOUT_MS);
  const root = mkdtempSync(join(tmpdir(), 'mcs-cloudmap-cli-'));
  const dir = join(root, 'testbed');

  after(async () => {
    await cli('down', `--dir=${dir}`);
    rmSync(root, { recursive: true, force: true });
  });

  it('up prints the kubeconfigs, export lines and Cloud Map endpoint of a working ClusterSet; status says healthy; down leaves nothing', async () => {
    const upResult = await cli('up', `--dir=${dir}`, '--clusters=1');
    expect(upResult.code, upResult.stdout).to.equal(0);
    const state = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8')) as ClusterSetState;
    const cls1 = state.clusters[0]!;
    expect(upResult.stdout).to.include(`export KUBECONFIG=${cls1.kubeconfigPath}`);
    expect(upResult.stdout).to.include(state.cloudMapEndpoint);
    expect(upResult.stdout).to.match(/ready in \d+\.\d s/);

    const kc = new KubeConfig();
    kc.loadFromFile(cls1.kubeconfigPath);
    expect(kc.getCurrentContext()).to.equal('cls1');
    const nodes = await kc.makeApiClient(CoreV1Api).listNode();
    expect(nodes.items.map((n) => n.metadata?.name).sort()).to.deep.equal(cls1.nodeNames);

    const statusResult = await cli('status', `--dir=${dir}`);
    expect(statusResult.code, statusResult.stdout).to.equal(0);
    expect(statusResult.stdout).to.not.include('FAIL');
    expect(statusResult.stdout).to.include('cls1 kube-apiserver /readyz');

    const again = await cli('up', `--dir=${dir}`);
    expect(again.code).to.equal(1);
    expect(again.stdout).to.include('already running');

    const pids = [state.ownerPid, ...Object.values(state.pids)];
    expect(pids.filter(alive)).to.have.members(pids);
    const downResult = await cli('down', `--dir=${dir}`);
    expect(downResult.code, downResult.stdout).to.equal(0);
    expect(pids.filter(alive)).to.deep.equal([]);
    expect(existsSync(dir)).to.equal(false);

    const after = await cli('status', `--dir=${dir}`);
    expect(after.code).to.equal(1);
    expect(after.stdout).to.include('no testbed');
  });
});
