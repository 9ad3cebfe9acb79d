// The webhooks registered in a real kube-apiserver of the testbed (caBundle from a throwaway CA), driven by kubectl as a
// user would: every admission rule through the real admission chain, and conversion served for v1alpha1 reads with
// objects stored as v1beta1 in etcd.

import { expect } from 'chai';
import type { ExportFacts } from '../../../src/core/conflicts.ts';
import { exportRecordAnnotations } from '../../../src/core/export-record.ts';
import {
  CLUSTER_ID_PROPERTY,
  CLUSTERSET_ID_PROPERTY,
  LABEL_SERVICE_NAME,
  SERVICE_EXPORT_FINALIZER,
  WORKER_SERVICE_ACCOUNT,
} from '../../../src/core/names.ts';
import type { TestCluster } from '../../../hack/testbed/index.ts';
import { WORKER_POLICY_NAME } from '../../../kustomize/worker-policy.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { createNamespace, deleteNamespace } from '../../support/kube.ts';
import { kubectl, kubectlOk, startRegisteredWebhook, storedObject, type RegisteredWebhook } from './harness.ts';

const NS = 'webhook-it';
/** Acts as the reconcile worker: its user name, with rights to write anything (RBAC is not what is tested here). */
const AS_WORKER = ['--as', WORKER_SERVICE_ACCOUNT, '--as-group', 'system:masters'];

const yaml = (o: unknown) => JSON.stringify(o);
const serviceExport = (name: string, apiVersion = 'multicluster.x-k8s.io/v1alpha1') =>
  yaml({ apiVersion, kind: 'ServiceExport', metadata: { name, namespace: NS } });
const service = (name: string, spec: Record<string, unknown>) =>
  yaml({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: { ports: [{ name: 'http', port: 80 }], ...spec },
  });
const serviceImport = (name: string, type: string, annotations: Record<string, string> = {}) =>
  yaml({
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceImport',
    metadata: { name, namespace: NS, annotations },
    spec: { type, ports: [{ name: 'http', protocol: 'TCP', port: 80 }], sessionAffinity: 'None' },
  });
/** One cluster's export as the worker records it on the ServiceImport (X1–X3): ClusterSetIP http TCP/80 unless told. */
const exported = (
  clusterId: string,
  exportCreationTimestamp: number,
  over: Partial<ExportFacts> = {},
): ExportFacts => ({
  clusterId,
  exportCreationTimestamp,
  type: 'ClusterSetIP',
  ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
  sessionAffinity: 'None',
  ipFamilies: [],
  exportedLabels: {},
  exportedAnnotations: {},
  ...over,
});
/** Writes, as the worker, the ServiceImport `name` with the export record of `exports`, and its status.clusters. */
async function recordImport(
  ok: (args: string[], input?: string) => Promise<unknown>,
  name: string,
  exports: ExportFacts[],
): Promise<void> {
  await ok(['apply', ...AS_WORKER, '-f', '-'], serviceImport(name, 'ClusterSetIP', exportRecordAnnotations(exports)));
  const status = { status: { clusters: exports.map((e) => ({ cluster: e.clusterId })) } };
  await ok([
    'patch',
    ...AS_WORKER,
    'serviceimport',
    name,
    '-n',
    NS,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify(status),
  ]);
}
/** Long before anything this suite creates: a peer that exported then is the oldest exporter (X1). */
const LONG_AGO = Date.parse('2020-01-01T00:00:00Z');

