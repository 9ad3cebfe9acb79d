import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { SERVICE_EXPORT_FINALIZER } from '../../../src/core/names.ts';
import { makeDevCertificates } from '../../../hack/local/dev-certificates.ts';
import { request as admissionRequest, serviceExport, viewWith } from '../../support/webhook-fixtures.ts';
import { httpsClient, startLocalServer, type LocalServer } from './local-server.ts';

const review = (req: ReturnType<typeof admissionRequest>) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { ...req, userInfo: { username: req.username }, kind: req.kind },
});

/** SHA-256 fingerprint of the certificate a fresh TLS handshake with the server presents. */
function servedFingerprint(port: number, ca: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe('webhook HTTPS server (in-process, loopback)', function () {
  this.timeout(30_000);
  let local: LocalServer;
  before(async () => {
    local = await startLocalServer(viewWith(), { maxRequestBytes: 64 * 1024 });
  });
  after(async () => {
    await local.stop();
  });

  it('W1: /validate answers an AdmissionReview with the same apiVersion and uid', async () => {
    const r = await local.client.post(
      '/validate',
      review(admissionRequest('ServiceExport', 'CREATE', serviceExport('web'))),
    );
    expect(r.status).to.equal(200);
    expect(r.json()).to.deep.equal({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'uid-1',
        allowed: true,
        warnings: ['Service demo/web does not exist yet; it is exported as soon as it is created (E4).'],
      },
    });
  });

  it('E3: /mutate answers with the finalizer as a base64 JSON Patch', async () => {
    const r = await local.client.post('/mutate', {
      ...review(admissionRequest('ServiceExport', 'CREATE', serviceExport('web'))),
      apiVersion: 'admission.k8s.io/v1beta1',
    });
    const body = r.json() as { apiVersion: string; response: { patchType: string; patch: string } };
    expect(body.apiVersion).to.equal('admission.k8s.io/v1beta1');
    expect(body.response.patchType).to.equal('JSONPatch');
    expect(JSON.parse(Buffer.from(body.response.patch, 'base64').toString())).to.deep.equal([
      { op: 'add', path: '/metadata/finalizers', value: [SERVICE_EXPORT_FINALIZER] },
    ]);
  });

  it('W2: /convert answers a ConversionReview', async () => {
    const r = await local.client.post('/convert', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'c-1', desiredAPIVersion: 'multicluster.x-k8s.io/v1alpha1', objects: [serviceExport('web')] },
    });
    const body = r.json() as {
      response: { uid: string; result: unknown; convertedObjects: Array<{ apiVersion: string }> };
    };
    expect([
      r.status,
      body.response.uid,
      body.response.result,
      body.response.convertedObjects[0]!.apiVersion,
    ]).to.deep.equal([200, 'c-1', { status: 'Success' }, 'multicluster.x-k8s.io/v1alpha1']);
  });

  const bad: Array<[string, string, string | Buffer, Record<string, string>, number, RegExp]> = [
    [
      'a wrong content type',
      '/validate',
      '{}',
      { 'content-type': 'text/plain' },
      415,
      /Content-Type must be application\/json, got "text\/plain"/,
    ],
    ['no content type', '/convert', '{}', {}, 415, /Content-Type must be application\/json/],
    [
      'malformed JSON',
      '/mutate',
      '{"apiVersion":',
      { 'content-type': 'application/json' },
      400,
      /request body is not valid JSON/,
    ],
    [
      'a body over the limit',
      '/validate',
      `{"x":"${'a'.repeat(70_000)}"}`,
      { 'content-type': 'application/json' },
      413,
      /larger than the limit of 65536 bytes/,
    ],
    [
      'a missing uid',
      '/validate',
      JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { kind: {} } }),
      { 'content-type': 'application/json' },
      400,
      /request has no uid/,
    ],
    [
      'an unknown review version',
      '/convert',
      JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v9', kind: 'ConversionReview' }),
      { 'content-type': 'application/json' },
      400,
      /unsupported ConversionReview apiVersion/,
    ],
    [
      'an unsupported charset',
      '/validate',
      '{}',
      { 'content-type': 'application/json; charset=latin9' },
      415,
      /unsupported request body encoding/,
    ],
  ];
  for (const [what, path, body, headers, code, message] of bad) {
    it(`answers ${what} with ${code} and a metav1.Status that says why`, async () => {
      const r = await local.client.send('POST', path, body, headers);
      expect(r.status).to.equal(code);
      expect(r.json()).to.deep.include({ kind: 'Status', status: 'Failure', code });
      expect((r.json() as { message: string }).message).to.match(message);
    });
  }

  it('answers other methods with 405 and unknown paths with 404', async () => {
    expect((await local.client.send('GET', '/validate')).status).to.equal(405);
    expect((await local.client.send('POST', '/nope', '{}', { 'content-type': 'application/json' })).status).to.equal(
      404,
    );
  });

  it('/healthz is always ok; /readyz only once the caches are synced', async () => {
    expect((await local.client.send('GET', '/healthz')).status).to.equal(200);
    local.setUnsynced(['serviceExports']);
    const unready = await local.client.send('GET', '/readyz');
    expect([unready.status, unready.body]).to.deep.equal([
      503,
      'not ready: informer caches not synced yet, or shutting down\n',
    ]);
    local.setUnsynced([]);
    expect((await local.client.send('GET', '/readyz')).status).to.equal(200);
  });

  it('/readyz turns ready after --cache-sync-grace even if a cache never loads; checks needing it say so', async () => {
    const slow = await startLocalServer(viewWith(), { cacheSyncGraceMs: 400 });
    try {
      slow.setUnsynced(['serviceImports']);
      expect((await slow.client.send('GET', '/readyz')).status).to.equal(503);
      await new Promise((r) => setTimeout(r, 450));
      expect((await slow.client.send('GET', '/readyz')).status).to.equal(200);
      const r = await slow.client.post(
        '/validate',
        review(admissionRequest('ServiceExport', 'CREATE', serviceExport('web'))),
      );
      expect((r.json() as { response: { status: unknown } }).response.status).to.deep.equal({
        code: 503,
        reason: 'ServiceUnavailable',
        message:
          'ServiceExport demo/web cannot be checked yet: the mcs-cloudmap webhook is still loading its caches (serviceImports); retry in a few seconds.',
      });
    } finally {
      await slow.stop();
    }
  });

  it('/metrics counts requests by webhook, kind, operation and result, with a latency histogram', async () => {
    const m = (await local.client.send('GET', '/metrics')).body;
    expect(m).to.match(
      /mcs_cloudmap_webhook_requests_total\{webhook="validate",kind="ServiceExport",operation="CREATE",result="warned"\} [1-9]/,
    );
    expect(m).to.match(
      /mcs_cloudmap_webhook_requests_total\{webhook="mutate",kind="ServiceExport",operation="CREATE",result="allowed"\} [1-9]/,
    );
    expect(m).to.match(
      /mcs_cloudmap_webhook_requests_total\{webhook="convert",kind="ServiceExport",operation="CONVERT",result="converted"\} [1-9]/,
    );
    expect(m).to.match(
      /mcs_cloudmap_webhook_requests_total\{webhook="validate",kind="unknown",operation="unknown",result="invalid"\} [1-9]/,
    );
    expect(m).to.match(/mcs_cloudmap_webhook_request_duration_seconds_bucket\{le="0.005",webhook="validate"\} [1-9]/);
    expect(m).to.match(/mcs_cloudmap_webhook_certificate_expiry_timestamp_seconds \d{10}/);
    // The names before one scheme stay until 0.3.0 (CHANGELOG.md).
    expect(m).to.match(
      /mcs_webhook_requests_total\{webhook="validate",kind="ServiceExport",operation="CREATE",result="warned"\} [1-9]/,
    );
  });

  it('serves /metrics, /healthz and /readyz on the plain metrics port when one is set', async () => {
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const withMetrics = await startLocalServer(viewWith(), { metricsPort: port });
    try {
      expect(withMetrics.server.metricsPort).to.equal(port);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).to.equal(200);
      expect(await res.text()).to.contain('mcs_cloudmap_webhook_requests_total');
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).to.equal(200);
    } finally {
      await withMetrics.stop();
    }
  });

  it('W4: rotates the certificate without a restart or a failed request', async () => {
    const rotated = mkdtempSync(join(tmpdir(), 'mcs-webhook-rotated-'));
    try {
      const next = makeDevCertificates(rotated);
      const cas = [readFileSync(local.certs.caFile, 'utf8'), readFileSync(next.caFile, 'utf8')];
      const before = await servedFingerprint(local.server.port, cas);
      expect(before).to.equal(new X509Certificate(readFileSync(local.certs.certFile)).fingerprint256);
      const oldConnection = httpsClient(local.server.port, cas.join('\n'));
      expect((await oldConnection.send('GET', '/healthz')).status).to.equal(200);

      // Requests on fresh connections keep flowing while the files are swapped (key first, as a Secret update may).
      let stop = false;
      const failures: string[] = [];
      let sent = 0;
      const traffic = (async () => {
        while (!stop) {
          const fresh = httpsClient(local.server.port, cas.join('\n'));
          try {
            const r = await fresh.post(
              '/validate',
              review(admissionRequest('ServiceExport', 'CREATE', serviceExport('web'))),
            );
            if (r.status !== 200) failures.push(`status ${r.status}`);
          } catch (err) {
            failures.push((err as Error).message);
          } finally {
            fresh.agent.destroy();
            sent++;
          }
        }
      })();
      copyFileSync(next.keyFile, `${local.certs.keyFile}.tmp`);
      renameSync(`${local.certs.keyFile}.tmp`, local.certs.keyFile);
      await new Promise((r) => setTimeout(r, 300));
      copyFileSync(next.certFile, `${local.certs.certFile}.tmp`);
      renameSync(`${local.certs.certFile}.tmp`, local.certs.certFile);
      const expected = new X509Certificate(readFileSync(next.certFile)).fingerprint256;
      const deadline = Date.now() + 5_000;
      while ((await servedFingerprint(local.server.port, cas)) !== expected) {
        if (Date.now() > deadline) throw new Error('the new certificate was not served within 5 s');
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 200));
      stop = true;
      await traffic;
      expect(failures).to.deep.equal([]);
      expect(sent).to.be.greaterThan(5);
      expect((await oldConnection.send('GET', '/healthz')).status, 'an open connection survives the rotation').to.equal(
        200,
      );
      oldConnection.agent.destroy();
    } finally {
      rmSync(rotated, { recursive: true, force: true });
    }
  });

  it('graceful shutdown: unready first, in-flight requests finish, then the port closes', async () => {
    const s = await startLocalServer(viewWith(), { shutdownDelayMs: 400 });
    const body = JSON.stringify(review(admissionRequest('ServiceExport', 'CREATE', serviceExport('web'))));
    const ca = readFileSync(s.certs.caFile, 'utf8');
    // A request whose body is still arriving when the shutdown starts.
    const inFlight = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: s.server.port,
          method: 'POST',
          path: '/validate',
          ca,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 20));
      setTimeout(() => req.end(body.slice(20)), 600);
    });
    await new Promise((r) => setTimeout(r, 100));
    const stopped = s.server.shutdown();
    expect((await s.client.send('GET', '/readyz')).status, 'unready during the delay').to.equal(503);
    const done = await inFlight;
    expect(done.status).to.equal(200);
    expect((JSON.parse(done.text) as { response: { uid: string } }).response.uid).to.equal('uid-1');
    await stopped;
    const fresh = httpsClient(s.server.port, ca);
    let refused = '';
    try {
      await fresh.send('GET', '/healthz');
    } catch (err) {
      refused = (err as NodeJS.ErrnoException).code ?? '';
    }
    expect(refused).to.equal('ECONNREFUSED');
    fresh.agent.destroy();
    s.client.agent.destroy();
    rmSync(s.dir, { recursive: true, force: true });
  });
});
