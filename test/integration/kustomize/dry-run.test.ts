// Every manifest we ship is accepted by a real kube-apiserver (server-side apply, dry run): the output of each
// kustomization, of base with each component, and of the Helm chart with its default values and each ci/ values file.
// Every object passes the apiserver's validation of its kind (the built-in kinds' OpenAPI schemas), our CRD schemas
// and the published CRDs of cert-manager and the Prometheus Operator. Then the webhook server, started exactly as the
// Deployment configures it, answers on every path the webhook configurations and conversion stanzas call (W3, W4).
//
// The suite has a 1-cluster testbed of its own: it installs CRDs whose conversion calls an in-cluster Service, which
// would break the shared ClusterSet's suites that run the webhook on the host.
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePorts } from '../../../hack/testbed/ports.ts';
import { withOwnClusterSet } from '../../support/clusterset.ts';
import { makeDevCertificates } from '../../../hack/local/dev-certificates.ts';
import { CLUSTER_PROPERTY_API, helmTemplate, valuesFiles } from '../helm/helm.ts';
import { components, find, kustomizations, kustomizeBuild, kustomizeBuildWithBase, type Manifest } from './build.ts';
import {
  certManagerCrds,
  CERT_MANAGER_VERSION,
  prometheusOperatorCrds,
  PROMETHEUS_OPERATOR_VERSION,
  type PublishedCrds,
} from './published-crds.ts';
import { effectiveEnv, type Deployment } from './deployment-checks.ts';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';
import { requirePrerequisite } from '../../support/prerequisites.ts';

const REPO = new URL('../../../', import.meta.url).pathname;

/** A kubeadm-style CoreDNS, owned by another field manager, for the coredns-multicluster component to merge into. */
const KUBEADM_COREDNS = [
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: 'kube-system' } },
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'coredns', namespace: 'kube-system' },
    data: { Corefile: '.:53 {\n    kubernetes cluster.local\n}\n' },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'coredns', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } },
    spec: {
      replicas: 0,
      selector: { matchLabels: { 'k8s-app': 'kube-dns' } },
      template: {
        metadata: { labels: { 'k8s-app': 'kube-dns' } },
        spec: {
          serviceAccountName: 'coredns',
          containers: [
            {
              name: 'coredns',
              image: 'registry.k8s.io/coredns/coredns:v1.11.3',
              args: ['-conf', '/etc/coredns/Corefile'],
            },
          ],
        },
      },
    },
  },
];

function toYaml(objects: readonly unknown[]): string {
  return objects.map((o) => stringify(o)).join('---\n');
}

