// `helm upgrade --install` of charts/mcs-cloudmap into a testbed cluster (a real kube-apiserver), with the chart's own
// self-signed TLS: CRDs, RBAC, settings, Secret and webhook configurations are installed; the webhook server, run on
// this machine with the certificate the chart generated, answers the apiserver through the chart's Service and caBundles
// (admission and CRD conversion); the second upgrade creates the ClusterProperties through it; upgrades keep the CA;
// uninstalling keeps the CRDs and the cluster id (W4, C1-C3, E3).
//
// The testbed runs no container images: a post-renderer points the Service at the host process (hack/local's way).
import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { serviceAccountKubeconfig } from '../../../hack/local/kubectl.ts';
import { hostAddress } from '../../../hack/testbed/host-address.ts';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';
import { freePorts } from '../../../hack/testbed/ports.ts';
import { eventually } from '../../support/eventually.ts';
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY, SERVICE_EXPORT_FINALIZER } from '../../../src/core/names.ts';
import { withOwnClusterSet } from '../../support/clusterset.ts';
import { NO_HOST_ADDRESS, requirePrerequisite } from '../../support/prerequisites.ts';
import { CHART, mustHelm, RELEASE_NAMESPACE as NS } from './helm.ts';

const REPO = new URL('../../../', import.meta.url).pathname;
const NODE = join(REPO, 'node_modules/.bin/node');
const POST_RENDERER = new URL('./host-webhook-post-renderer.ts', import.meta.url).pathname;
const DEMO = 'helm-demo';

