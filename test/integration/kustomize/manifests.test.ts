// Every kustomization builds with `kubectl kustomize`, and what it builds is production-shaped and consistent with the
// processes it starts: probes, limits, non-root, ports and paths that the webhook server and the worker really use,
// cert-manager wiring, per-cluster values (W3, W4).
import { expect } from 'chai';
import { dirname } from 'node:path';
import { validateClusterId } from '../../../src/core/cluster-id.ts';
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../../../src/core/names.ts';
import { parseWorkerOptions, workerOptionSpecs } from '../../../src/worker/options.ts';
import { IN_CLUSTER, CONVERT_PATH } from '../../../src/webhook/registration/client-config.ts';
import { parseWebhookOptions, webhookOptionSpecs } from '../../../src/webhook/options.ts';
import { staleManifests } from '../../../kustomize/generate.ts';
import { find, kustomizations, kustomizeBuild, kustomizeBuildWithBase, type Manifest } from './build.ts';
import { deploymentProblems, effectiveEnv, resolvePort, type Deployment } from './deployment-checks.ts';

const OURS = 'mcs-cloudmap';
if (!('service' in IN_CLUSTER)) throw new Error('IN_CLUSTER is expected to address the webhook Service');
const WEBHOOK_SERVICE = IN_CLUSTER.service;
const NAMES = kustomizations();
const OVERLAYS = NAMES.filter((k) => k.startsWith('overlays/'));
const built = new Map<string, Manifest[]>();
/** Built on first use inside a test, so a kustomization that does not build fails its tests, not the whole run. */
function objectsOf(name: string): Manifest[] {
  let objects = built.get(name);
  if (!objects) built.set(name, (objects = kustomizeBuild(name).objects));
  return objects;
}

function ours(objects: readonly Manifest[], kind: string): Manifest[] {
  return objects.filter((o) => o.kind === kind && o.metadata.labels?.['app.kubernetes.io/part-of'] === OURS);
}

function configMapData(objects: readonly Manifest[]): Record<string, string> {
  const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('mcs-cloudmap-config'));
  if (!cm) throw new Error('ConfigMap mcs-cloudmap-config is not in the build output');
  return cm.data as Record<string, string>;
}