describe('webhooks on a real apiserver, driven by kubectl', function () {
  this.timeout(120_000);
  const clusterSet = withClusterSet();
  let cluster: TestCluster;
  let webhook: RegisteredWebhook | undefined;
  let savedProperties: unknown[] = [];
  /** The worker-writes policy's binding (I7) an earlier suite may have installed: this suite checks the webhook's I6 alone. */
  let savedPolicyBinding: { metadata: Record<string, unknown> } | undefined;
  const k = (args: string[], input?: string) => kubectl(cluster.kubeconfigPath, args, input);
  const ok = (args: string[], input?: string) => kubectlOk(cluster.kubeconfigPath, args, input);

  async function register(policy: 'Warn' | 'Reject', externalNamePolicy: 'Warn' | 'Reject' = 'Warn'): Promise<void> {
    await webhook?.stop();
    webhook = await startRegisteredWebhook({
      kubeconfigPath: cluster.kubeconfigPath,
      policy,
      externalNamePolicy,
      worker: WORKER_SERVICE_ACCOUNT,
    });
  }
  /** Deletes ServiceExport `name` at once: nothing runs the worker here, so its finalizer is released by hand. */
  async function unexport(name: string): Promise<void> {
    await ok(['delete', 'serviceexport', name, '-n', NS, '--wait=false']);
    await ok([
      'patch',
      'serviceexport',
      name,
      '-n',
      NS,
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
  }

  before(async function () {
    cluster = clusterSet().clusters[1]!;
    // This suite starts from a cluster without identity; whatever an earlier suite left is put back afterwards. Done
    // before registering, so C3 cannot refuse it on account of exports an earlier suite left.
    const existing = await k(['get', 'clusterproperties', '-o', 'json']);
    savedProperties = existing.status === 0 ? (JSON.parse(existing.stdout) as { items: unknown[] }).items : [];
    if (savedProperties.length > 0) await ok(['delete', 'clusterproperties', '--all']);
    const binding = await k(['get', 'validatingadmissionpolicybinding', WORKER_POLICY_NAME, '-o', 'json']);
    if (binding.status === 0) {
      savedPolicyBinding = JSON.parse(binding.stdout) as { metadata: Record<string, unknown> };
      await ok(['delete', 'validatingadmissionpolicybinding', WORKER_POLICY_NAME]);
    }
    await register('Warn');
    await createNamespace(cluster.kubeConfig(), NS);
  });

  after(async function () {
    if (!cluster) return;
    // Nothing runs the worker here: release the finalizers (a metadata-only update the webhook allows) so the namespace goes.
    const exports = (
      JSON.parse((await k(['get', 'serviceexports', '-n', NS, '-o', 'json'])).stdout || '{"items":[]}') as {
        items: Array<{ metadata: { name: string } }>;
      }
    ).items;
    for (const e of exports)
      await k([
        'patch',
        'serviceexport',
        e.metadata.name,
        '-n',
        NS,
        '--type=json',
        '-p',
        '[{"op":"remove","path":"/metadata/finalizers"}]',
      ]);
    await webhook?.stop();
    await deleteNamespace(cluster.kubeConfig(), NS);
    await k(['delete', 'clusterproperties', '--all']);
    for (const p of savedProperties as Array<{ metadata: Record<string, unknown> }>) {
      await k(['create', '-f', '-'], yaml({ ...p, metadata: { name: p.metadata.name } }));
    }
    if (savedPolicyBinding)
      await k(
        ['create', '-f', '-'],
        yaml({ ...savedPolicyBinding, metadata: { name: savedPolicyBinding.metadata.name } }),
      );
  });

  it('C1: the tutorial export is refused before the ClusterProperties exist, with our message and command', async () => {
    const r = await k(['apply', '-f', '-'], serviceExport('nginx-hello'));
    expect(r.status).to.equal(1);
    expect(r.stderr)
      .to.contain('admission webhook "serviceexports.validate.multicluster.x-k8s.io" denied the request')
      .and.contain(
        `ServiceExport ${NS}/nginx-hello cannot be accepted: this cluster has no ClusterProperty ${CLUSTER_ID_PROPERTY} and ClusterProperty ${CLUSTERSET_ID_PROPERTY} yet`,
      )
      .and.contain('| kubectl apply -f -');
    expect((await k(['get', 'serviceexport', 'nginx-hello', '-n', NS])).status, 'nothing was stored').to.equal(1);
  });

  it('C1: the commands from the message create the ClusterProperties; then the export is admitted with the finalizer (E3)', async () => {
    const r = await k(['apply', '-f', '-'], serviceExport('nginx-hello'));
    const commands = [...r.stderr.matchAll(/echo '(\{[^']*\})' \| kubectl apply -f -/g)].map((m) => m[1]!);
    expect(commands).to.have.length(2);
    for (const json of commands) {
      await ok(
        ['apply', '-f', '-'],
        json.replace('<this-cluster-id>', cluster.id).replace('<clusterset-id>', 'webhook-it-set'),
      );
    }
    const admitted = await ok(['apply', '-f', '-'], serviceExport('nginx-hello'));
    expect(admitted.stdout).to.contain('serviceexport.multicluster.x-k8s.io/nginx-hello created');
    expect(admitted.stderr, 'E4: no Service yet').to.contain(
      `Warning: Service ${NS}/nginx-hello does not exist yet; it is exported as soon as it is created (E4).`,
    );
    expect(
      (await ok(['get', 'serviceexport', 'nginx-hello', '-n', NS, '-o', 'jsonpath={.metadata.finalizers}'])).stdout,
    ).to.equal(`["${SERVICE_EXPORT_FINALIZER}"]`);
  });

  it('E3: a server-side dry run shows the finalizer and stores nothing', async () => {
    const dry = await ok(
      ['create', '--dry-run=server', '-o', 'jsonpath={.metadata.finalizers}', '-f', '-'],
      serviceExport('dry-run'),
    );
    expect(dry.stdout).to.equal(`["${SERVICE_EXPORT_FINALIZER}"]`);
    expect((await k(['get', 'serviceexport', 'dry-run', '-n', NS])).status).to.equal(1);
  });

  it('E4: a ServiceExport that no Service name can match (64 characters, a dot) is refused with what to do', async () => {
    for (const name of ['a'.repeat(64), 'nginx-hello.v2']) {
      const r = await k(['apply', '-f', '-'], serviceExport(name));
      expect(r.status, name).to.equal(1);
      expect(r.stderr)
        .to.contain(`ServiceExport ${NS}/${name} can never export anything`)
        .and.contain('Name the ServiceExport exactly as the Service to export.');
    }
  });

  it('conversion: v1alpha1 is served through the webhook while etcd holds v1beta1', async () => {
    const alpha = JSON.parse(
      (await ok(['get', 'serviceexports.v1alpha1.multicluster.x-k8s.io', 'nginx-hello', '-n', NS, '-o', 'json']))
        .stdout,
    ) as { apiVersion: string; metadata: { finalizers: string[] } };
    expect(alpha.apiVersion).to.equal('multicluster.x-k8s.io/v1alpha1');
    expect(alpha.metadata.finalizers).to.deep.equal([SERVICE_EXPORT_FINALIZER]);
    const list = JSON.parse(
      (await ok(['get', 'serviceexports.v1alpha1.multicluster.x-k8s.io', '-n', NS, '-o', 'json'])).stdout,
    ) as { items: Array<{ apiVersion: string }> };
    expect(list.items.map((i) => i.apiVersion)).to.deep.equal(['multicluster.x-k8s.io/v1alpha1']);
    expect(
      (await storedObject(cluster.endpoints.etcd, `/registry/multicluster.x-k8s.io/serviceexports/${NS}/nginx-hello`))
        .apiVersion,
    ).to.equal('multicluster.x-k8s.io/v1beta1');
    const metrics = await webhook!.server.metrics.registry.getSingleMetricAsString(
      'mcs_cloudmap_webhook_requests_total',
    );
    expect(metrics).to.match(/webhook="convert",kind="ServiceExport",operation="CONVERT",result="converted"\} [1-9]/);
  });

  it('E5 (mcs-api v0.5.0 conformance): an export of an ExternalName Service is admitted with a warning, so Valid=False can be set', async () => {
    await ok(
      ['apply', '-f', '-'],
      service('external', { type: 'ExternalName', externalName: 'example.com', ports: undefined }),
    );
    const r = await ok(['apply', '-f', '-'], serviceExport('external'));
    expect(r.stdout).to.contain('serviceexport.multicluster.x-k8s.io/external created');
    expect(r.stderr).to.contain(
      `Warning: Service ${NS}/external is ExternalName, which cannot be exported: expect Valid=False, InvalidServiceType (E5).`,
    );
  });

  it('E5: with the opt-in --external-name-policy=Reject the same export is refused', async () => {
    await unexport('external');
    await register('Warn', 'Reject');
    try {
      const r = await k(['apply', '-f', '-'], serviceExport('external'));
      expect(r.status).to.equal(1);
      expect(r.stderr)
        .to.contain('admission webhook "serviceexports.validate.multicluster.x-k8s.io" denied the request')
        .and.contain(
          `Service ${NS}/external is of type ExternalName, which cannot be exported (E5; external-name policy Reject)`,
        );
      expect((await k(['get', 'serviceexport', 'external', '-n', NS])).status, 'nothing was stored').to.equal(1);
    } finally {
      await register('Warn');
    }
  });

  it('I6: a user may not write a ServiceImport or an MCS EndpointSlice; the worker identity may', async () => {
    const user = await k(['apply', '-f', '-'], serviceImport('nginx-hello', 'ClusterSetIP'));
    expect(user.status).to.equal(1);
    expect(user.stderr).to.contain(
      `ServiceImport ${NS}/nginx-hello is managed by the mcs-cloudmap worker; user "kubernetes-admin" may not create it (I6)`,
    );
    await ok(['apply', ...AS_WORKER, '-f', '-'], serviceImport('nginx-hello', 'ClusterSetIP'));
    const slice = yaml({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'nginx-hello-x', namespace: NS, labels: { [LABEL_SERVICE_NAME]: 'nginx-hello' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.9.9.9'] }],
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    });
    expect((await k(['apply', '-f', '-'], slice)).stderr)
      .to.contain('(labelled multicluster.kubernetes.io/service-name)')
      .and.contain('(I6)');
    await ok(['apply', ...AS_WORKER, '-f', '-'], slice);
    expect((await k(['delete', 'endpointslice', 'nginx-hello-x', '-n', NS])).stderr).to.contain(
      'may not delete it (I6)',
    );
    await ok(['delete', ...AS_WORKER, 'endpointslice', 'nginx-hello-x', '-n', NS]);
  });

  it('X3: a conflicting export is admitted with the warning kubectl prints (policy Warn)', async () => {
    await recordImport(ok, 'conflicting', [exported('peer-1', LONG_AGO)]);
    await ok(['apply', '-f', '-'], service('conflicting', { clusterIP: 'None' }));
    const r = await ok(['apply', '-f', '-'], serviceExport('conflicting'));
    expect(r.stderr).to.contain(
      `Warning: TypeConflict (X3): type ClusterSetIP from cluster peer-1 (oldest export) wins over Headless from ${cluster.id}`,
    );
    expect((await ok(['get', 'serviceexport', 'conflicting', '-n', NS, '-o', 'name'])).stdout.trim()).to.equal(
      'serviceexport.multicluster.x-k8s.io/conflicting',
    );
  });

  it('X2: an update of an exported Service that clashes on a port is warned', async () => {
    const r = await ok([
      'patch',
      'service',
      'conflicting',
      '-n',
      NS,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/ports/0/port","value":8080}]',
    ]);
    expect(r.stderr).to.contain(
      `Warning: PortConflict (X2): port "http" is TCP/80 in cluster peer-1 (older export, wins) but TCP/8080 in cluster ${cluster.id}`,
    );
  });

  it('X3: exported labels and annotations are compared as the worker compares them', async () => {
    const labelled = yaml({
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name: 'conflicting', namespace: NS },
      spec: { exportedLabels: { team: 'b' }, exportedAnnotations: { note: 'x' } },
    });
    const r = await ok(['apply', '-f', '-'], labelled);
    expect(r.stderr)
      .to.contain(
        `Warning: LabelsConflict (X3): exportedLabels {} from cluster peer-1 (oldest export) wins over {team=b} from ${cluster.id}`,
      )
      .and.contain(
        `Warning: AnnotationsConflict (X3): exportedAnnotations {} from cluster peer-1 (oldest export) wins over {note=x} from ${cluster.id}`,
      );
  });

  it('X1: when this cluster is itself the oldest exporter, the warning names it as the winner', async () => {
    await ok(['apply', '-f', '-'], service('oldest', {}));
    await ok(['apply', '-f', '-'], serviceExport('oldest'));
    const created = Date.parse(
      (await ok(['get', 'serviceexport', 'oldest', '-n', NS, '-o', 'jsonpath={.metadata.creationTimestamp}'])).stdout,
    );
    // The worker's record: this cluster's export, and a peer that exported a minute later.
    await recordImport(ok, 'oldest', [exported(cluster.id, created), exported('peer-2', created + 60_000)]);
    const r = await ok([
      'patch',
      'service',
      'oldest',
      '-n',
      NS,
      '--type=merge',
      '-p',
      '{"spec":{"sessionAffinity":"ClientIP"}}',
    ]);
    expect(r.stderr).to.contain(
      `Warning: SessionAffinityConflict (X3): sessionAffinity ClientIP from cluster ${cluster.id} (oldest export) wins over None from peer-2`,
    );
  });

  it('X2 (mcs-api v0.5.0 conformance case): ports that are not identical warn PortConflict without any clash', async () => {
    await recordImport(ok, 'union', [
      exported('peer-1', LONG_AGO, {
        ports: [
          { name: 'tcp', protocol: 'TCP', port: 42 },
          { name: 'udp', protocol: 'UDP', port: 42 },
        ],
      }),
    ]);
    await ok(
      ['apply', '-f', '-'],
      service('union', {
        ports: [
          { name: 'tcp', protocol: 'TCP', port: 42 },
          { name: 'stcp', protocol: 'SCTP', port: 142 },
        ],
      }),
    );
    const r = await ok(['apply', '-f', '-'], serviceExport('union'));
    expect(r.stderr).to.contain(
      `Warning: PortConflict (X2): ports of ${cluster.id} differ from the oldest export (peer-1): adds "stcp" SCTP/142, lacks "udp" UDP/42`,
    );
  });

  it('C2, C3: the cluster id may not change or go while exports exist, nor become an invalid label', async () => {
    const change = await k(
      ['apply', '-f', '-'],
      yaml({
        apiVersion: 'about.k8s.io/v1beta1',
        kind: 'ClusterProperty',
        metadata: { name: CLUSTER_ID_PROPERTY },
        spec: { value: 'other' },
      }),
    );
    expect(change.status).to.equal(1);
    expect(change.stderr).to.contain(
      `ClusterProperty ${CLUSTER_ID_PROPERTY} cannot change from "${cluster.id}" to "other" while this cluster has ServiceExports (C3): `,
    );
    const gone = await k(['delete', 'clusterproperty', CLUSTERSET_ID_PROPERTY]);
    expect(gone.stderr)
      .to.contain(
        `ClusterProperty ${CLUSTERSET_ID_PROPERTY} cannot be deleted while this cluster has ServiceExports (C3): it has `,
      )
      .and.contain('`kubectl get serviceexports --all-namespaces` lists them')
      .and.not.contain(`${NS}/`);
    const relabel = await k([
      'patch',
      'clusterproperty',
      CLUSTER_ID_PROPERTY,
      '--type=merge',
      '-p',
      '{"spec":{"value":"Bad_Id"}}',
    ]);
    expect(relabel.stderr).to.contain('The cluster id "Bad_Id" is not an RFC 1123 DNS label').and.contain('(C2)');
  });

  it('C5, K3: reserved names are admitted with a warning; values over 128000 characters are refused', async () => {
    const property = (name: string, value: string) =>
      yaml({ apiVersion: 'about.k8s.io/v1beta1', kind: 'ClusterProperty', metadata: { name }, spec: { value } });
    const reserved = await ok(['apply', '-f', '-'], property('region.k8s.io', 'eu-west-1'));
    expect(reserved.stderr).to.contain(
      'Warning: ClusterProperty names under k8s.io and kubernetes.io are reserved for well-known properties (C5).',
    );
    const long = await k(['create', '-f', '-'], property('note.example.com', 'x'.repeat(128001)));
    expect(long.status).to.equal(1);
    expect(long.stderr).to.contain('spec.value: Too long: may not be more than 128000');
    await ok(['create', '-f', '-'], property('note.example.com', 'x'.repeat(128000)));
  });

  it('X3: with --conflict-policy=Reject the same export is refused with the same facts', async () => {
    await register('Reject');
    await unexport('conflicting');
    const r = await k(['apply', '-f', '-'], serviceExport('conflicting'));
    expect(r.status).to.equal(1);
    expect(r.stderr)
      .to.contain(
        `ServiceExport ${NS}/conflicting conflicts with the ServiceImport exported by peer-1 (PortConflict, TypeConflict; conflict policy Reject)`,
      )
      .and.contain('type ClusterSetIP from cluster peer-1 (oldest export) wins over Headless');
  });
});
