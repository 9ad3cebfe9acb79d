// The generated parts of the Helm chart (charts/mcs-cloudmap). Every object the chart shares with kustomize is rendered
// from the same source: kustomize/base and its components, src/webhook/registration/webhook-configurations.ts and src/webhook/crd. Only the values an
// install chooses become template expressions ("holes"): namespace, labels, image, replicas, resources, CA, settings.
// A hole is data: a Template value or a TemplateLine among a map's pairs, put into the YAML tree of the source object
// and written by the yaml library like any other node (no placeholder text, no search and replace of lines).
// Chart.yaml (version and appVersion from package.json), values.yaml (defaults from the base) and values.schema.json
// (choices from the processes' option specs) are generated too. Hand-written, in charts/mcs-cloudmap/templates:
// _helpers.tpl, the self-signed TLS Secret, the ClusterProperties and NOTES.txt.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { basename } from 'node:path';
import {
  Document,
  isScalar,
  Pair,
  parse,
  parseAllDocuments,
  stringify,
  visit,
  type ScalarTag,
  type YAMLMap,
} from 'yaml';
import { DNS_LABEL } from '../src/core/cluster-id.ts';
import { SYSTEM_NAMESPACE } from '../src/core/names.ts';
import { workerOptionSpecs } from '../src/worker/options.ts';
import { customResourceDefinitions } from '../src/webhook/crd/definitions.ts';
import { webhookOptionSpecs } from '../src/webhook/options.ts';
import { webhookConfigurations } from '../src/webhook/registration/webhook-configurations.ts';
import { renderDashboard } from './dashboard.ts';
import { workerPolicy } from './worker-policy.ts';

export const CHART_DIR = fileURLToPath(new URL('../charts/mcs-cloudmap/', import.meta.url));
const REPO = new URL('../', import.meta.url);
const source = (path: string) => readFileSync(new URL(path, REPO), 'utf8');

type Path = readonly (string | number)[];
/** Writes a template expression; gets the column where the key it belongs to starts. */
type Render = (keyColumn: number) => string;
/**
 * Where the chart differs from its source: at `path`, a template expression as the value (`value`); or inside the map
 * at `within`, a template line of its own that writes keys into it (`line`, e.g. an include of the chart's labels), in
 * place of the key `replacing` where the source has it, else after the map's keys.
 */
type Hole = { path: Path; value: Render } | { within: Path; replacing?: string; line: Render };

const include =
  (name: string): Render =>
  (indent) =>
    `{{- include "mcs-cloudmap.${name}" . | nindent ${indent} }}`;
const block =
  (expr: string): Render =>
  (indent) =>
    `{{- ${expr} | nindent ${indent + 2} }}`;
const scalar =
  (expr: string): Render =>
  () =>
    `{{ ${expr} }}`;

const LABELS: Hole = { within: ['metadata', 'labels'], line: include('labels') };
const CA_INJECTION: Hole = {
  within: ['metadata', 'annotations'],
  replacing: 'cert-manager.io/inject-ca-from',
  line: include('caInjection'),
};
const caBundle = (clientConfig: Path): Hole => ({
  within: clientConfig,
  replacing: 'caBundle',
  line: include('caBundleField'),
});

/** A template expression in the YAML tree: written as it is, never quoted or folded. */
class Template {
  readonly render: Render;
  constructor(render: Render) {
    this.render = render;
  }
}

/** A template line among the pairs of a map, written at the column of the map's keys. */
class TemplateLine extends Pair {
  readonly #render: Render;
  constructor(render: Render) {
    super(null);
    this.#render = render;
  }
  override toString(ctx?: { indent: string }): string {
    return this.#render(ctx?.indent.length ?? 0);
  }
}

/** How the yaml library writes a Template: the expression, with no tag (a value's indentation is its key's plus 2). */
const TEMPLATE_TAG: ScalarTag = {
  tag: 'tag:mcs-cloudmap,2026:template',
  default: true,
  identify: (value) => value instanceof Template,
  resolve: (text) => text,
  stringify: (item, ctx) => (item.value as Template).render(ctx.indent.length - 2),
};
const YAML_OPTIONS = { customTags: [TEMPLATE_TAG] };

