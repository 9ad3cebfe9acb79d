// The in-cluster install (kustomize/base) adapted for processes running on the host: the same CRDs, namespace, service
// accounts, RBAC and ConfigMap, with the Deployments and the webhook Service left out and every webhook stanza pointed at
// a URL with its own CA instead of the in-cluster Service. What the demo runs is therefore what a cluster gets.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { clientConfig, CONVERT_PATH, type WebhookTarget } from '../../src/webhook/registration/client-config.ts';
import { webhookConfigurations } from '../../src/webhook/registration/webhook-configurations.ts';
import { kubectlBinary } from '../testbed/paths.ts';

export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [key: string]: unknown;
};

const REPO = join(import.meta.dirname, '..', '..');
/** Kinds of the base that the host processes need in the cluster; the rest run on the host instead. */
const KEPT_KINDS = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
  'ConfigMap',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

export function kustomizeBase(): Manifest[] {
  const out = execFileSync(kubectlBinary(), ['kustomize', join(REPO, 'kustomize', 'base')], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return parseAllDocuments(out)
    .map((d) => d.toJSON() as Manifest)
    .filter((m) => m !== null);
}

/** The mcs-cloudmap-config ConfigMap's data: the settings both Deployments read with envFrom. */
export function configMapEnv(base: Manifest[]): Record<string, string> {
  const cm = base.find((m) => m.kind === 'ConfigMap' && m.metadata.name.startsWith('mcs-cloudmap-config'));
  if (!cm)
    throw new Error('kustomize/base has no mcs-cloudmap-config ConfigMap: the local processes would run unconfigured');
  return { ...(cm.data as Record<string, string>) };
}

/** Objects to apply to a cluster so host processes behave like the in-cluster Deployments, webhooks served at `target`. */
export function hostInstallManifests(base: Manifest[], target: WebhookTarget): Manifest[] {
  const kept = base
    .filter((m) => KEPT_KINDS.has(m.kind))
    .map((m) => {
      if (m.kind !== 'CustomResourceDefinition') return m;
      const spec = structuredClone(m.spec) as { conversion?: { webhook?: { clientConfig?: unknown } } };
      if (spec.conversion?.webhook) spec.conversion.webhook.clientConfig = clientConfig(target, CONVERT_PATH);
      // cert-manager is not there to inject a CA; the URL target carries its own.
      const annotations = { ...(m.metadata as { annotations?: Record<string, string> }).annotations };
      delete annotations['cert-manager.io/inject-ca-from'];
      return { ...m, metadata: { ...m.metadata, annotations }, spec };
    });
  return [...kept, ...(webhookConfigurations(target) as unknown as Manifest[])];
}

/**
 * The Node.js flags in the command of the base's Deployment `name` (`[node, <flags>, dist/...js]`), so that a host
 * process measured against the image runs with the same ones.
 */
export function deploymentNodeFlags(base: Manifest[], name: string): string[] {
  const deployment = base.find((m) => m.kind === 'Deployment' && m.metadata.name === name);
  const command = (
    deployment?.spec as { template?: { spec?: { containers?: Array<{ command?: string[] }> } } } | undefined
  )?.template?.spec?.containers?.[0]?.command;
  if (!command || command[0] !== 'node')
    throw new Error(`kustomize/base has no Deployment ${name} whose command starts with node`);
  return command.slice(1, -1);
}
