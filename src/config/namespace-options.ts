// The flags that choose which Cloud Map namespace, HTTP or private DNS, holds each Kubernetes namespace
// (src/core/namespace-naming.ts). The worker and `mcs-cloudmap status` read the same ones, under the same names and
// variables, so one environment gives both the same naming.
import { enumOption, stringOption } from './options.ts';

export const namespaceKindOptionSpecs = {
  cloudMapNamespaceType: enumOption(
    'cloudmap-namespace-type',
    'MCS_CLOUDMAP_NAMESPACE_TYPE',
    'http',
    ['http', 'dns'] as const,
    'Kind of Cloud Map namespace of every Kubernetes namespace: http (the namespace of the same name, discovered by API only) or dns (the private DNS namespace <namespace>.<--dns-namespace-domain>, whose services Cloud Map also keeps Route 53 records of, so <service>.<namespace>.<domain> resolves in the VPC). Every cluster of the ClusterSet must be given the same.',
  ),
  dnsNamespaces: stringOption(
    'dns-namespaces',
    'MCS_DNS_NAMESPACES',
    '',
    'Comma-separated Kubernetes namespaces that use private DNS namespaces although --cloudmap-namespace-type is http. Every cluster of the ClusterSet must be given the same.',
  ),
  dnsNamespaceDomain: stringOption(
    'dns-namespace-domain',
    'MCS_DNS_NAMESPACE_DOMAIN',
    '',
    'Domain of the private DNS namespaces, e.g. mcs.example.internal: Kubernetes namespace ns is the Cloud Map namespace ns.<domain>. Needed with DNS namespaces.',
  ),
};

/** The names in a comma-separated list, without blanks. */
export function listed(text: string): string[] {
  return text
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
}
