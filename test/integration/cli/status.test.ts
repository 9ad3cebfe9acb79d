// `mcs-cloudmap status` against the testbed: two real kube-apiservers and the Cloud Map emulator, holding what the
// worker leaves behind after the tutorial (an export in cls1, imports in both clusters, instances in Cloud Map), written
// here directly so the command is tested on its own. Also the errors a user meets: an unreachable cluster, rejected
// credentials, no AWS credentials.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateHttpNamespaceCommand,
  CreateServiceCommand,
  RegisterInstanceCommand,
  ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { stringify } from 'yaml';
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY, CONTROLLER_NAME } from '../../../src/core/names.ts';
import type { StatusReport } from '../../../src/cli/status-model.ts';
import { cloudMapClientConfig, operationDone } from '../../support/cloudmap.ts';
import { DEFAULT_ACCOUNT } from '../../../hack/testbed/cloudmap-emulator.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { createNamespace, deleteNamespace } from '../../support/kube.ts';
import { installCrds } from '../kube/support.ts';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';

const REPO = new URL('../../../', import.meta.url).pathname;
const NODE = join(REPO, 'node_modules', '.bin', 'node');
const NS = 'cli-status';
const NOW = '2026-01-01T00:00:00Z';

function cond(type: string, status: string, reason: string) {
  return { type, status, reason, message: `${type} ${reason}`, lastTransitionTime: NOW };
}