describe('kustomize and Helm output against a real kube-apiserver', function () {
  this.timeout(120_000);
  const clusterSet = withOwnClusterSet({ clusters: 1 });
  let kubectlBase: string[] = [];
  /** Why the published CRDs of a project could not be installed, by the API group of their kinds. */
  const missingCrds = new Map<string, string>();

  function kubectl(args: string[], input?: string): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(kubectlBinary(), [...kubectlBase, ...args], {
      input,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  function mustKubectl(args: string[], input?: string): string {
    const r = kubectl(args, input);
    if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  }

  before(function () {
    const cluster = clusterSet().clusters[0]!;
    kubectlBase = ['--kubeconfig', cluster.kubeconfigPath, '--context', cluster.context];
    // Installed for real: what a dry run of a namespaced object or a custom resource needs to exist already.
    const base = kustomizeBuild('base').objects;
    mustKubectl(
      ['apply', '--server-side', '--field-manager=test-setup', '-f', '-'],
      toYaml([
        find(base, 'Namespace', 'mcs-cloudmap-system'),
        ...base.filter((o) => o.kind === 'CustomResourceDefinition'),
      ]),
    );
    const published: [string, string, PublishedCrds][] = [
      ['cert-manager.io', `cert-manager ${CERT_MANAGER_VERSION} CRDs`, certManagerCrds()],
      ['monitoring.coreos.com', `Prometheus Operator ${PROMETHEUS_OPERATOR_VERSION} CRDs`, prometheusOperatorCrds()],
    ];
    for (const [group, what, crds] of published) {
      if ('missing' in crds) missingCrds.set(group, `${what}: ${crds.missing}`);
      else mustKubectl(['apply', '--server-side', '--field-manager=test-setup', '-f', '-'], toYaml(crds.crds));
    }
    mustKubectl(['create', '--field-manager=kubeadm', '-f', '-'], toYaml(KUBEADM_COREDNS));
    mustKubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  });

  /** Server-side apply --dry-run=server of `objects`; returns them as the apiserver would store them. */
  function dryRun(ctx: Mocha.Context, what: string, objects: readonly Manifest[]): Manifest[] {
    // Without a project's CRDs its objects cannot be checked: no dropping them under this title.
    for (const [group, missing] of missingCrds) {
      if (objects.some((o) => o.apiVersion.startsWith(`${group}/`)))
        requirePrerequisite(ctx, `${what} dry run`, missing);
    }
    // --force-conflicts: the CoreDNS ConfigMap's Corefile belongs to the cluster's installer (kubeadm here).
    const r = kubectl(
      [
        'apply',
        '--server-side',
        '--dry-run=server',
        '--force-conflicts',
        '--field-manager=mcs-cloudmap',
        '-o',
        'json',
        '-f',
        '-',
      ],
      toYaml(objects),
    );
    expect(r.stderr).to.equal('');
    expect(r.status).to.equal(0);
    const out = JSON.parse(r.stdout) as { items?: Manifest[] } & Manifest;
    const items = out.items ?? [out];
    expect(items.map((o) => `${o.kind}/${o.metadata.name}`)).to.deep.equal(
      objects.map((o) => `${o.kind}/${o.metadata.name}`),
    );
    return items;
  }

  for (const name of kustomizations()) {
    it(`${name}: every object passes server-side apply --dry-run=server`, function () {
      const objects = kustomizeBuild(name).objects;
      const items = dryRun(this, name, objects);
      if (name !== 'base') {
        // D3: the Corefile merged into the installer's ConfigMap; the CoreDNS Deployment, its stock image, is not touched.
        const corefile = (find(items, 'ConfigMap', 'coredns').data as { Corefile: string }).Corefile;
        expect(corefile).to.match(/^\s+multicluster clusterset\.local$/m);
        expect(
          items
            .filter((o) => o.kind === 'Deployment')
            .map((o) => o.metadata.name)
            .sort(),
        ).to.deep.equal(['mcs-cloudmap-webhook', 'mcs-cloudmap-worker']);
      }
    });
  }

  // Also the components no example overlay uses (webhook-network-policy, monitoring).
  for (const component of components()) {
    it(`base with ${component}: every object passes server-side apply --dry-run=server`, function () {
      dryRun(this, `base with ${component}`, kustomizeBuildWithBase([component]).objects);
    });
  }

  const helmValues: [string, string[]][] = [
    ['the default values', []],
    ...[...valuesFiles()].map(([n, f]): [string, string[]] => [`ci/${n}-values.yaml`, [f]]),
  ];
  for (const [name, files] of helmValues) {
    it(`Helm chart with ${name}: every rendered object passes server-side apply --dry-run=server`, function () {
      dryRun(this, `helm template with ${name}`, helmTemplate({ files, apiVersions: [CLUSTER_PROPERTY_API] }));
    });
  }

  it('the dry run rejects what the apiserver would reject (the check can fail)', () => {
    const broken = kustomizeBuild('base').objects.map((o) =>
      o.kind === 'Service'
        ? { ...o, spec: { ...(o.spec as object), ports: [{ port: 443, targetPort: 'not a port name!' }] } }
        : o,
    );
    const r = kubectl(
      ['apply', '--server-side', '--dry-run=server', '--field-manager=mcs-cloudmap', '-f', '-'],
      toYaml(broken),
    );
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.contain('targetPort');
  });

  it("the published CRDs' schemas are enforced: a PrometheusRule with a malformed for: duration is rejected (the check can fail)", function () {
    const rule = find(
      kustomizeBuildWithBase(['components/monitoring']).objects,
      'PrometheusRule',
      'mcs-cloudmap',
    ) as Manifest & { spec: { groups: { rules: { for?: string }[] }[] } };
    rule.spec.groups[0]!.rules[0]!.for = '15 minutes';
    requirePrerequisite(this, 'PrometheusRule dry run', missingCrds.get('monitoring.coreos.com'));
    const r = kubectl(
      ['apply', '--server-side', '--dry-run=server', '--field-manager=mcs-cloudmap', '-f', '-'],
      toYaml([rule]),
    );
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.contain('spec.groups[0].rules[0].for');
  });

  describe('the webhook server as the Deployment starts it', () => {
    let server: ChildProcess | undefined;
    let port = 0;
    let ca = '';
    const objects = () => kustomizeBuild('base').objects;

    before(async function () {
      this.timeout(60_000);
      const deploy = find(objects(), 'Deployment', 'mcs-cloudmap-webhook') as Deployment;
      const container = deploy.spec.template.spec.containers[0]!;
      const configMap = objects().find((o) => o.kind === 'ConfigMap')!.data as Record<string, string>;
      const certs = makeDevCertificates(mkdtempSync(join(tmpdir(), 'mcs-webhook-tls-')));
      ca = certs.caFile;
      const [httpsPort, metricsPort] = (await freePorts(2)) as [number, number];
      port = httpsPort;
      // The image runs dist/src/webhook/main.js; its source is src/webhook/main.ts. Ports and files are the host's, the rest is
      // the Deployment's environment.
      const entry = container
        .command!.at(-1)!
        .replace(/^dist\//, '')
        .replace(/\.js$/, '.ts');
      server = spawn(join(REPO, 'node_modules/.bin/node'), [join(REPO, entry), ...(container.args ?? [])], {
        env: {
          ...process.env,
          ...effectiveEnv(container, configMap),
          MCS_PORT: String(port),
          MCS_METRICS_PORT: String(metricsPort),
          MCS_BIND_ADDRESS: '127.0.0.1',
          MCS_TLS_CERT_FILE: certs.certFile,
          MCS_TLS_KEY_FILE: certs.keyFile,
          MCS_KUBECONFIG: clusterSet().clusters[0]!.kubeconfigPath,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const readyPath = container.readinessProbe!.httpGet.path;
      const deadline = Date.now() + 50_000;
      for (;;) {
        const ok = await fetch(`http://127.0.0.1:${metricsPort}${readyPath}`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        if (Date.now() > deadline || server.exitCode !== null)
          throw new Error(`the webhook server did not become ready on ${readyPath} (exit code ${server.exitCode})`);
        await new Promise((r) => setTimeout(r, 250));
      }
    });

    after(() => {
      server?.kill('SIGTERM');
    });

    function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
      return new Promise((resolve, reject) => {
        const data = JSON.stringify(body);
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path,
            method: 'POST',
            ca: [readFileSync(ca, 'utf8')],
            servername: 'localhost',
            headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
              }),
            );
          },
        );
        req.on('error', reject);
        req.end(data);
      });
    }

    const KINDS: Record<
      string,
      { group: string; version: string; kind: string; namespaced: boolean; labels?: Record<string, string> }
    > = {
      serviceexports: { group: 'multicluster.x-k8s.io', version: 'v1beta1', kind: 'ServiceExport', namespaced: true },
      serviceimports: { group: 'multicluster.x-k8s.io', version: 'v1beta1', kind: 'ServiceImport', namespaced: true },
      clusterproperties: { group: 'about.k8s.io', version: 'v1beta1', kind: 'ClusterProperty', namespaced: false },
      services: { group: '', version: 'v1', kind: 'Service', namespaced: true },
      endpointslices: {
        group: 'discovery.k8s.io',
        version: 'v1',
        kind: 'EndpointSlice',
        namespaced: true,
        labels: { 'multicluster.kubernetes.io/service-name': 'web' },
      },
    };

    it('answers an AdmissionReview on the path and port of every configured webhook', async () => {
      const hooks = objects()
        .filter((o) => o.kind.endsWith('WebhookConfiguration'))
        .flatMap(
          (c) =>
            c.webhooks as {
              name: string;
              clientConfig: { service: { path: string } };
              rules: { resources: string[]; operations: string[] }[];
            }[],
        );
      expect(hooks.length).to.be.greaterThan(0);
      for (const hook of hooks) {
        const resource = hook.rules[0]!.resources[0]!;
        const k = KINDS[resource];
        expect(k, `a sample object for ${resource}`).to.not.equal(undefined);
        const uid = `uid-${hook.name}`;
        const object = {
          apiVersion: k!.group ? `${k!.group}/${k!.version}` : k!.version,
          kind: k!.kind,
          metadata: { name: 'web', ...(k!.namespaced ? { namespace: 'demo' } : {}), labels: k!.labels ?? {} },
          spec: {},
        };
        const { status, body } = await post(hook.clientConfig.service.path, {
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: {
            uid,
            kind: { group: k!.group, version: k!.version, kind: k!.kind },
            resource: { group: k!.group, version: k!.version, resource },
            name: 'web',
            ...(k!.namespaced ? { namespace: 'demo' } : {}),
            operation: hook.rules[0]!.operations[0],
            userInfo: { username: 'someone' },
            object,
            oldObject: hook.rules[0]!.operations[0] === 'CREATE' ? null : object,
            dryRun: true,
          },
        });
        expect(status, hook.name).to.equal(200);
        expect((body.response as { uid: string }).uid, hook.name).to.equal(uid);
        expect((body.response as { allowed: unknown }).allowed, hook.name).to.be.a('boolean');
      }
    });

    it('converts on the path and port every CRD conversion stanza calls', async () => {
      const crds = objects().filter((o) => o.kind === 'CustomResourceDefinition');
      for (const crd of crds) {
        const spec = crd.spec as {
          group: string;
          names: { kind: string };
          scope: string;
          conversion: { webhook: { clientConfig: { service: { path: string } } } };
        };
        const { status, body } = await post(spec.conversion.webhook.clientConfig.service.path, {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          request: {
            uid: `uid-${crd.metadata.name}`,
            desiredAPIVersion: `${spec.group}/v1alpha1`,
            objects: [
              {
                apiVersion: `${spec.group}/v1beta1`,
                kind: spec.names.kind,
                metadata: { name: 'web', ...(spec.scope === 'Namespaced' ? { namespace: 'demo' } : {}) },
                spec: spec.names.kind === 'ClusterProperty' ? { value: 'x' } : {},
              },
            ],
          },
        });
        expect(status, crd.metadata.name).to.equal(200);
        const response = body.response as {
          uid: string;
          result: { status: string };
          convertedObjects: { apiVersion: string }[];
        };
        expect(response.result.status, crd.metadata.name).to.equal('Success');
        expect(response.convertedObjects.map((o) => o.apiVersion)).to.deep.equal([`${spec.group}/v1alpha1`]);
      }
    });
  });
});
