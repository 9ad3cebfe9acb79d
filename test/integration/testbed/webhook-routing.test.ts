// The testbed's apiservers run the webhook admission plugins, and reach a webhook server running on
// this machine through a Service reference (as the shipped manifests do): --enable-aggregator-routing makes the apiserver
// dial the Service's Endpoints instead of its ClusterIP, and the Endpoints list this machine's address.
import { AdmissionregistrationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostAddress } from '../../../hack/testbed/index.ts';
import { makeDevCertificates } from '../../../hack/local/dev-certificates.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { createNamespace, deleteNamespace } from '../../support/kube.ts';
import { NO_HOST_ADDRESS, requirePrerequisite } from '../../support/prerequisites.ts';

const NS = 'testbed-webhook';
const SERVICE = 'webhook-probe';
const WEBHOOK = 'probe.testbed.mcs-cloudmap.io';

interface Review {
  request?: { uid: string; kind?: { kind: string }; name?: string; namespace?: string };
}

describe('testbed webhook routing (admission webhooks reached by Service reference)', function () {
  this.timeout(60_000);
  const address = hostAddress();
  // Before the shared ClusterSet's hook, so a missing address costs no start-up.
  before(function () {
    requirePrerequisite(this, 'testbed webhook routing', address ? undefined : NO_HOST_ADDRESS);
  });
  const testbed = withClusterSet();
  const seen: Review[] = [];
  let server: Server;
  let kc: KubeConfig;
  let certDir: string;

  before(async () => {
    kc = testbed().clusters[0]!.kubeConfig();
    certDir = mkdtempSync(join(tmpdir(), 'mcs-cloudmap-webhook-probe-'));
    const certs = makeDevCertificates(certDir, [`${SERVICE}.${NS}.svc`]);
    server = createServer({ cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const review = JSON.parse(body) as Review;
        seen.push(review);
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: { uid: review.request?.uid, allowed: true },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const port = (server.address() as AddressInfo).port;

    await createNamespace(kc, NS);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedService({
      namespace: NS,
      body: { metadata: { name: SERVICE }, spec: { ports: [{ name: 'https', port: 443, targetPort: port }] } },
    });
    // kube-apiserver 1.33's endpoint resolver reads v1 Endpoints (not EndpointSlices).
    await core.createNamespacedEndpoints({
      namespace: NS,
      body: {
        metadata: { name: SERVICE },
        subsets: [{ addresses: [{ ip: address! }], ports: [{ name: 'https', port, protocol: 'TCP' }] }],
      },
    });
    await kc.makeApiClient(AdmissionregistrationV1Api).createValidatingWebhookConfiguration({
      body: {
        metadata: { name: WEBHOOK },
        webhooks: [
          {
            name: WEBHOOK,
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Fail',
            timeoutSeconds: 5,
            clientConfig: {
              service: { namespace: NS, name: SERVICE, path: '/validate', port: 443 },
              caBundle: certs.caBundle,
            },
            rules: [
              {
                apiGroups: [''],
                apiVersions: ['v1'],
                operations: ['CREATE'],
                resources: ['configmaps'],
                scope: 'Namespaced',
              },
            ],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
          },
        ],
      },
    });
  });

  after(async () => {
    if (kc) {
      await kc
        .makeApiClient(AdmissionregistrationV1Api)
        .deleteValidatingWebhookConfiguration({ name: WEBHOOK })
        .catch(() => {});
      await deleteNamespace(kc, NS);
    }
    server?.close();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  it("calls the webhook through the Service's Endpoints when a ConfigMap is created", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    // The webhook configuration reaches the apiserver's informers a moment after it is created: retry until it is used.
    for (let i = 0; i < 50 && !seen.some((r) => r.request?.name?.startsWith('probe-')); i++) {
      await core.createNamespacedConfigMap({
        namespace: NS,
        body: { metadata: { name: `probe-${i}` }, data: { a: 'b' } },
      });
      if (!seen.length) await new Promise((r) => setTimeout(r, 200));
    }
    const review = seen.find((r) => r.request?.name?.startsWith('probe-'));
    expect(review?.request, 'an AdmissionReview reached the server').to.include({ namespace: NS });
    expect(review?.request?.kind?.kind).to.equal('ConfigMap');
  });
});
