// The Helm chart (charts/mcs-cloudmap) with a real helm: it lints, renders for every example values file, installs the
// same objects as kustomize (one source: a chart that drifts from kustomize/base fails here), and its values land where
// the processes read them (W3, W4).
import { expect } from 'chai';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseWorkerOptions } from '../../../src/worker/options.ts';
import { parseWebhookOptions } from '../../../src/webhook/options.ts';
import { find, kustomizeBuild, kustomizeBuildWithBase, type Manifest } from '../kustomize/build.ts';
import { deploymentProblems, type Deployment } from '../kustomize/deployment-checks.ts';
import { CLUSTER_PROPERTY_API, helm, helmTemplate, CHART, valuesArgs, valuesFiles } from './helm.ts';

const FILES = valuesFiles();
const file = (name: string) => {
  const f = FILES.get(name);
  if (!f) throw new Error(`charts/mcs-cloudmap/ci/${name}-values.yaml is missing`);
  return f;
};
const REPO = new URL('../../../', import.meta.url).pathname;
/** What kustomize installs and the chart leaves to the cluster's owner: the namespace (helm --create-namespace) and CoreDNS's Corefile. */
const NOT_IN_CHART = new Set(['Namespace//mcs-cloudmap-system', 'ConfigMap/kube-system/coredns']);
/** Labels and annotations only one of the two tools adds. */
const TOOL_LABELS = [
  'helm.sh/chart',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
  'app.kubernetes.io/part-of',
];
const TOOL_ANNOTATIONS = ['helm.sh/resource-policy', 'checksum/config'];

const key = (o: Manifest) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** An object without what differs by tool alone: their labels, Helm's annotations, kustomize's ConfigMap name hash. */
function normalized(o: Manifest): unknown {
  const strip = (meta: { labels?: Record<string, string>; annotations?: Record<string, string> } | undefined) => {
    if (!meta) return;
    for (const [field, names] of [
      ['labels', TOOL_LABELS],
      ['annotations', TOOL_ANNOTATIONS],
    ] as const) {
      for (const n of names) delete meta[field]?.[n];
      if (meta[field] && Object.keys(meta[field]).length === 0) delete meta[field];
    }
  };
  const copy = JSON.parse(
    JSON.stringify(o, (k, v: unknown) => (k === 'imagePullPolicy' ? undefined : v)).replace(
      /"mcs-cloudmap-config-[a-z0-9]+"/g,
      '"mcs-cloudmap-config"',
    ),
  ) as Manifest & { spec?: { template?: { metadata?: Manifest['metadata'] } } };
  strip(copy.metadata);
  strip(copy.spec?.template?.metadata);
  if (copy.kind === 'ConfigMap')
    copy.metadata.name = copy.metadata.name.replace(/^mcs-cloudmap-config-.*/, 'mcs-cloudmap-config');
  return copy;
}

/** JSON with object keys sorted: kustomize reorders keys, Helm keeps the template's order. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b)))
      : x,
  );
}

/** Differences between a kustomize build and a chart rendering, as readable lines (empty when they install the same). */
function drift(
  kustomize: readonly Manifest[],
  chart: readonly Manifest[],
  allowExtra: (o: Manifest) => boolean = () => false,
): string[] {
  const out: string[] = [];
  const chartByKey = new Map(chart.map((o) => [key(normalized(o) as Manifest), o]));
  const seen = new Set<string>();
  for (const k of kustomize) {
    const id = key(normalized(k) as Manifest);
    if (NOT_IN_CHART.has(id)) continue;
    seen.add(id);
    const c = chartByKey.get(id);
    if (!c) {
      out.push(`${id}: not in the chart`);
      continue;
    }
    const [a, b] = [canonical(normalized(k)), canonical(normalized(c))];
    if (a !== b) out.push(`${id}: differs\n  kustomize: ${a.slice(0, 400)}\n  chart:     ${b.slice(0, 400)}`);
  }
  for (const [id, c] of chartByKey) if (!seen.has(id) && !allowExtra(c)) out.push(`${id}: only in the chart`);
  return out;
}

function configMapData(objects: readonly Manifest[]): Record<string, string> {
  return find(objects, 'ConfigMap', 'mcs-cloudmap-config').data as Record<string, string>;
}