describe('helm install of charts/mcs-cloudmap into a testbed cluster', function () {
  this.timeout(180_000);
  const address = hostAddress();
  // Before the ClusterSet's own hook, so a missing address costs no start-up.
  before(function () {
    requirePrerequisite(this, 'helm install', address ? undefined : NO_HOST_ADDRESS);
  });
  const clusterSet = withOwnClusterSet({ clusters: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'mcs-helm-'));
  let server: ChildProcess | undefined;
  let admin = '';
  let context = '';
  let webhookPort = 0;
  let caAfterInstall = '';

  function kubectl(args: string[], input?: unknown): { status: number | null; stdout: string; stderr: string } {
    const r = spawnSync(kubectlBinary(), ['--kubeconfig', admin, '--context', context, ...args], {
      input: input === undefined ? undefined : stringify(input),
      encoding: 'utf8',
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  function mustKubectl(args: string[], input?: unknown): string {
    const r = kubectl(args, input);
    if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  }
  const getJson = <T>(args: string[]) => JSON.parse(mustKubectl([...args, '-o', 'json'])) as T;
  const secretData = () =>
    getJson<{ data: Record<string, string> }>(['-n', NS, 'get', 'secret', 'mcs-cloudmap-webhook-tls']).data;
  const caBundles = () => [
    ...getJson<{ items: { webhooks: { clientConfig: { caBundle?: string } }[] }[] }>([
      'get',
      'validatingwebhookconfigurations,mutatingwebhookconfigurations',
      '-l',
      'app.kubernetes.io/part-of=mcs-cloudmap',
    ]).items.flatMap((c) => c.webhooks.map((w) => w.clientConfig.caBundle)),
    ...getJson<{ items: { spec: { conversion: { webhook: { clientConfig: { caBundle?: string } } } } }[] }>([
      'get',
      'crd',
      '-l',
      'app.kubernetes.io/part-of=mcs-cloudmap',
    ]).items.map((c) => c.spec.conversion.webhook.clientConfig.caBundle),
  ];

  /** The same command installs and upgrades, as docs/install.md says. */
  function upgradeInstall(): string {
    const cs = clusterSet();
    const values = join(dir, 'values.yaml');
    writeFileSync(
      values,
      stringify({
        clusterId: cs.clusters[0]!.id,
        clusterSetId: cs.clustersetId,
        tls: { mode: 'selfSigned' },
        webhook: { replicas: 0 },
        worker: { replicas: 0 },
      }),
    );
    return mustHelm([
      'upgrade',
      '--install',
      'mcs-cloudmap',
      CHART,
      '--namespace',
      NS,
      '--create-namespace',
      '--kubeconfig',
      admin,
      '--kube-context',
      context,
      '-f',
      values,
      '--wait',
      '--timeout',
      '2m',
      '--post-renderer',
      NODE,
      '--post-renderer-args',
      POST_RENDERER,
      '--post-renderer-args',
      address!,
      '--post-renderer-args',
      String(webhookPort),
    ]);
  }

  before(async () => {
    const cluster = clusterSet().clusters[0]!;
    admin = cluster.kubeconfigPath;
    context = cluster.context;
    [webhookPort] = (await freePorts(1)) as [number];
  });

  after(() => {
    server?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('installs CRDs, RBAC, settings, the self-signed TLS Secret and the webhook configurations, all with one CA', () => {
    const out = upgradeInstall();
    expect(out).to.contain('STATUS: deployed');
    expect(out, 'the notes say to run the upgrade again').to.contain('run the same `helm upgrade --install` again');
    mustKubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd',
      '-l',
      'app.kubernetes.io/part-of=mcs-cloudmap',
    ]);
    for (const [kind, name, ns] of [
      ['clusterrole', 'mcs-cloudmap-worker'],
      ['clusterrole', 'mcs-cloudmap-webhook'],
      ['clusterrole', 'mcs-cloudmap-status'],
      ['clusterrolebinding', 'mcs-cloudmap-worker'],
      ['clusterrolebinding', 'mcs-cloudmap-webhook'],
      ['serviceaccount', 'mcs-cloudmap-worker', NS],
      ['serviceaccount', 'mcs-cloudmap-webhook', NS],
      ['role', 'mcs-cloudmap-worker', NS],
      ['rolebinding', 'mcs-cloudmap-worker', NS],
      ['configmap', 'mcs-cloudmap-config', NS],
      ['deployment', 'mcs-cloudmap-webhook', NS],
      ['deployment', 'mcs-cloudmap-worker', NS],
      ['poddisruptionbudget', 'mcs-cloudmap-webhook', NS],
      ['validatingwebhookconfiguration', 'mcs-cloudmap-validating'],
      ['mutatingwebhookconfiguration', 'mcs-cloudmap-mutating'],
      ['validatingadmissionpolicy', 'mcs-cloudmap-worker-writes'],
      ['validatingadmissionpolicybinding', 'mcs-cloudmap-worker-writes'],
    ] as [string, string, string?][]) {
      mustKubectl([...(ns ? ['-n', ns] : []), 'get', kind, name]);
    }
    const ca = secretData()['ca.crt']!;
    expect(caBundles()).to.have.length(9);
    expect(new Set(caBundles())).to.deep.equal(new Set([ca]));
    caAfterInstall = ca;
    expect(
      getJson<{ items: unknown[] }>(['get', 'clusterproperties.about.k8s.io']).items,
      'no ClusterProperties before their CRD existed',
    ).to.deep.equal([]);
  });

  it("I7: the chart's policy refuses the worker's own token a delete of a Service it did not create", async () => {
    const worker = serviceAccountKubeconfig(admin, NS, 'mcs-cloudmap-worker', join(dir, 'worker.kubeconfig'));
    await eventually(
      'a dry-run delete of the default/kubernetes Service as the worker to be refused naming I7',
      async () => {
        const r = spawnSync(
          kubectlBinary(),
          ['--kubeconfig', worker, '-n', 'default', 'delete', 'service', 'kubernetes', '--dry-run=server'],
          { encoding: 'utf8' },
        );
        return r.status !== 0 && /I7/.test(r.stderr);
      },
      30_000,
    );
  });

  it("the webhook answers the apiserver through the chart's Service and CA: the next upgrade creates the ClusterProperties (C1, C2)", async () => {
    const tls = secretData();
    const files = Object.fromEntries(
      ['tls.crt', 'tls.key'].map((f) => {
        const path = join(dir, f);
        writeFileSync(path, Buffer.from(tls[f]!, 'base64'), { mode: 0o600 });
        return [f, path];
      }),
    );
    const settings = getJson<{ data: Record<string, string> }>([
      '-n',
      NS,
      'get',
      'configmap',
      'mcs-cloudmap-config',
    ]).data;
    const [metrics] = (await freePorts(1)) as [number];
    const log = join(dir, 'webhook.log');
    server = spawn(NODE, [join(REPO, 'src/webhook/main.ts')], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...settings,
        MCS_KUBECONFIG: serviceAccountKubeconfig(admin, NS, 'mcs-cloudmap-webhook', join(dir, 'webhook.kubeconfig')),
        MCS_BIND_ADDRESS: '0.0.0.0',
        MCS_PORT: String(webhookPort),
        MCS_METRICS_PORT: String(metrics),
        MCS_TLS_CERT_FILE: files['tls.crt'],
        MCS_TLS_KEY_FILE: files['tls.key'],
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = createWriteStream(log);
    server.stdout!.pipe(out);
    server.stderr!.pipe(out);
    await eventually(
      `the webhook server to be ready (log: ${log})`,
      async () => {
        if (server!.exitCode !== null)
          throw new Error(`the webhook server exited with code ${server!.exitCode}; log: ${log}`);
        return fetch(`http://127.0.0.1:${metrics}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      60_000,
    );

    upgradeInstall();
    const cs = clusterSet();
    const value = (name: string) =>
      getJson<{ spec: { value: string } }>(['get', 'clusterproperties.about.k8s.io', name]).spec.value;
    expect([value(CLUSTER_ID_PROPERTY), value(CLUSTERSET_ID_PROPERTY)]).to.deep.equal([
      cs.clusters[0]!.id,
      cs.clustersetId,
    ]);
    // The webhook, not only the schema, decided: a cluster id that is not a DNS label is refused with its message (C2).
    const bad = kubectl([
      'patch',
      'clusterproperties.about.k8s.io',
      CLUSTER_ID_PROPERTY,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { value: 'Not_A_Label' } }),
    ]);
    expect(bad.status).to.not.equal(0);
    expect(bad.stderr).to.contain('denied the request').and.to.contain('DNS label');
  });

  it('admission and conversion through the apiserver: an export gets its finalizer (E3) and reads back as v1alpha1', () => {
    mustKubectl(['create', 'namespace', DEMO]);
    mustKubectl(['apply', '--server-side', '--field-manager=test', '-f', '-'], {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: DEMO },
      spec: { ports: [{ name: 'http', port: 80 }] },
    });
    mustKubectl(['apply', '--server-side', '--field-manager=test', '-f', '-'], {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: 'web', namespace: DEMO },
    });
    const exported = getJson<{ apiVersion: string; metadata: { finalizers?: string[] } }>([
      '-n',
      DEMO,
      'get',
      'serviceexports.v1alpha1.multicluster.x-k8s.io',
      'web',
    ]);
    expect(exported.apiVersion).to.equal('multicluster.x-k8s.io/v1alpha1');
    expect(exported.metadata.finalizers).to.include(SERVICE_EXPORT_FINALIZER);
  });

  it('an upgrade keeps the self-signed CA (lookup), so running clients never see a caBundle change', () => {
    upgradeInstall();
    expect(secretData()['ca.crt']).to.equal(caAfterInstall);
    expect(new Set(caBundles())).to.deep.equal(new Set([caAfterInstall]));
  });

  it('uninstalling keeps the CRDs (and so every export) and the cluster id', () => {
    mustHelm([
      'uninstall',
      'mcs-cloudmap',
      '--namespace',
      NS,
      '--kubeconfig',
      admin,
      '--kube-context',
      context,
      '--wait',
    ]);
    expect(kubectl(['get', 'validatingwebhookconfiguration', 'mcs-cloudmap-validating']).status).to.not.equal(0);
    expect(
      getJson<{ items: unknown[] }>(['get', 'crd', '-l', 'app.kubernetes.io/part-of=mcs-cloudmap']).items,
    ).to.have.length(3);
    expect(getJson<{ items: unknown[] }>(['get', 'clusterproperties.about.k8s.io']).items).to.have.length(2);
  });
});
