// The ValidatingWebhookConfiguration and MutatingWebhookConfiguration that send our kinds to the webhook server, for a
// given target (in-cluster Service with cert-manager CA injection, or a URL with caBundle for tests and the demo).
// kustomize and the demo register exactly these objects, so what is tested is what is installed.

import { ABOUT_GROUP, LABEL_SERVICE_NAME, MCS_GROUP, SYSTEM_NAMESPACE } from '../../core/names.ts';
import {
  caInjectionAnnotations,
  clientConfig,
  IN_CLUSTER,
  MUTATE_PATH,
  VALIDATE_PATH,
  type WebhookTarget,
} from './client-config.ts';

export const VALIDATING_CONFIGURATION_NAME = 'mcs-cloudmap-validating';
export const MUTATING_CONFIGURATION_NAME = 'mcs-cloudmap-mutating';

export interface RegistrationOptions {
  /** Namespaces whose objects are never sent to the webhook (W3: kube-system and our own). */
  excludedNamespaces?: readonly string[];
  /** Seconds the apiserver waits for an answer; small, so a slow webhook cannot stall writes for long. */
  timeoutSeconds?: number;
}

type Operation = 'CREATE' | 'UPDATE' | 'DELETE';

interface Hook {
  name: string;
  group: string;
  resources: string[];
  operations: Operation[];
  /** Fail for what we must guard; Ignore where blocking every write cluster-wide would cost more than a missed check. */
  failurePolicy: 'Fail' | 'Ignore';
  namespaced: boolean;
  objectSelector?: Record<string, unknown>;
}

const VALIDATING_HOOKS: readonly Hook[] = [
  {
    name: 'serviceexports.validate.multicluster.x-k8s.io',
    group: MCS_GROUP,
    resources: ['serviceexports'],
    operations: ['CREATE', 'UPDATE'],
    failurePolicy: 'Fail',
    namespaced: true,
  },
  // Every Service write in the cluster passes here; only exported ones are checked, and the worker reports conflicts
  // anyway, so an unavailable webhook must not block unrelated Services.
  {
    name: 'services.validate.multicluster.x-k8s.io',
    group: '',
    resources: ['services'],
    operations: ['CREATE', 'UPDATE'],
    failurePolicy: 'Ignore',
    namespaced: true,
  },
  {
    name: 'clusterproperties.validate.about.k8s.io',
    group: ABOUT_GROUP,
    resources: ['clusterproperties'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    failurePolicy: 'Fail',
    namespaced: false,
  },
  {
    name: 'serviceimports.validate.multicluster.x-k8s.io',
    group: MCS_GROUP,
    resources: ['serviceimports', 'serviceimports/status'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    failurePolicy: 'Fail',
    namespaced: true,
  },
  {
    name: 'endpointslices.validate.multicluster.x-k8s.io',
    group: 'discovery.k8s.io',
    resources: ['endpointslices'],
    operations: ['CREATE', 'UPDATE', 'DELETE'],
    failurePolicy: 'Fail',
    namespaced: true,
    objectSelector: { matchExpressions: [{ key: LABEL_SERVICE_NAME, operator: 'Exists' }] },
  },
];

const MUTATING_HOOKS: readonly Hook[] = [
  {
    name: 'serviceexports.mutate.multicluster.x-k8s.io',
    group: MCS_GROUP,
    resources: ['serviceexports'],
    operations: ['CREATE'],
    failurePolicy: 'Fail',
    namespaced: true,
  },
];

function webhook(
  hook: Hook,
  target: WebhookTarget,
  path: string,
  options: Required<RegistrationOptions>,
): Record<string, unknown> {
  return {
    name: hook.name,
    clientConfig: clientConfig(target, path),
    rules: [
      {
        apiGroups: [hook.group],
        apiVersions: ['*'],
        resources: hook.resources,
        operations: hook.operations,
        scope: hook.namespaced ? 'Namespaced' : 'Cluster',
      },
    ],
    failurePolicy: hook.failurePolicy,
    // Requests for any served version reach us, converted to one we handle.
    matchPolicy: 'Equivalent',
    sideEffects: 'None',
    admissionReviewVersions: ['v1', 'v1beta1'],
    timeoutSeconds: options.timeoutSeconds,
    ...(hook.namespaced
      ? {
          namespaceSelector: {
            matchExpressions: [
              { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...options.excludedNamespaces] },
            ],
          },
        }
      : {}),
    ...(hook.objectSelector ? { objectSelector: hook.objectSelector } : {}),
  };
}

export interface WebhookConfiguration {
  apiVersion: 'admissionregistration.k8s.io/v1';
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration';
  metadata: { name: string; annotations?: Record<string, string> };
  webhooks: Record<string, unknown>[];
}

/** Both configurations; the in-cluster Service is the default target. */
export function webhookConfigurations(
  target: WebhookTarget = IN_CLUSTER,
  options: RegistrationOptions = {},
): WebhookConfiguration[] {
  const opts: Required<RegistrationOptions> = {
    excludedNamespaces: options.excludedNamespaces ?? ['kube-system', SYSTEM_NAMESPACE],
    timeoutSeconds: options.timeoutSeconds ?? 5,
  };
  const annotations = caInjectionAnnotations(target);
  const metadata = (name: string) => ({ name, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) });
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: metadata(VALIDATING_CONFIGURATION_NAME),
      webhooks: VALIDATING_HOOKS.map((h) => webhook(h, target, VALIDATE_PATH, opts)),
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: metadata(MUTATING_CONFIGURATION_NAME),
      webhooks: MUTATING_HOOKS.map((h) => ({ ...webhook(h, target, MUTATE_PATH, opts), reinvocationPolicy: 'Never' })),
    },
  ];
}