/**
 * Text Helm must copy as it is: `{{` and `}}` of the source (Prometheus alert templates, Grafana legends) become template
 * actions that print them.
 */
function helmLiteral(text: string): string {
  return text.replace(/\{\{|\}\}/g, (delimiter) => `{{ \`${delimiter}\` }}`);
}

/** One YAML document with its holes filled, every mention of our namespace turned into the release's. */
function templated(doc: Document, holes: readonly Hole[]): string {
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string') node.value = helmLiteral(node.value);
    },
  });
  for (const hole of holes) {
    if ('value' in hole) {
      doc.setIn(hole.path, new Template(hole.value));
      continue;
    }
    if (!doc.hasIn(hole.within)) doc.setIn(hole.within, doc.createNode({}));
    const map = doc.getIn(hole.within, true) as YAMLMap;
    const at = map.items.findIndex((pair) => isScalar(pair.key) && pair.key.value === hole.replacing);
    map.items.splice(at < 0 ? map.items.length : at, at < 0 ? 0 : 1, new TemplateLine(hole.line));
  }
  const text = doc.toString({ lineWidth: 0, flowCollectionPadding: false }).replace(/^---\n/, '');
  return text.replaceAll(SYSTEM_NAMESPACE, '{{ .Release.Namespace }}');
}

/** Holes of a document of kustomize/base or a component, by kind and name; every object gets the chart's labels. */
function baseHoles(doc: Document): Hole[] {
  const kind = doc.get('kind') as string;
  const name = doc.getIn(['metadata', 'name']) as string;
  const holes = [LABELS];
  if (kind === 'ServiceAccount' && name === 'mcs-cloudmap-worker') {
    holes.push({
      path: ['metadata', 'annotations'],
      value: block('include "mcs-cloudmap.workerServiceAccountAnnotations" .'),
    });
  }
  if (kind === 'Deployment') {
    const values = `.Values.${name.replace('mcs-cloudmap-', '')}`;
    const container = ['spec', 'template', 'spec', 'containers', 0];
    holes.push(
      { path: ['spec', 'replicas'], value: scalar(`${values}.replicas`) },
      { path: [...container, 'image'], value: scalar('include "mcs-cloudmap.image" .') },
      { path: [...container, 'imagePullPolicy'], value: scalar('.Values.image.pullPolicy') },
      { path: [...container, 'resources'], value: block(`toYaml ${values}.resources`) },
      // A changed setting rolls the pods, as kustomize's hashed ConfigMap name does.
      {
        path: ['spec', 'template', 'metadata', 'annotations', 'checksum/config'],
        value: scalar('include (print $.Template.BasePath "/config.yaml") . | sha256sum'),
      },
    );
  }
  return holes;
}

function header(from: string): string {
  return `# Generated by \`npm run manifests\` from ${from}. Do not edit.\n`;
}

function fromYamlFile(path: string, holesOf: (doc: Document) => Hole[], condition?: string): string {
  const docs = parseAllDocuments(source(path), YAML_OPTIONS).map((d) => {
    if (d.errors.length > 0) throw new Error(`${path}: ${d.errors[0]!.message}`);
    return templated(d, holesOf(d));
  });
  const body = docs.join('---\n');
  return header(path) + (condition ? `{{- if ${condition} }}\n${body}{{- end }}\n` : body);
}

/** Settings that have a value of their own in values.yaml, not an entry of `config`. */
const VALUED_SETTINGS: Readonly<Record<string, string>> = {
  [webhookOptionSpecs.logLevel.env]: '.Values.logLevel',
  [webhookOptionSpecs.conflictPolicy.env]: '.Values.conflictPolicy',
  [workerOptionSpecs.region.env]: '.Values.aws.region',
  [webhookOptionSpecs.workerServiceAccount.env]: '',
};

/**
 * The ConfigMap both Deployments read (envFrom), from config.env: each entry can be overridden by `config` in the values
 * (or by its own value); other `config` entries follow.
 */
