// A client certificate rotated on disk under a running client (cert-manager, a CSI driver or a rewritten kubeconfig)
// is used from the next request on, against a real apiserver: the old one keeps no connection authenticated as it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { KubeClient } from '../../../src/kube/client.ts';
import { loadKubeAccess } from '../../../src/kube/kube-access.ts';
import { withClusterSet } from '../../support/clusterset.ts';

/** A client certificate for `user` signed by the cluster's CA, written to `cert` and `key` (atomically, by rename). */
function issue(caCert: string, user: string, cert: string, key: string): void {
  const caKey = join(dirname(caCert), 'ca.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-CA',
      caCert,
      '-CAkey',
      caKey,
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      `${key}.new`,
      '-out',
      `${cert}.new`,
      '-days',
      '1',
      '-subj',
      `/CN=${user}`,
      '-addext',
      'extendedKeyUsage=clientAuth',
    ],
    { stdio: 'pipe' },
  );
  renameSync(`${key}.new`, key);
  renameSync(`${cert}.new`, cert);
}

describe('kube client: a client certificate rotated on disk is used from the next request on (W4)', function () {
  this.timeout(60_000);
  const testbed = withClusterSet();
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'cert-rotation-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("authenticates as the new certificate's user after the files are replaced, over the same client", async () => {
    const cluster = testbed().clusters[0]!;
    const [cert, key, kubeconfig] = ['tls.crt', 'tls.key', 'kubeconfig'].map((f) => join(dir, f)) as [
      string,
      string,
      string,
    ];
    issue(cluster.caCertPath, 'rotation-first', cert, key);
    writeFileSync(
      kubeconfig,
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'c',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: cluster.server,
              'certificate-authority-data': readFileSync(cluster.caCertPath).toString('base64'),
            },
          },
        ],
        users: [{ name: 'u', user: { 'client-certificate': cert, 'client-key': key } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
      }),
    );
    const client = new KubeClient(await loadKubeAccess(kubeconfig));
    try {
      const whoami = async () =>
        (
          await client.request<{ status: { userInfo: { username: string } } }>({
            method: 'POST',
            path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
            body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
          })
        ).status.userInfo.username;
      expect(await whoami()).to.equal('rotation-first');
      issue(cluster.caCertPath, 'rotation-second', cert, key);
      expect(await whoami()).to.equal('rotation-second');
    } finally {
      client.close();
    }
  });
});
