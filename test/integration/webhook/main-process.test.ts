// `npm run webhook` as a real process against a testbed cluster: flags and env, readiness only after the informer caches
// synced, and SIGTERM ending in a clean exit after becoming unready.

import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../support/eventually.ts';
import { makeDevCertificates } from '../../../hack/local/dev-certificates.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { httpsClient } from './local-server.ts';
import { installCrds } from '../kube/support.ts';

const ROOT = join(import.meta.dirname, '../../..');
const NODE = join(ROOT, 'node_modules/.bin/node');

describe('src/webhook/main.ts as a process: flags, readiness, graceful shutdown', function () {
  this.timeout(60_000);
  const clusterSet = withClusterSet();
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcs-webhook-main-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('--help prints every flag with its environment variable', () => {
    const r = spawnSync(NODE, ['src/webhook/main.ts', '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status).to.equal(0);
    for (const flag of [
      '--port  [MCS_PORT]  default: 9443',
      '--tls-cert-file',
      '--conflict-policy  [MCS_CONFLICT_POLICY]  default: Warn',
      '--worker-service-account',
      '--metrics-port',
      '--kubeconfig',
    ]) {
      expect(r.stdout).to.contain(flag);
    }
  });

  it('a bad flag exits 2 with a message saying what is accepted', () => {
    const r = spawnSync(NODE, ['src/webhook/main.ts', '--conflict-policy=sometimes'], { cwd: ROOT, encoding: 'utf8' });
    expect([r.status, r.stderr.trim()]).to.deep.equal([
      2,
      'mcs-cloudmap webhook: --conflict-policy: expected one of Warn, Reject, got "sometimes"',
    ]);
  });

  it('serves once its caches are synced and exits 0 on SIGTERM after becoming unready', async () => {
    const certs = makeDevCertificates(dir);
    const cluster = clusterSet().clusters[0]!;
    // The informers list our kinds, so the CRDs must be served (as `kubectl apply -k crds/` installs them).
    await installCrds(cluster.kubeconfigPath);
    const child: ChildProcess = spawn(
      NODE,
      ['src/webhook/main.ts', '--port=0', '--metrics-port=off', '--bind-address=127.0.0.1', '--shutdown-delay=300ms'],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          MCS_KUBECONFIG: cluster.kubeconfigPath,
          MCS_TLS_CERT_FILE: certs.certFile,
          MCS_TLS_KEY_FILE: certs.keyFile,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: Array<Record<string, unknown>> = [];
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => {
      for (const l of c.toString().split('\n'))
        if (l.startsWith('{')) lines.push(JSON.parse(l) as Record<string, unknown>);
    });
    child.stderr!.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await eventually('the webhook to listen', async () => lines.some((l) => l.event === 'listening'), 20_000);
      const port = lines.find((l) => l.event === 'listening')!.port as number;
      const client = httpsClient(port, readFileSync(certs.caFile, 'utf8'));
      await eventually(
        '/readyz to report ready (caches synced)',
        async () => (await client.send('GET', '/readyz')).status === 200,
        20_000,
      );
      child.kill('SIGTERM');
      await eventually(
        '/readyz to report unready during the shutdown delay',
        async () => (await client.send('GET', '/readyz')).status === 503,
        2_000,
      );
      client.agent.destroy();
      expect(await exited, stderr).to.equal(0);
      expect(lines.map((l) => l.event)).to.include.members(['listening', 'signal', 'shutdown', 'stopped']);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