function configMap(): string {
  const data: Record<string, string> = {};
  for (const line of source('kustomize/base/config.env').split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && !line.startsWith('#')) data[line.slice(0, eq)] = line.slice(eq + 1);
  }
  const doc = new Document(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'mcs-cloudmap-config', namespace: SYSTEM_NAMESPACE },
      data,
    },
    YAML_OPTIONS,
  );
  const entries: Hole[] = Object.entries(data)
    .filter(([k]) => VALUED_SETTINGS[k] !== '')
    .map(([k, v]) => ({
      path: ['data', k],
      value: scalar(`${VALUED_SETTINGS[k] ?? `dig "${k}" ${JSON.stringify(v)} .Values.config`} | quote`),
    }));
  const fixed = [...new Set([...Object.keys(data), ...Object.keys(VALUED_SETTINGS)])]
    .map((k) => JSON.stringify(k))
    .join(' ');
  return (
    header('kustomize/base/config.env') +
    templated(doc, [
      LABELS,
      ...entries,
      {
        within: ['data'],
        line: (i) => `{{- include "mcs-cloudmap.settings" (dict "root" . "fixed" (list ${fixed})) | nindent ${i} }}`,
      },
    ])
  );
}

function objects(from: string, list: readonly object[], holesOf: (o: object, i: number) => Hole[]): string {
  return (
    header(from) +
    list.map((o, i) => templated(new Document(o, YAML_OPTIONS), [LABELS, ...holesOf(o, i)])).join('---\n')
  );
}

function crds(): string {
  return objects(
    'src/webhook/crd (the same CRDs as crds/)',
    customResourceDefinitions().map((crd) => ({
      ...crd,
      // Uninstalling the chart must not delete every ServiceExport and ServiceImport of the cluster.
      metadata: { ...crd.metadata, annotations: { ...crd.metadata.annotations, 'helm.sh/resource-policy': 'keep' } },
    })),
    () => [CA_INJECTION, caBundle(['spec', 'conversion', 'webhook', 'clientConfig'])],
  );
}

function admissionWebhooks(): string {
  const configs = webhookConfigurations();
  return objects('src/webhook/registration/webhook-configurations.ts', configs, (_, i) => [
    CA_INJECTION,
    ...configs[i]!.webhooks.map((_w, j) => caBundle(['webhooks', j, 'clientConfig'])),
  ]);
}

function packageVersion(): string {
  return (JSON.parse(source('package.json')) as { version: string }).version;
}

function chartYaml(): string {
  const version = packageVersion();
  return (
    header('package.json') +
    stringify({
      apiVersion: 'v2',
      name: 'mcs-cloudmap',
      description:
        'Kubernetes Multi-Cluster Services API (KEP-1645) on AWS Cloud Map: CRDs, admission and conversion webhooks, reconcile worker',
      type: 'application',
      version,
      appVersion: version,
      // admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy, which bounds the worker's writes (I7).
      kubeVersion: '>=1.30.0-0',
      keywords: ['multicluster', 'mcs-api', 'kep-1645', 'aws', 'cloudmap'],
    })
  );
}

interface ContainerDefaults {
  replicas: number;
  resources: unknown;
}

function deploymentDefaults(file: string): ContainerDefaults {
  const d = parseAllDocuments(source(file))
    .map(
      (x) =>
        x.toJS() as {
          kind: string;
          spec: { replicas: number; template: { spec: { containers: { resources: unknown }[] } } };
        },
    )
    .find((x) => x.kind === 'Deployment')!;
  return { replicas: d.spec.replicas, resources: d.spec.template.spec.containers[0]!.resources };
}

function indented(value: unknown, spaces: number): string {
  return stringify(value)
    .trimEnd()
    .split('\n')
    .map((l) => ' '.repeat(spaces) + l)
    .join('\n');
}