describe('mcs-cloudmap status on the testbed', function () {
  this.timeout(120_000);
  const testbed = withClusterSet();
  let kubeconfig = '';
  const createdProperties: [string, string][] = [];

  function kubectl(context: string, args: string[], input?: unknown): string {
    const r = spawnSync(kubectlBinary(), ['--kubeconfig', kubeconfig, '--context', context, ...args], {
      input: input === undefined ? undefined : stringify(input),
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`kubectl --context ${context} ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  }
  const apply = (context: string, object: unknown) =>
    kubectl(context, ['apply', '--server-side', '--field-manager=cli-status-test', '-f', '-'], object);
  const applyStatus = (context: string, object: unknown) =>
    kubectl(
      context,
      ['apply', '--server-side', '--field-manager=cli-status-test', '--subresource=status', '-f', '-'],
      object,
    );

  function status(
    args: string[],
    env: NodeJS.ProcessEnv = {},
  ): { status: number | null; stdout: string; stderr: string } {
    const cs = testbed();
    const r = spawnSync(NODE, [join(REPO, 'src/cli/main.ts'), 'status', ...args], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        AWS_EC2_METADATA_DISABLED: 'true',
        AWS_ACCESS_KEY_ID: 'testbed',
        AWS_SECRET_ACCESS_KEY: 'testbed',
        MCS_CLOUDMAP_ENDPOINT: cs.cloudMapEndpoint,
        MCS_AWS_REGION: cs.region,
        ...env,
      },
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  before(async function () {
    const cs = testbed();
    const [cls1, cls2] = cs.clusters as [(typeof cs.clusters)[0], (typeof cs.clusters)[0]];
    // One kubeconfig with both contexts, as a user with two clusters has.
    kubeconfig = join(mkdtempSync(join(tmpdir(), 'cli-status-')), 'kubeconfig');
    const merged = spawnSync(kubectlBinary(), ['config', 'view', '--flatten'], {
      env: { ...process.env, KUBECONFIG: `${cls1.kubeconfigPath}:${cls2.kubeconfigPath}` },
      encoding: 'utf8',
    });
    writeFileSync(kubeconfig, merged.stdout);

    for (const c of cs.clusters) {
      // The CRDs as installed (conversion aimed at the in-cluster Service); objects are written in the storage version.
      await installCrds(c.kubeconfigPath);
      for (const [name, value] of [
        [CLUSTER_ID_PROPERTY, c.id],
        [CLUSTERSET_ID_PROPERTY, cs.clustersetId],
      ] as const) {
        const existing = spawnSync(
          kubectlBinary(),
          [
            '--kubeconfig',
            kubeconfig,
            '--context',
            c.context,
            'get',
            `clusterproperties.about.k8s.io/${name}`,
            '-o',
            'jsonpath={.spec.value}',
          ],
          { encoding: 'utf8' },
        );
        if (existing.status === 0) {
          expect(existing.stdout, `existing ${name} in ${c.id}`).to.equal(value);
          continue;
        }
        apply(c.context, {
          apiVersion: 'about.k8s.io/v1beta1',
          kind: 'ClusterProperty',
          metadata: { name },
          spec: { value },
        });
        createdProperties.push([c.context, name]);
      }
      await createNamespace(c.kubeConfig(), NS);
    }

    // cls1 exports `web`: a Service without selector and its own EndpointSlice (one endpoint not ready).
    apply(cls1.context, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: NS },
      spec: { ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    });
    apply(cls1.context, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-local', namespace: NS, labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [
        { addresses: ['10.1.0.5'], conditions: { ready: true } },
        { addresses: ['10.1.0.6'], conditions: { ready: false } },
      ],
    });
    apply(cls1.context, {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: 'web', namespace: NS },
    });
    applyStatus(cls1.context, {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: 'web', namespace: NS },
      status: {
        conditions: [
          cond('Valid', 'True', 'Valid'),
          cond('Ready', 'True', 'Exported'),
          cond('Conflict', 'True', 'PortConflict'),
        ],
      },
    });
    // cls2 imports it, with an MCS EndpointSlice from source cluster cls1.
    apply(cls2.context, {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceImport',
      metadata: { name: 'web', namespace: NS },
      spec: { type: 'ClusterSetIP', ips: ['10.97.0.20'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }] },
    });
    applyStatus(cls2.context, {
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceImport',
      metadata: { name: 'web', namespace: NS },
      status: { clusters: [{ cluster: cls1.id }], conditions: [cond('Ready', 'True', 'Ready')] },
    });
    apply(cls2.context, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'imported-web-cls1',
        namespace: NS,
        labels: {
          'multicluster.kubernetes.io/service-name': 'web',
          'multicluster.kubernetes.io/source-cluster': cls1.id,
          'endpointslice.kubernetes.io/managed-by': CONTROLLER_NAME,
          'kubernetes.io/service-name': 'imported-web',
        },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: [
        { addresses: ['10.1.0.5'], conditions: { ready: true } },
        { addresses: ['10.1.0.6'], conditions: { ready: false } },
      ],
    });

    // Cloud Map: cls1's two instances, plus one of another ClusterSet that must not be counted (M5).
    const cm = new ServiceDiscoveryClient(cloudMapClientConfig(cs));
    const nsId = (await operationDone(cm, (await cm.send(new CreateHttpNamespaceCommand({ Name: NS }))).OperationId))
      .NAMESPACE!;
    const serviceId = (await cm.send(new CreateServiceCommand({ Name: 'web', NamespaceId: nsId }))).Service!.Id!;
    const instance = async (id: string, ip: string, ready: string, clusterset = cs.clustersetId) =>
      operationDone(
        cm,
        (
          await cm.send(
            new RegisterInstanceCommand({
              ServiceId: serviceId,
              InstanceId: id,
              Attributes: {
                AWS_INSTANCE_IPV4: ip,
                AWS_INSTANCE_PORT: '8080',
                CLUSTER_ID: cls1.id,
                CLUSTERSET_ID: clusterset,
                READY: ready,
              },
            }),
          )
        ).OperationId,
      );
    await instance('a', '10.1.0.5', 'true');
    await instance('b', '10.1.0.6', 'false');
    await instance('c', '10.9.0.1', 'true', 'another-clusterset');
    cm.destroy();
  });

  after(async function () {
    this.timeout(120_000);
    for (const c of testbed().clusters) await deleteNamespace(c.kubeConfig(), NS);
    for (const [context, name] of createdProperties)
      kubectl(context, ['delete', `clusterproperties.about.k8s.io/${name}`]);
  });

  it("--output json: each cluster's export and import with endpoint counts, conditions and Cloud Map instances per cluster", () => {
    const r = status(['--kubeconfig', kubeconfig, '--context', 'cls1,cls2', '--output', 'json']);
    expect(r.stderr).to.equal('');
    expect(r.status).to.equal(0);
    const report = JSON.parse(r.stdout) as StatusReport;
    const [c1, c2] = report.clusters;
    expect([c1!.clusterId, c1!.clustersetId, c2!.clusterId]).to.deep.equal(['cls1', testbed().clustersetId, 'cls2']);
    expect(c1!.exports.find((e) => e.namespace === NS)).to.deep.include({
      name: 'web',
      type: 'ClusterSetIP',
      ports: ['http:80/TCP'],
      endpoints: { ready: 1, total: 2 },
    });
    expect(c2!.imports.find((i) => i.namespace === NS)).to.deep.include({
      name: 'web',
      type: 'ClusterSetIP',
      ips: ['10.97.0.20'],
      clusters: ['cls1'],
      endpointsByCluster: { cls1: { ready: 1, total: 2 } },
    });
    expect(report.cloudMap!.services.find((s) => s.namespace === NS)).to.deep.equal({
      namespace: NS,
      name: 'web',
      found: true,
      instancesByCluster: { cls1: { ready: 1, total: 2 } },
      // The Region read, and the account that registered the instances (CreatedByAccount): the testbed's default.
      placesByCluster: { cls1: { regions: [testbed().region], accounts: [DEFAULT_ACCOUNT] } },
    });
    // X2: the conflict is reported with the worker's message.
    expect(report.problems).to.deep.include({
      where: 'cls1',
      service: `${NS}/web`,
      message: 'Conflict=True (PortConflict): Conflict PortConflict',
    });
  });

  it('table output: one line per cluster side and one for Cloud Map, conflicts marked', () => {
    const r = status(['--kubeconfig', kubeconfig, '--context', 'cls1,cls2']);
    expect(r.status).to.equal(0);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith(`${NS} `));
    expect(lines.map((l) => l.split(/\s+/).slice(2, 4).join(' '))).to.deep.equal([
      'cls1 export',
      'cls2 import',
      'cloudmap instances',
    ]);
    expect(lines[0]).to.match(
      /ClusterSetIP\s+-\s+http:80\/TCP\s+cls1\s+1\/2\s+!Conflict:PortConflict Ready:Exported Valid$/,
    );
    expect(lines[2]).to.match(/cls1\s+cls1=1\/2\s+-$/);
  });

  it("--kubeconfig takes one file per cluster, merged as kubectl merges $KUBECONFIG; each file's current context is shown", () => {
    const files = testbed()
      .clusters.map((c) => c.kubeconfigPath)
      .join(':');
    const r = status(['--kubeconfig', files, '--cloudmap=false', '--output', 'json']);
    expect(r.status).to.equal(0);
    const report = JSON.parse(r.stdout) as StatusReport;
    expect(report.clusters.map((c) => [c.context, c.clusterId])).to.deep.equal([
      ['cls1', 'cls1'],
      ['cls2', 'cls2'],
    ]);
    expect(report.cloudMap).to.equal(undefined);
  });

  it('an unreachable cluster is reported with what to do; the other cluster is still shown; exit status 1', () => {
    const cs = testbed();
    const broken = join(mkdtempSync(join(tmpdir(), 'cli-status-down-')), 'kubeconfig');
    writeFileSync(
      broken,
      spawnSync(kubectlBinary(), ['config', 'view', '--flatten'], {
        env: { ...process.env, KUBECONFIG: kubeconfig },
        encoding: 'utf8',
      }).stdout,
    );
    spawnSync(kubectlBinary(), [
      '--kubeconfig',
      broken,
      'config',
      'set-cluster',
      'down',
      '--server=https://127.0.0.1:1',
      '--insecure-skip-tls-verify=true',
    ]);
    spawnSync(kubectlBinary(), [
      '--kubeconfig',
      broken,
      'config',
      'set-credentials',
      'nobody',
      '--token=not-a-valid-token',
    ]);
    spawnSync(kubectlBinary(), [
      '--kubeconfig',
      broken,
      'config',
      'set-context',
      'down',
      '--cluster=down',
      '--user=nobody',
    ]);
    spawnSync(kubectlBinary(), [
      '--kubeconfig',
      broken,
      'config',
      'set-context',
      'stranger',
      `--cluster=${cs.clusters[0]!.context}`,
      '--user=nobody',
    ]);
    const r = status(['--kubeconfig', broken, '--context', 'cls1,down,stranger', '--cloudmap=false']);
    expect(r.status).to.equal(1);
    expect(r.stdout).to.contain(
      'context "down": cannot reach the API server https://127.0.0.1:1 (ECONNREFUSED); check that the cluster is running',
    );
    expect(r.stdout).to.contain('context "stranger": the API server');
    expect(r.stdout).to.contain('rejected the credentials (401 Unauthorized)');
    expect(r.stdout).to.match(new RegExp(`${NS}\\s+web\\s+cls1\\s+export`));
  });

  it('a context that is not in the kubeconfig is refused before anything is read (exit status 2)', () => {
    const r = status(['--kubeconfig', kubeconfig, '--context', 'cls1,cls9']);
    expect(r.status).to.equal(2);
    expect(r.stderr).to.contain('context "cls9" not found').and.contain('known contexts: cls1, cls2');
  });

  it('no AWS credentials: the clusters are shown and Cloud Map says how to provide them', () => {
    const home = mkdtempSync(join(tmpdir(), 'cli-status-home-'));
    const r = status(['--kubeconfig', kubeconfig, '--context', 'cls1,cls2'], {
      AWS_ACCESS_KEY_ID: undefined,
      AWS_SECRET_ACCESS_KEY: undefined,
      HOME: home,
      AWS_CONFIG_FILE: join(home, 'none'),
      AWS_SHARED_CREDENTIALS_FILE: join(home, 'none'),
    });
    expect(r.status).to.equal(1);
    expect(r.stdout).to.contain('cloudmap: no AWS credentials for Cloud Map (ListNamespaces); set AWS_PROFILE');
    expect(r.stdout).to.match(new RegExp(`${NS}\\s+web\\s+cls2\\s+import`));
  });
});
