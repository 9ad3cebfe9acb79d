// Cluster identity rules of KEP-2149 (C1, C2, C5): which ClusterProperties a cluster needs before anything moves, what a
// cluster id may look like and which ClusterProperty names are reserved. The webhook server, the worker and the status
// command all judge and word C1 with the functions below.

import { ABOUT_GROUP, CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY, STORAGE_VERSION } from './names.ts';

/** C1: the well-known ClusterProperties a cluster lacks (absent, or with an empty value): cluster id first. */
export function missingIdentityProperties(clusterId: string | undefined, clustersetId: string | undefined): string[] {
  return [...(clusterId ? [] : [CLUSTER_ID_PROPERTY]), ...(clustersetId ? [] : [CLUSTERSET_ID_PROPERTY])];
}

const PLACEHOLDER: Record<string, string> = {
  [CLUSTER_ID_PROPERTY]: '<this-cluster-id>',
  [CLUSTERSET_ID_PROPERTY]: '<clusterset-id>',
};

/** A one-line shell command creating the ClusterProperty `name`, with a placeholder value to fill in. */
export function createPropertyCommand(name: string): string {
  const object = {
    apiVersion: `${ABOUT_GROUP}/${STORAGE_VERSION}`,
    kind: 'ClusterProperty',
    metadata: { name },
    spec: { value: PLACEHOLDER[name] ?? '<value>' },
  };
  return `echo '${JSON.stringify(object)}' | kubectl apply -f -`;
}

/**
 * C1's message, the same wherever it is shown (admission denial, ServiceExport condition and Event, status command):
 * which properties are missing, what that means and the commands that create them (last, so they can be copied), after
 * `note` if given. Starts lower-case, to follow a prefix such as "ServiceExport demo/web cannot be accepted: ".
 */
export function missingIdentityMessage(missing: readonly string[], note = ''): string {
  const what = missing.map((name) => `ClusterProperty ${name}`).join(' and ');
  return (
    `this cluster has no ${what} yet, so it has no identity in a ClusterSet and nothing is exported or imported (C1). ${note}` +
    `Create ${missing.length > 1 ? 'them' : 'it'} first, for example: ${missing.map(createPropertyCommand).join(' ; ')}`
  );
}

const MAX_DNS_LABEL_LENGTH = 63;
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * C2: the cluster id is used as a label value and a DNS label, so it must be an RFC 1123 DNS label.
 * Returns undefined when valid, otherwise a one-sentence message that says how to fix the ClusterProperty.
 */
export function validateClusterId(id: string): string | undefined {
  const where = `spec.value of ClusterProperty ${CLUSTER_ID_PROPERTY}`;
  if (id.length === 0) {
    return `The cluster id is empty: set ${where} to a DNS label such as "cluster-1".`;
  }
  if (id.length > MAX_DNS_LABEL_LENGTH) {
    return `The cluster id "${id}" is ${id.length} characters long: set ${where} to at most ${MAX_DNS_LABEL_LENGTH} characters.`;
  }
  if (!DNS_LABEL.test(id)) {
    const suggestion = suggestDnsLabel(id);
    const example = suggestion === undefined ? '' : ` (for example "${suggestion}")`;
    return `The cluster id "${id}" is not an RFC 1123 DNS label: set ${where} to lowercase letters, digits and '-', starting and ending with a letter or digit${example}.`;
  }
  return undefined;
}

/** The closest valid DNS label to `id`, offered in error messages; undefined when nothing usable is left. */
function suggestDnsLabel(id: string): string | undefined {
  const label = id
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, MAX_DNS_LABEL_LENGTH)
    .replace(/^-+|-+$/g, '');
  return DNS_LABEL.test(label) ? label : undefined;
}

/** C5: names ending in `.k8s.io` or `.kubernetes.io` (or those domains themselves) are reserved for well-known properties. */
export function isReservedPropertyName(name: string): boolean {
  return /(^|\.)(k8s\.io|kubernetes\.io)$/.test(name);
}

/** C1: the two well-known ClusterProperty names this controller reads. */
export function isWellKnownPropertyName(name: string): boolean {
  return name === CLUSTER_ID_PROPERTY || name === CLUSTERSET_ID_PROPERTY;
}