function valuesYaml(): string {
  const webhook = deploymentDefaults('kustomize/base/webhook.yaml');
  const worker = deploymentDefaults('kustomize/base/worker.yaml');
  return `${header('kustomize/chart.ts (defaults from kustomize/base)')}# Every value is explained in docs/install.md ("Install with Helm"); values.schema.json checks them.

# KEP-2149 cluster identity (C1-C4), written as the ClusterProperties cluster.clusterset.k8s.io and clusterset.k8s.io
# (from the second \`helm upgrade --install\` on: the first one installs their CRD). clusterId is a DNS label unique in
# the ClusterSet, clusterSetId the same in every member. Empty: you create the ClusterProperties yourself. The webhook
# refuses changing either while the cluster has ServiceExports (C3); uninstalling the chart keeps them.
clusterId: ""
clusterSetId: ""

# One image runs either process (Dockerfile at the repository root).
image:
  repository: mcs-cloudmap
  # Empty: the chart's appVersion.
  tag: ""
  pullPolicy: IfNotPresent

aws:
  # Region of the Cloud Map namespaces, the same in every cluster. Empty: the AWS SDK's default (AWS_REGION).
  region: ""
  # How the worker gets AWS credentials; only the worker calls AWS, the webhook server has no AWS identity.
  #   none: whatever the AWS SDK finds (node role, environment).
  #   irsa: IAM roles for service accounts; roleArn becomes the worker ServiceAccount's eks.amazonaws.com/role-arn.
  #   podIdentity: EKS Pod Identity; associate roleArn with the worker ServiceAccount (the notes print the command).
  iam:
    mode: none
    roleArn: ""

# What the webhook does when an export conflicts with the ClusterSet's ServiceImport (X1-X3).
conflictPolicy: ${webhookOptionSpecs.conflictPolicy.default}
logLevel: ${webhookOptionSpecs.logLevel.default}
# Any other setting of docs/configuration.md, by environment variable, e.g. MCS_POLL_INTERVAL: 2s
config: {}

webhook:
  replicas: ${webhook.replicas}
  resources:
${indented(webhook.resources, 4)}
  # A NetworkPolicy that lets only these peers reach the webhook server's HTTPS port, as
  # kustomize/components/webhook-network-policy does: the kube-apiserver, by ipBlock (it does not connect from a pod).
  # Needs a network plugin that enforces NetworkPolicies; see docs/install.md, "Who can call the webhook server".
  networkPolicy:
    enabled: false
    from: []

worker:
  replicas: ${worker.replicas}
  resources:
${indented(worker.resources, 4)}
  serviceAccount:
    # Added to the worker's ServiceAccount (after the IRSA annotation, if any).
    annotations: {}

tls:
  # The webhook server's serving certificate and the CA in the webhook configurations and CRD conversion stanzas:
  #   certManager: cert-manager (installed separately) issues it, as kustomize/components/cert-manager does.
  #   selfSigned: the chart generates a CA and certificate (10 years) and keeps them across upgrades; no cert-manager.
  #   secret: you create Secret mcs-cloudmap-webhook-tls (tls.crt, tls.key) and give its CA below.
  mode: certManager
  # PEM CA of the secret mode, base64-encoded.
  caBundle: ""

# Lets CoreDNS read ServiceImports for clusterset.local (D1-D3), as kustomize/components/coredns-multicluster does.
# The Corefile stays yours: add clusterset.local and "multicluster clusterset.local" to its kubernetes plugin (stock
# CoreDNS 1.12.2 or newer), docs/install.md.
coredns:
  enabled: false

# Monitoring with the Prometheus Operator and Grafana, as kustomize/components/monitoring does (docs/monitoring.md).
# podMonitor and prometheusRule need the Prometheus Operator's CRDs; labels: what your Prometheus selects them by
# (kube-prometheus-stack: release: <its release name>).
monitoring:
  podMonitor:
    enabled: false
    labels: {}
  prometheusRule:
    enabled: false
    labels: {}
  # A ConfigMap with the Grafana dashboard, labelled grafana_dashboard: "1" for Grafana's dashboard sidecar; namespace:
  # where the sidecar looks (empty: the release's).
  dashboard:
    enabled: false
    namespace: ""
`;
}

