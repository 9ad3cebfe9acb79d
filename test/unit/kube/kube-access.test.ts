import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { loadKubeAccess, staticAccess, staticCredentialsOf } from '../../../src/kube/kube-access.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function kubeconfig(
  user: Record<string, unknown>,
  cluster: Record<string, unknown> = { server: 'https://127.0.0.1:6443' },
): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'ctx',
    clusters: [
      { name: 'other', cluster: { server: 'https://wrong' } },
      { name: 'c1', cluster },
    ],
    users: [{ name: 'u1', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c1', user: 'u1' } }],
  });
}

async function applied(access: {
  applyToHTTPSOptions(o: https.RequestOptions): Promise<void>;
}): Promise<https.RequestOptions> {
  const opts: https.RequestOptions = {};
  await access.applyToHTTPSOptions(opts);
  return opts;
}

describe('KubeAccess: the cluster and credentials without loading client-node when they are static (docs/benchmarks.md)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kube-access-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the current context's cluster and static user: inline data, files relative to the kubeconfig, tokens, basic auth", () => {
    writeFileSync(join(dir, 'ca.crt'), 'CA');
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>]> = [
      [
        'client certificate data',
        { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
        { 'certificate-authority-data': b64('CA') },
        { cert: Buffer.from('CERT'), key: Buffer.from('KEY'), ca: Buffer.from('CA') },
      ],
      [
        'relative CA file, token',
        { token: 't0k' },
        { 'certificate-authority': 'ca.crt' },
        { ca: Buffer.from('CA'), caFile: join(dir, 'ca.crt'), token: 't0k' },
      ],
      [
        'token file, insecure, TLS server name',
        { tokenFile: 'tok' },
        { 'insecure-skip-tls-verify': true, 'tls-server-name': 'api' },
        { tokenFile: join(dir, 'tok'), insecureSkipTlsVerify: true, tlsServerName: 'api' },
      ],
      ['basic auth', { username: 'u', password: 'p' }, {}, { username: 'u', password: 'p' }],
    ];
    for (const [what, user, cluster, want] of cases) {
      const got = staticCredentialsOf(
        kubeconfig(user, { server: 'https://127.0.0.1:6443', ...cluster }),
        join(dir, 'config'),
      );
      expect(got, what).to.deep.equal({
        clusterName: 'c1',
        server: 'https://127.0.0.1:6443',
        insecureSkipTlsVerify: false,
        ...want,
      });
    }
  });

  it('leaves exec plugins, auth providers and proxies to client-node (undefined)', () => {
    const path = join(dir, 'config');
    expect(
      staticCredentialsOf(
        kubeconfig({ exec: { command: 'aws', apiVersion: 'client.authentication.k8s.io/v1beta1' } }),
        path,
      ),
    ).to.equal(undefined);
    expect(staticCredentialsOf(kubeconfig({ 'auth-provider': { name: 'oidc' } }), path)).to.equal(undefined);
    expect(
      staticCredentialsOf(kubeconfig({ token: 't' }, { server: 'https://x', 'proxy-url': 'http://proxy' }), path),
    ).to.equal(undefined);
  });

  it('says what is missing when the current context or its cluster is not there', () => {
    const path = join(dir, 'config');
    expect(() => staticCredentialsOf(JSON.stringify({ 'current-context': 'nope', contexts: [] }), path)).to.throw(
      /current-context "nope" not found/,
    );
    expect(() =>
      staticCredentialsOf(
        JSON.stringify({ 'current-context': 'ctx', contexts: [{ name: 'ctx', context: { cluster: 'gone' } }] }),
        path,
      ),
    ).to.throw(/cluster "gone" .*not found/);
  });

  it('sets TLS material and a bearer token, re-reading a token file once a minute (rotated service-account tokens)', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, 'first\n');
    let now = 0;
    const access = staticAccess(
      { clusterName: 'c', server: 'https://s', ca: Buffer.from('CA'), tokenFile, insecureSkipTlsVerify: true },
      () => now,
    );
    expect(access.getCurrentCluster()).to.deep.equal({ name: 'c', server: 'https://s' });
    expect(await applied(access)).to.deep.equal({
      ca: Buffer.from('CA'),
      rejectUnauthorized: false,
      headers: { Authorization: 'Bearer first' },
    });
    writeFileSync(tokenFile, 'second\n');
    now = 59_999;
    expect((await applied(access)).headers).to.deep.equal({ Authorization: 'Bearer first' });
    now = 60_000;
    expect((await applied(access)).headers).to.deep.equal({ Authorization: 'Bearer second' });
    expect(
      (await applied(staticAccess({ clusterName: 'c', server: 'https://s', username: 'u', password: 'p' }))).auth,
    ).to.equal('u:p');
  });

  it('reads certificate and key files again when they change on disk (rotation)', async () => {
    const [caFile, certFile, keyFile] = ['ca.crt', 'tls.crt', 'tls.key'].map((f) => join(dir, f)) as [
      string,
      string,
      string,
    ];
    writeFileSync(caFile, 'CA1');
    writeFileSync(certFile, 'CERT1');
    writeFileSync(keyFile, 'KEY1');
    const creds = staticCredentialsOf(
      kubeconfig(
        { 'client-certificate': 'tls.crt', 'client-key': 'tls.key' },
        { server: 'https://s', 'certificate-authority': 'ca.crt' },
      ),
      join(dir, 'config'),
    )!;
    const access = staticAccess(creds);
    expect(await applied(access)).to.deep.include({
      ca: Buffer.from('CA1'),
      cert: Buffer.from('CERT1'),
      key: Buffer.from('KEY1'),
    });
    // A rotation replaces the files (a new inode, as cert-manager's and the kubelet's atomic writes do).
    for (const [f, text] of [
      [certFile, 'CERT2-longer'],
      [keyFile, 'KEY2-longer'],
      [caFile, 'CA2-longer'],
    ] as const) {
      rmSync(f);
      writeFileSync(f, text);
    }
    expect(await applied(access)).to.deep.include({
      ca: Buffer.from('CA2-longer'),
      cert: Buffer.from('CERT2-longer'),
      key: Buffer.from('KEY2-longer'),
    });
  });

  it("loads a static kubeconfig itself and any other one through client-node's KubeConfig", async () => {
    const plain = join(dir, 'plain');
    const exec = join(dir, 'exec');
    writeFileSync(plain, kubeconfig({ token: 't' }));
    writeFileSync(exec, kubeconfig({ exec: { command: 'true', apiVersion: 'client.authentication.k8s.io/v1beta1' } }));
    const fromPlain = await loadKubeAccess(plain, {});
    expect(fromPlain).to.not.be.instanceOf(KubeConfig);
    expect(fromPlain.getCurrentCluster()).to.deep.include({ name: 'c1', server: 'https://127.0.0.1:6443' });
    expect(await loadKubeAccess(exec, {})).to.be.instanceOf(KubeConfig);
    expect((await loadKubeAccess('', { KUBECONFIG: plain })).getCurrentCluster()?.name).to.equal('c1');
    expect(await loadKubeAccess('', { KUBECONFIG: `${plain}:${exec}` })).to.be.instanceOf(KubeConfig);
  });
});
