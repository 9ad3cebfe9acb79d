// Flags of `mcs-cloudmap status`, each with an MCS_* environment fallback (same names as the worker's where they mean
// the same thing, so one environment serves both).
import {
  boolOption,
  ConfigError,
  enumOption,
  formatHelp,
  parseOptions,
  regionListOption,
  stringOption,
  type OptionValues,
} from '../config/options.ts';
import { listed, namespaceKindOptionSpecs } from '../config/namespace-options.ts';
import { namespaceNaming, type NamespaceNaming } from '../core/namespace-naming.ts';

export const statusOptionSpecs = {
  kubeconfig: stringOption(
    'kubeconfig',
    'MCS_KUBECONFIG',
    '',
    "Path of the kubeconfig, or several separated by ':' (merged, as kubectl does with $KUBECONFIG); empty: $KUBECONFIG, then ~/.kube/config.",
  ),
  context: stringOption(
    'context',
    'MCS_CONTEXT',
    '',
    'Comma-separated kubeconfig contexts to inspect, one per cluster of the ClusterSet; empty: the current context of each kubeconfig file given.',
  ),
  cloudMap: boolOption(
    'cloudmap',
    'MCS_STATUS_CLOUDMAP',
    true,
    'Also show the Cloud Map instances of the same services (needs AWS credentials); false shows the clusters only.',
  ),
  cloudMapEndpoint: stringOption(
    'cloudmap-endpoint',
    'MCS_CLOUDMAP_ENDPOINT',
    '',
    'Cloud Map API endpoint URL; empty: the AWS endpoint of the region.',
  ),
  region: stringOption('region', 'MCS_AWS_REGION', '', 'AWS region of the Cloud Map namespaces; empty: AWS_REGION.'),
  regions: regionListOption(
    'regions',
    'MCS_REGIONS',
    "Comma-separated further AWS Regions of the ClusterSet whose Cloud Map is read too (the worker's --regions); the table then shows each cluster id's Regions.",
  ),
  namespaceOwnerAccount: stringOption(
    'namespace-owner-account',
    'MCS_NAMESPACE_OWNER_ACCOUNT',
    '',
    "AWS account owning the ClusterSet's namespaces when they are shared with yours through AWS RAM (the worker's flag of the same name); empty: your own.",
  ),
  ...namespaceKindOptionSpecs,
  output: enumOption(
    'output',
    'MCS_OUTPUT',
    'table',
    ['table', 'json'] as const,
    'table for people, json for programs.',
  ),
};

export type StatusOptions = OptionValues<typeof statusOptionSpecs>;

export function parseStatusOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): StatusOptions {
  const o = parseOptions(statusOptionSpecs, argv, env);
  statusNaming(o);
  return o;
}

/** Where the status command looks for each namespace's services: the names the worker gives them (it only reads). */
export function statusNaming(o: StatusOptions): NamespaceNaming {
  try {
    return namespaceNaming({
      type: o.cloudMapNamespaceType,
      dnsNamespaces: listed(o.dnsNamespaces),
      // Record types, TTL and VPC matter to creators only.
      dns: { domain: o.dnsNamespaceDomain, vpc: '', recordTypes: 'A', ttlSeconds: 0 },
    });
  } catch (err) {
    throw new ConfigError(`--dns-namespace-domain: ${(err as Error).message}`);
  }
}

export function statusHelp(): string {
  return [
    formatHelp(
      'mcs-cloudmap status: exports, imports and Cloud Map instances of a ClusterSet, per namespace.',
      statusOptionSpecs,
    ),
    '',
    'mcs-cloudmap --version prints the version.',
    'Exit status: 0 when every cluster (and Cloud Map) could be read, 1 when one could not, 2 on bad flags.',
    'Example: mcs-cloudmap status --context cls1,cls2 --region us-west-2',
  ].join('\n');
}