describe('Helm chart charts/mcs-cloudmap', function () {
  this.timeout(60_000);

  it('has example values for IRSA and for EKS Pod Identity', () => {
    expect([...FILES.keys()]).to.include.members(['irsa', 'pod-identity']);
  });

  for (const name of ['(defaults)', ...FILES.keys()]) {
    it(`helm lint --strict passes with ${name === '(defaults)' ? 'the default values' : `ci/${name}-values.yaml`}`, () => {
      const r = helm(['lint', '--strict', CHART, ...valuesArgs({ files: name === '(defaults)' ? [] : [file(name)] })]);
      expect(r.stderr + r.stdout).to.contain('1 chart(s) linted, 0 chart(s) failed');
      expect(r.status).to.equal(0);
    });

    it(`renders Deployments with probes, requests, limits and no root with ${name}`, () => {
      const objects = helmTemplate({
        files: name === '(defaults)' ? [] : [file(name)],
        apiVersions: [CLUSTER_PROPERTY_API],
      });
      const deployments = objects.filter((o) => o.kind === 'Deployment') as Deployment[];
      expect(deployments.map((d) => d.metadata.name).sort()).to.deep.equal([
        'mcs-cloudmap-webhook',
        'mcs-cloudmap-worker',
      ]);
      for (const d of deployments) expect(deploymentProblems(d), d.metadata.name).to.deep.equal([]);
      // The processes accept the settings exactly as the Deployments give them.
      expect(() => parseWebhookOptions([], configMapData(objects))).not.to.throw();
      expect(() => parseWorkerOptions([], configMapData(objects))).not.to.throw();
    });
  }

  it('one source: with the default values the chart installs every object of kustomize/base, identical', () => {
    // The chart adds the cert-manager component by default (tls.mode certManager), which the base leaves to overlays.
    const d = drift(kustomizeBuild('base').objects, helmTemplate(), (o) => o.apiVersion.startsWith('cert-manager.io/'));
    expect(d, d.join('\n')).to.deep.equal([]);
  });

  it('one source: ci/irsa-values.yaml installs exactly what kustomize/overlays/cls1 does (CRDs, RBAC, webhooks, TLS, ClusterProperties)', () => {
    const d = drift(
      kustomizeBuild('overlays/cls1').objects,
      helmTemplate({ files: [file('irsa')], apiVersions: [CLUSTER_PROPERTY_API] }),
    );
    expect(d, d.join('\n')).to.deep.equal([]);
  });

  it('one source: ci/monitoring-values.yaml adds exactly what base with components/monitoring does, alert and legend templates intact, plus the labels its Prometheus selects by', () => {
    const chart = helmTemplate({ files: [file('monitoring')] });
    for (const kind of ['PodMonitor', 'PrometheusRule']) {
      const o = find(chart, kind, 'mcs-cloudmap');
      expect(o.metadata.labels?.release, kind).to.equal('kube-prometheus-stack');
      delete o.metadata.labels!.release;
    }
    const d = drift(kustomizeBuildWithBase(['components/monitoring']).objects, chart, (o) =>
      o.apiVersion.startsWith('cert-manager.io/'),
    );
    expect(d, d.join('\n')).to.deep.equal([]);
    // The dashboard ConfigMap is the one Grafana's sidecar loads, and its JSON survived Helm's templating.
    const dashboard = find(chart, 'ConfigMap', 'mcs-cloudmap-dashboard');
    expect(dashboard.metadata.labels?.grafana_dashboard).to.equal('1');
    const json = JSON.parse((dashboard.data as Record<string, string>)['mcs-cloudmap-dashboard.json']!) as {
      panels: { targets?: { legendFormat: string }[] }[];
    };
    expect(json.panels.flatMap((p) => p.targets ?? []).map((t) => t.legendFormat)).to.include('{{outcome}}');
  });

  it("monitoring: off by default; the dashboard goes to the namespace Grafana's sidecar watches when given one", () => {
    expect(
      helmTemplate().filter(
        (o) => ['PodMonitor', 'PrometheusRule'].includes(o.kind) || o.metadata.name === 'mcs-cloudmap-dashboard',
      ),
    ).to.deep.equal([]);
    const objects = helmTemplate({
      files: [file('monitoring')],
      set: { 'monitoring.dashboard.namespace': 'monitoring' },
    });
    expect(find(objects, 'ConfigMap', 'mcs-cloudmap-dashboard').metadata.namespace).to.equal('monitoring');
    expect(find(objects, 'PrometheusRule', 'mcs-cloudmap').metadata.namespace).to.equal('mcs-cloudmap-system');
  });

  it('the drift check finds a changed rule (it can fail)', () => {
    const chart = helmTemplate();
    const role = find(chart, 'ClusterRole', 'mcs-cloudmap-webhook') as Manifest & { rules: { verbs: string[] }[] };
    role.rules[0]!.verbs.push('delete');
    expect(
      drift(kustomizeBuild('base').objects, chart, (o) => o.apiVersion.startsWith('cert-manager.io/')),
    ).to.have.length(1);
  });

  it("IRSA: the role ARN goes on the worker's ServiceAccount only, the region into the settings", () => {
    const objects = helmTemplate({ files: [file('irsa')] });
    expect(find(objects, 'ServiceAccount', 'mcs-cloudmap-worker').metadata.annotations).to.deep.equal({
      'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/mcs-cloudmap-worker-cls1',
    });
    expect(find(objects, 'ServiceAccount', 'mcs-cloudmap-webhook').metadata.annotations ?? {}).to.deep.equal({});
    expect(parseWorkerOptions([], configMapData(objects)).region).to.equal('us-west-2');
  });

  it('EKS Pod Identity: no IRSA annotation anywhere; image, replicas, resources, conflict policy, log level and settings from the values', () => {
    const objects = helmTemplate({ files: [file('pod-identity')] });
    for (const o of objects)
      expect(o.metadata.annotations ?? {}, key(o)).to.not.have.property('eks.amazonaws.com/role-arn');
    const webhook = find(objects, 'Deployment', 'mcs-cloudmap-webhook') as Deployment;
    const worker = find(objects, 'Deployment', 'mcs-cloudmap-worker') as Deployment;
    expect([webhook.spec.replicas, worker.spec.replicas]).to.deep.equal([3, 1]);
    for (const d of [webhook, worker])
      expect(d.spec.template.spec.containers[0]!.image).to.equal(
        '123456789012.dkr.ecr.us-west-2.amazonaws.com/mcs-cloudmap:0.1.0-rc.1',
      );
    expect(webhook.spec.template.spec.containers[0]!.resources).to.deep.equal({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { cpu: '1', memory: '256Mi' },
    });
    const data = configMapData(objects);
    const wh = parseWebhookOptions([], data);
    const wk = parseWorkerOptions([], data);
    expect([wh.conflictPolicy, wh.logLevel, wk.logLevel, wk.region, wk.pollInterval]).to.deep.equal([
      'Reject',
      'debug',
      'debug',
      'eu-west-1',
      2000,
    ]);
  });

  it("a changed setting changes the pods' checksum annotation, so they roll", () => {
    const checksum = (set: Record<string, string>) =>
      (
        find(helmTemplate({ set }), 'Deployment', 'mcs-cloudmap-worker') as Deployment & {
          spec: { template: { metadata: { annotations: Record<string, string> } } };
        }
      ).spec.template.metadata.annotations['checksum/config'];
    expect(checksum({ logLevel: 'info' })).to.equal(checksum({ logLevel: 'info' }));
    expect(checksum({ logLevel: 'debug' })).to.not.equal(checksum({ logLevel: 'info' }));
  });

  it('C1: ClusterProperties only once their CRD is served (helm maps every object before creating any)', () => {
    const props = (apiVersions: string[]) =>
      helmTemplate({ files: [file('irsa')], apiVersions })
        .filter((o) => o.kind === 'ClusterProperty')
        .map((o) => [o.metadata.name, (o.spec as { value: string }).value]);
    expect(props([])).to.deep.equal([]);
    expect(props([CLUSTER_PROPERTY_API])).to.deep.equal([
      ['cluster.clusterset.k8s.io', 'cls1'],
      ['clusterset.k8s.io', 'clusterset1'],
    ]);
  });

  it('tls.mode selfSigned: one CA in every caBundle and the Secret, and a serving certificate it signed for the Service', () => {
    const objects = helmTemplate({ files: [file('pod-identity')] });
    const secret = find(objects, 'Secret', 'mcs-cloudmap-webhook-tls').data as Record<string, string>;
    const pem = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
    const ca = new X509Certificate(pem(secret['ca.crt']!));
    const cert = new X509Certificate(pem(secret['tls.crt']!));
    expect(cert.verify(ca.publicKey)).to.equal(true);
    expect(cert.checkHost('mcs-cloudmap-webhook.mcs-cloudmap-system.svc')).to.equal(
      'mcs-cloudmap-webhook.mcs-cloudmap-system.svc',
    );
    expect(cert.checkPrivateKey(createPrivateKey(pem(secret['tls.key']!)))).to.equal(true);
    const bundles = [
      ...objects
        .filter((o) => o.kind.endsWith('WebhookConfiguration'))
        .flatMap((o) => (o.webhooks as { clientConfig: { caBundle?: string } }[]).map((w) => w.clientConfig.caBundle)),
      ...objects
        .filter((o) => o.kind === 'CustomResourceDefinition')
        .map(
          (o) =>
            (o.spec as { conversion: { webhook: { clientConfig: { caBundle?: string } } } }).conversion.webhook
              .clientConfig.caBundle,
        ),
    ];
    expect(bundles).to.have.length(9);
    expect(new Set(bundles)).to.deep.equal(new Set([secret['ca.crt']]));
    expect(
      objects.filter(
        (o) =>
          o.metadata.annotations?.['cert-manager.io/inject-ca-from'] !== undefined ||
          o.apiVersion.startsWith('cert-manager.io/'),
      ),
    ).to.deep.equal([]);
  });

  it("webhook.networkPolicy: the component's NetworkPolicy with the given peers; off by default", () => {
    expect(helmTemplate().filter((o) => o.kind === 'NetworkPolicy')).to.deep.equal([]);
    const chart = find(
      helmTemplate({ files: [file('pod-identity')] }),
      'NetworkPolicy',
      'mcs-cloudmap-webhook',
    ) as Manifest & { spec: { ingress: { from?: unknown[] }[] } };
    expect(chart.spec.ingress[0]!.from).to.deep.equal([
      { ipBlock: { cidr: '10.0.0.0/19' } },
      { ipBlock: { cidr: '10.0.32.0/19' } },
    ]);
    // Otherwise the same object as kustomize/components/webhook-network-policy (where the CIDR is patched in).
    const component = parse(
      readFileSync(join(REPO, 'kustomize/components/webhook-network-policy/network-policy.yaml'), 'utf8'),
    ) as typeof chart;
    component.spec.ingress[0]!.from = chart.spec.ingress[0]!.from;
    expect(canonical(normalized(chart))).to.equal(canonical(normalized(component)));
    // It selects the webhook's pods.
    const pods = (
      find(helmTemplate(), 'Deployment', 'mcs-cloudmap-webhook') as Manifest & {
        spec: { template: { metadata: { labels: object } } };
      }
    ).spec.template.metadata.labels;
    expect(pods).to.deep.include(
      (chart.spec as unknown as { podSelector: { matchLabels: object } }).podSelector.matchLabels,
    );
  });

  it('bad values are refused with what is wrong', () => {
    const refused = (set: Record<string, string>) => {
      const r = helm(['template', 'x', CHART, ...valuesArgs({ set })]);
      expect(r.status, JSON.stringify(set)).to.not.equal(0);
      return r.stderr;
    };
    expect(refused({ clusterId: 'Cluster_1' })).to.match(/clusterId.*does not match pattern/);
    expect(refused({ conflictPolicy: 'Ignore' })).to.match(/conflictPolicy/);
    expect(refused({ 'aws.iam.mode': 'irsa' })).to.match(/roleArn.*minLength/);
    expect(refused({ 'tls.mode': 'secret' })).to.match(/caBundle.*minLength/);
    expect(refused({ 'config.MCS_CONFLICT_POLICY': 'Reject' })).to.match(/MCS_CONFLICT_POLICY/);
    expect(refused({ 'monitoring.dashboard.namespace': 'Grafana_Dashboards' })).to.match(
      /namespace.*does not match pattern/,
    );
    // A NetworkPolicy without peers would admit no apiserver.
    const noPeers = helm(['template', 'x', CHART, '--set', 'webhook.networkPolicy.enabled=true']);
    expect(noPeers.status).to.not.equal(0);
    expect(noPeers.stderr).to.match(/networkPolicy\/from.*minItems/);
  });
});