function valuesSchema(): string {
  const resources = {
    type: 'object',
    properties: { requests: { type: 'object' }, limits: { type: 'object' } },
    additionalProperties: false,
  };
  const labelledSwitch = {
    type: 'object',
    additionalProperties: false,
    properties: { enabled: { type: 'boolean' }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
  };
  const processValues = (extra: Record<string, unknown> = {}) => ({
    type: 'object',
    additionalProperties: false,
    properties: { replicas: { type: 'integer', minimum: 0 }, resources, ...extra },
  });
  const schema = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'mcs-cloudmap chart values (generated by `npm run manifests` from kustomize/chart.ts)',
    type: 'object',
    additionalProperties: false,
    properties: {
      clusterId: {
        type: 'string',
        maxLength: 63,
        pattern: `^$|${DNS_LABEL.source}`,
        description: "This cluster's id: an RFC 1123 DNS label unique in the ClusterSet (C2).",
      },
      clusterSetId: { type: 'string', pattern: '^\\S*$' },
      image: {
        type: 'object',
        additionalProperties: false,
        properties: {
          repository: { type: 'string', minLength: 1 },
          tag: { type: 'string' },
          pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] },
        },
      },
      aws: {
        type: 'object',
        additionalProperties: false,
        properties: {
          region: { type: 'string', pattern: '^$|^[a-z]{2}(-[a-z]+)+-\\d$' },
          iam: {
            type: 'object',
            additionalProperties: false,
            properties: {
              mode: { enum: ['none', 'irsa', 'podIdentity'] },
              roleArn: { type: 'string', pattern: '^$|^arn:aws[a-z-]*:iam::\\d{12}:role/.+$' },
            },
            if: { properties: { mode: { enum: ['irsa', 'podIdentity'] } } },
            then: { properties: { roleArn: { minLength: 1 } } },
          },
        },
      },
      conflictPolicy: { enum: webhookOptionSpecs.conflictPolicy.choices },
      logLevel: { enum: workerOptionSpecs.logLevel.choices },
      config: {
        type: 'object',
        additionalProperties: { type: 'string' },
        propertyNames: { pattern: '^MCS_[A-Z0-9_]+$', not: { enum: Object.keys(VALUED_SETTINGS) } },
        description:
          'MCS_* settings (docs/configuration.md); those with a value of their own (logLevel, conflictPolicy, aws.region) and MCS_WORKER_SERVICE_ACCOUNT are not accepted here.',
      },
      webhook: processValues({
        networkPolicy: {
          type: 'object',
          additionalProperties: false,
          properties: { enabled: { type: 'boolean' }, from: { type: 'array', items: { type: 'object' } } },
          // Enabled without peers would admit no apiserver, and every guarded write would be refused.
          if: { properties: { enabled: { const: true } } },
          then: { properties: { from: { minItems: 1 } } },
        },
      }),
      worker: processValues({
        serviceAccount: {
          type: 'object',
          additionalProperties: false,
          properties: { annotations: { type: 'object', additionalProperties: { type: 'string' } } },
        },
      }),
      tls: {
        type: 'object',
        additionalProperties: false,
        properties: { mode: { enum: ['certManager', 'selfSigned', 'secret'] }, caBundle: { type: 'string' } },
        if: { properties: { mode: { const: 'secret' } } },
        then: { properties: { caBundle: { minLength: 1 } } },
      },
      coredns: { type: 'object', additionalProperties: false, properties: { enabled: { type: 'boolean' } } },
      monitoring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          podMonitor: labelledSwitch,
          prometheusRule: labelledSwitch,
          dashboard: {
            type: 'object',
            additionalProperties: false,
            properties: {
              enabled: { type: 'boolean' },
              namespace: { type: 'string', pattern: `^$|${DNS_LABEL.source}` },
            },
          },
        },
      },
    },
  };
  return JSON.stringify(schema, null, 2) + '\n';
}

const MONITORING = 'kustomize/components/monitoring/';

