// Cluster identity rules of KEP-2149 (C2, C5): what a cluster id may look like and which ClusterProperty names are reserved.

import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from './names.ts';

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