describe('kustomize manifests', () => {
  it('finds base and at least the cls1 and cls2 overlays', () => {
    expect(NAMES).to.include.members(['base', 'overlays/cls1', 'overlays/cls2']);
  });

  it("W3, W4: the webhook configurations and the Helm chart's generated files are current (npm run manifests)", () => {
    expect(staleManifests(), 'run npm run manifests').to.deep.equal([]);
  });

  for (const name of NAMES) {
    describe(name, () => {
      let objects: Manifest[] = [];
      it('builds with kubectl kustomize', () => {
        objects = objectsOf(name);
        expect(objects.length).to.be.greaterThan(10);
        for (const o of objects)
          expect([o.apiVersion, o.kind, o.metadata?.name].every(Boolean), JSON.stringify(o).slice(0, 80)).to.equal(
            true,
          );
      });
      beforeEach(() => {
        objects = objectsOf(name);
      });
      it('every Deployment of ours has probes, requests and limits, and cannot run as root', () => {
        const deployments = ours(objects, 'Deployment') as Deployment[];
        expect(deployments.map((d) => d.metadata.name).sort()).to.deep.equal([
          'mcs-cloudmap-webhook',
          'mcs-cloudmap-worker',
        ]);
        for (const d of deployments) expect(deploymentProblems(d), d.metadata.name).to.deep.equal([]);
      });

      it("D3: there is no other Deployment: the cluster's CoreDNS keeps its own (stock) image", () => {
        expect(
          objects
            .filter((o) => o.kind === 'Deployment' && !ours(objects, 'Deployment').includes(o))
            .map((d) => `${d.metadata.namespace}/${d.metadata.name}`),
        ).to.deep.equal([]);
      });

      it('the ConfigMap holds only MCS_* variables the processes read, with values they accept', () => {
        const data = configMapData(objects);
        const known = new Set(
          [...Object.values(webhookOptionSpecs), ...Object.values(workerOptionSpecs)].map((s) => s.env),
        );
        expect(Object.keys(data).filter((k) => !known.has(k))).to.deep.equal([]);
        expect(() => parseWebhookOptions([], data)).not.to.throw();
        expect(() => parseWorkerOptions([], data)).not.to.throw();
      });

      it('the webhook Deployment serves on the ports and files its flags name; Service and probes point at them', () => {
        const deploy = find(objects, 'Deployment', 'mcs-cloudmap-webhook') as Deployment;
        const container = deploy.spec.template.spec.containers[0]!;
        expect(container.command).to.deep.equal([
          'node',
          '--max-old-space-size=256',
          '--max-semi-space-size=4',
          'dist/src/webhook/main.js',
        ]);
        const opts = parseWebhookOptions(container.args ?? [], effectiveEnv(container, configMapData(objects)));
        const service = find(objects, 'Service', WEBHOOK_SERVICE.name);
        expect(service.metadata.namespace).to.equal(WEBHOOK_SERVICE.namespace);
        const port = (service.spec as { ports: { port: number; targetPort: string | number }[] }).ports[0]!;
        expect(port.port).to.equal(WEBHOOK_SERVICE.port);
        expect(resolvePort(container, port.targetPort)).to.equal(opts.port);
        expect(resolvePort(container, container.readinessProbe!.httpGet.port)).to.equal(opts.metricsPort);
        expect(resolvePort(container, container.livenessProbe!.httpGet.port)).to.equal(opts.metricsPort);
        expect([container.livenessProbe!.httpGet.path, container.readinessProbe!.httpGet.path]).to.deep.equal([
          '/healthz',
          '/readyz',
        ]);
        // The Secret is mounted as a directory (no subPath) holding both files, so renewals reach the server.
        const tls = container.volumeMounts!.find((m) => m.mountPath === dirname(opts.tlsCertFile))!;
        expect(tls, 'a volume mounted where --tls-cert-file points').to.not.equal(undefined);
        expect(dirname(opts.tlsKeyFile)).to.equal(tls.mountPath);
        expect(tls.subPath).to.equal(undefined);
        expect(deploy.spec.template.spec.volumes!.find((v) => v.name === tls.name)!.secret!.secretName).to.equal(
          'mcs-cloudmap-webhook-tls',
        );
      });

      it('W3: two webhook replicas on different nodes if possible, never all disrupted at once', () => {
        const deploy = find(objects, 'Deployment', 'mcs-cloudmap-webhook') as Deployment;
        expect(deploy.spec.replicas).to.be.at.least(2);
        const selector = deploy.spec.selector.matchLabels;
        const pdb = objects.find(
          (o) =>
            o.kind === 'PodDisruptionBudget' &&
            JSON.stringify((o.spec as { selector: unknown }).selector) === JSON.stringify({ matchLabels: selector }),
        );
        expect(pdb, 'a PodDisruptionBudget selecting the webhook pods').to.not.equal(undefined);
        expect((pdb!.spec as { minAvailable: number }).minAvailable).to.be.within(1, deploy.spec.replicas! - 1);
        const anti =
          deploy.spec.template.spec.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
        expect(anti.map((t) => t.podAffinityTerm.labelSelector.matchLabels)).to.deep.include(selector);
      });

      it('the worker Deployment elects a leader and serves health and metrics on its flag ports', () => {
        const deploy = find(objects, 'Deployment', 'mcs-cloudmap-worker') as Deployment;
        const container = deploy.spec.template.spec.containers[0]!;
        expect(container.command).to.deep.equal(
          [
            'node',
            '--max-old-space-size=384',
            '--max-semi-space-size=1',
            '--no-opt',
            '--no-maglev',
            '--no-sparkplug',
            '--optimize-for-size',
            'dist/src/worker/main.js',
          ],
          'the compiled worker with the heap and compiler flags measured in docs/benchmarks.md',
        );
        const opts = parseWorkerOptions(container.args ?? [], effectiveEnv(container, configMapData(objects)));
        expect(opts.leaderElect).to.equal(true);
        expect(opts.identity, 'the Lease holder is the pod name').to.equal('<metadata.name>');
        expect(resolvePort(container, container.livenessProbe!.httpGet.port)).to.equal(opts.healthPort);
        expect(resolvePort(container, container.readinessProbe!.httpGet.port)).to.equal(opts.healthPort);
        expect(resolvePort(container, 'metrics')).to.equal(opts.metricsPort);
      });

      it("I6: the webhook trusts exactly the worker's service account as the writer of imports", () => {
        const webhook = find(objects, 'Deployment', 'mcs-cloudmap-webhook') as Deployment;
        const worker = find(objects, 'Deployment', 'mcs-cloudmap-worker') as Deployment;
        const opts = parseWebhookOptions(
          [],
          effectiveEnv(webhook.spec.template.spec.containers[0]!, configMapData(objects)),
        );
        expect(opts.workerServiceAccount).to.equal(
          `system:serviceaccount:${worker.metadata.namespace}:${worker.spec.template.spec.serviceAccountName}`,
        );
      });

      it('each process runs as its own service account, bound to its own roles, and neither may touch Secrets', () => {
        const bindings = objects.filter(
          (o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding',
        ) as (Manifest & {
          subjects: { name: string; namespace: string }[];
          roleRef: { kind: string; name: string };
        })[];
        for (const d of ours(objects, 'Deployment') as Deployment[]) {
          const sa = d.spec.template.spec.serviceAccountName;
          find(objects, 'ServiceAccount', sa);
          const roles = bindings
            .filter((b) => b.subjects.some((s) => s.name === sa && s.namespace === d.metadata.namespace))
            .map((b) => b.roleRef.name);
          expect(roles, sa).to.include(sa);
        }
        for (const role of objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')) {
          for (const rule of role.rules as { resources: string[]; verbs: string[] }[]) {
            // Each element on its own: `not.include.members([...])` passes unless the rule grants both.
            for (const forbidden of ['secrets', '*'])
              expect(rule.resources, role.metadata.name).to.not.include(forbidden);
            expect(rule.verbs, role.metadata.name).to.not.include('*');
          }
        }
        const webhookVerbs = (
          find(objects, 'ClusterRole', 'mcs-cloudmap-webhook').rules as { verbs: string[] }[]
        ).flatMap((r) => r.verbs);
        expect([...new Set(webhookVerbs)].sort()).to.deep.equal(['list', 'watch']);
      });

      it('every webhook and conversion stanza calls the webhook Service', () => {
        const stanzas = [
          ...objects
            .filter((o) => o.kind.endsWith('WebhookConfiguration'))
            .flatMap((o) => (o.webhooks as { clientConfig: unknown }[]).map((w) => w.clientConfig)),
          ...objects
            .filter((o) => o.kind === 'CustomResourceDefinition')
            .map(
              (o) => (o.spec as { conversion: { webhook: { clientConfig: unknown } } }).conversion.webhook.clientConfig,
            ),
        ] as { service: { name: string; namespace: string; port: number; path: string } }[];
        expect(stanzas).to.have.length.greaterThan(3);
        for (const s of stanzas)
          expect({ ...s.service, path: undefined }).to.deep.equal({ ...WEBHOOK_SERVICE, path: undefined });
        expect(stanzas.filter((s) => s.service.path === CONVERT_PATH)).to.have.length(3);
      });
    });
  }

  for (const overlay of OVERLAYS) {
    describe(overlay, () => {
      let objects: Manifest[] = [];
      beforeEach(() => {
        objects = objectsOf(overlay);
      });

      it('cert-manager: every inject-ca-from names the CA-signed serving Certificate whose Secret the webhook mounts', () => {
        const refs = objects
          .map((o) => o.metadata.annotations?.['cert-manager.io/inject-ca-from'])
          .filter((r) => r !== undefined);
        expect(refs).to.have.length(5); // 3 CRDs, 2 webhook configurations
        for (const ref of new Set(refs)) {
          const [ns, name] = ref.split('/') as [string, string];
          const cert = find(objects, 'Certificate', name);
          expect(cert.metadata.namespace).to.equal(ns);
          const spec = cert.spec as { secretName: string; dnsNames: string[]; issuerRef: { name: string } };
          expect(spec.secretName).to.equal('mcs-cloudmap-webhook-tls');
          expect(spec.dnsNames).to.include(`${WEBHOOK_SERVICE.name}.${WEBHOOK_SERVICE.namespace}.svc`);
          const caIssuer = find(objects, 'Issuer', spec.issuerRef.name).spec as { ca: { secretName: string } };
          const ca = objects.find(
            (o) => o.kind === 'Certificate' && (o.spec as { secretName: string }).secretName === caIssuer.ca.secretName,
          )!;
          expect((ca.spec as { isCA: boolean }).isCA).to.equal(true);
          const root = find(objects, 'Issuer', (ca.spec as { issuerRef: { name: string } }).issuerRef.name).spec;
          expect(root).to.deep.equal({ selfSigned: {} });
        }
      });

      it('C1/C2: sets a cluster id that is a DNS label and a ClusterSet id', () => {
        const value = (n: string) => (find(objects, 'ClusterProperty', n).spec as { value: string }).value;
        expect(validateClusterId(value(CLUSTER_ID_PROPERTY))).to.equal(undefined);
        expect(value(CLUSTERSET_ID_PROPERTY)).to.match(/^\S+$/);
      });

      it("sets the AWS region and an IAM role (IRSA) on the worker's service account only", () => {
        expect(configMapData(objects).MCS_AWS_REGION).to.match(/^[a-z]{2}-[a-z]+-\d$/);
        expect(
          find(objects, 'ServiceAccount', 'mcs-cloudmap-worker').metadata.annotations?.['eks.amazonaws.com/role-arn'],
        ).to.match(/^arn:aws:iam::\d{12}:role\//);
        expect(find(objects, 'ServiceAccount', 'mcs-cloudmap-webhook').metadata.annotations ?? {}).to.not.have.property(
          'eks.amazonaws.com/role-arn',
        );
      });

      it("D3: gives CoreDNS's kubernetes plugin the clusterset.local zone and its multicluster option, and read access to ServiceImports", () => {
        const corefile = (find(objects, 'ConfigMap', 'coredns').data as { Corefile: string }).Corefile;
        // The option is refused unless its zone is one of the plugin's; both inside the one kubernetes block.
        const block = /^\s+kubernetes ([^{\n]*)\{([^}]*)\}/m.exec(corefile);
        expect(block?.[1]?.trim().split(/\s+/), "the kubernetes plugin's zones").to.deep.equal([
          'cluster.local',
          'clusterset.local',
          'in-addr.arpa',
          'ip6.arpa',
        ]);
        expect(block?.[2], "the kubernetes plugin's block").to.match(/^\s+multicluster clusterset\.local$/m);
        expect(corefile.match(/^\s+kubernetes /gm), 'one kubernetes plugin').to.have.length(1);
        const role = find(objects, 'ClusterRole', 'mcs-cloudmap-coredns-multicluster').rules as {
          apiGroups: string[];
          resources: string[];
          verbs: string[];
        }[];
        expect(role).to.deep.equal([
          { apiGroups: ['multicluster.x-k8s.io'], resources: ['serviceimports'], verbs: ['list', 'watch'] },
        ]);
        const binding = find(objects, 'ClusterRoleBinding', 'mcs-cloudmap-coredns-multicluster') as Manifest & {
          subjects: unknown[];
        };
        expect(binding.subjects).to.deep.equal([{ kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' }]);
      });
    });
  }

  it('C4: the overlays give each cluster its own id in one ClusterSet', () => {
    const overlays = OVERLAYS.map(objectsOf);
    const values = (n: string) => overlays.map((o) => (find(o, 'ClusterProperty', n).spec as { value: string }).value);
    expect(new Set(values(CLUSTER_ID_PROPERTY)).size).to.equal(overlays.length);
    expect(new Set(values(CLUSTERSET_ID_PROPERTY)).size).to.equal(1);
  });

  it('components/monitoring: the PodMonitor selects the pods of both Deployments, on a port each container has', () => {
    const objects = kustomizeBuildWithBase(['components/monitoring']).objects;
    const monitor = find(objects, 'PodMonitor', 'mcs-cloudmap') as Manifest & {
      spec: {
        selector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
        podMetricsEndpoints: { port: string; path: string }[];
      };
    };
    const [expression] = monitor.spec.selector.matchExpressions;
    expect(expression!.operator).to.equal('In');
    expect(monitor.metadata.namespace).to.equal(find(objects, 'Deployment', 'mcs-cloudmap-worker').metadata.namespace);
    for (const d of ours(objects, 'Deployment') as (Deployment & {
      spec: { template: { metadata: { labels: Record<string, string> } } };
    })[]) {
      expect(expression!.values, d.metadata.name).to.include(d.spec.template.metadata.labels[expression!.key]);
      for (const endpoint of monitor.spec.podMetricsEndpoints) {
        expect(
          d.spec.template.spec.containers[0]!.ports?.map((p) => p.name),
          d.metadata.name,
        ).to.include(endpoint.port);
        expect(endpoint.path).to.equal('/metrics');
      }
    }
  });
});

describe('kustomize manifests: the Deployment check itself', () => {
  const good = () => find(kustomizeBuild('base').objects, 'Deployment', 'mcs-cloudmap-worker') as Deployment;

  it('fails a Deployment without probes, without limits, or that may run as root', () => {
    const noProbe = good();
    delete noProbe.spec.template.spec.containers[0]!.readinessProbe;
    expect(deploymentProblems(noProbe)).to.deep.equal(['mcs-cloudmap-worker/worker: no readinessProbe']);
    const noLimits = good();
    delete noLimits.spec.template.spec.containers[0]!.resources!.limits;
    expect(deploymentProblems(noLimits)).to.deep.equal([
      'mcs-cloudmap-worker/worker: no cpu limits',
      'mcs-cloudmap-worker/worker: no memory limits',
    ]);
    const root = good();
    delete root.spec.template.spec.securityContext!.runAsNonRoot;
    root.spec.template.spec.containers[0]!.securityContext!.runAsUser = 0;
    expect(deploymentProblems(root)).to.deep.equal([
      'mcs-cloudmap-worker/worker: may run as root (runAsNonRoot is not true)',
      'mcs-cloudmap-worker/worker: runs as user 0',
    ]);
  });
});