/** A monitoring object of the component, behind `monitoring.<value>.enabled`, with the release's extra labels. */
function monitoringObject(file: string, value: string): string {
  const labels: Hole = {
    within: ['metadata', 'labels'],
    line: (i) => `{{- with .Values.monitoring.${value}.labels }}{{- toYaml . | nindent ${i} }}{{- end }}`,
  };
  return fromYamlFile(MONITORING + file, (doc) => [...baseHoles(doc), labels], `.Values.monitoring.${value}.enabled`);
}

interface GeneratedConfigMap {
  name: string;
  namespace: string;
  files: string[];
  options?: { labels?: Record<string, string> };
}

/**
 * The dashboard ConfigMap, as the component's configMapGenerator makes it: its name and labels, and its one file,
 * rendered from kustomize/dashboard.ts as `npm run manifests` writes it there.
 */
function dashboardConfigMap(): string {
  const generator = (parse(source(`${MONITORING}kustomization.yaml`)) as { configMapGenerator: GeneratedConfigMap[] })
    .configMapGenerator[0]!;
  const data = { [basename(generator.files[0]!)]: renderDashboard() };
  const doc = new Document(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: generator.name, namespace: generator.namespace, labels: generator.options?.labels ?? {} },
      data,
    },
    YAML_OPTIONS,
  );
  const body = templated(doc, [
    LABELS,
    {
      path: ['metadata', 'namespace'],
      value: scalar('.Values.monitoring.dashboard.namespace | default .Release.Namespace'),
    },
  ]);
  return (
    header(`${MONITORING}kustomization.yaml (its configMapGenerator)`) +
    `{{- if .Values.monitoring.dashboard.enabled }}\n${body}{{- end }}\n`
  );
}

/** Chart file (relative to CHART_DIR) → its text. */
export function renderChart(): Map<string, string> {
  return new Map([
    ['Chart.yaml', chartYaml()],
    ['values.yaml', valuesYaml()],
    ['values.schema.json', valuesSchema()],
    ['templates/crds.yaml', crds()],
    ['templates/webhook-configurations.yaml', admissionWebhooks()],
    ['templates/config.yaml', configMap()],
    ['templates/rbac-worker.yaml', fromYamlFile('kustomize/base/rbac-worker.yaml', baseHoles)],
    ['templates/worker-policy.yaml', objects('kustomize/worker-policy.ts', workerPolicy(), () => [])],
    ['templates/rbac-webhook.yaml', fromYamlFile('kustomize/base/rbac-webhook.yaml', baseHoles)],
    ['templates/rbac-status.yaml', fromYamlFile('kustomize/base/rbac-status.yaml', baseHoles)],
    ['templates/webhook.yaml', fromYamlFile('kustomize/base/webhook.yaml', baseHoles)],
    ['templates/worker.yaml', fromYamlFile('kustomize/base/worker.yaml', baseHoles)],
    [
      'templates/cert-manager-issuers.yaml',
      fromYamlFile('kustomize/components/cert-manager/issuers.yaml', baseHoles, 'eq .Values.tls.mode "certManager"'),
    ],
    [
      'templates/cert-manager-certificate.yaml',
      fromYamlFile(
        'kustomize/components/cert-manager/certificate.yaml',
        baseHoles,
        'eq .Values.tls.mode "certManager"',
      ),
    ],
    [
      'templates/coredns-rbac.yaml',
      fromYamlFile('kustomize/components/coredns-multicluster/rbac.yaml', baseHoles, '.Values.coredns.enabled'),
    ],
    [
      'templates/webhook-network-policy.yaml',
      fromYamlFile(
        'kustomize/components/webhook-network-policy/network-policy.yaml',
        (doc) => [
          ...baseHoles(doc),
          { path: ['spec', 'ingress', 0, 'from'], value: block('toYaml .Values.webhook.networkPolicy.from') },
        ],
        '.Values.webhook.networkPolicy.enabled',
      ),
    ],
    ['templates/monitoring-pod-monitor.yaml', monitoringObject('pod-monitor.yaml', 'podMonitor')],
    ['templates/monitoring-prometheus-rule.yaml', monitoringObject('prometheus-rule.yaml', 'prometheusRule')],
    ['templates/monitoring-dashboard.yaml', dashboardConfigMap()],
  ]);
}
