// How the apiserver reaches the webhook server: the in-cluster Service (installed), or a URL with its CA (tests, demo,
// where the server runs on the host). Shared by the CRD conversion stanzas and the admission webhook configurations.

import { SYSTEM_NAMESPACE, WEBHOOK_CERTIFICATE_NAME, WEBHOOK_SERVICE_NAME } from '../../core/names.ts';

export type WebhookTarget =
  | { service: { namespace: string; name: string; port?: number }; caBundle?: string }
  | { url: string; caBundle: string };

export const IN_CLUSTER: WebhookTarget = {
  service: { namespace: SYSTEM_NAMESPACE, name: WEBHOOK_SERVICE_NAME, port: 443 },
};

export const VALIDATE_PATH = '/validate';
export const MUTATE_PATH = '/mutate';
export const CONVERT_PATH = '/convert';

/** `clientConfig` of a webhook or conversion stanza for `path` on `target`. */
export function clientConfig(target: WebhookTarget, path: string): Record<string, unknown> {
  const caBundle = target.caBundle === undefined ? {} : { caBundle: target.caBundle };
  if ('url' in target) return { url: target.url + path, ...caBundle };
  return { service: { ...target.service, path }, ...caBundle };
}

/** cert-manager's cainjector fills caBundle for the in-cluster Service form; a URL target brings its own CA. */
export function caInjectionAnnotations(target: WebhookTarget): Record<string, string> {
  return 'url' in target ? {} : { 'cert-manager.io/inject-ca-from': `${SYSTEM_NAMESPACE}/${WEBHOOK_CERTIFICATE_NAME}` };
}
