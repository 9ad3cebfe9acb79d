// Which Cloud Map namespace holds a Kubernetes namespace's exports, and of which kind (docs/non-kubernetes.md,
// "Exports that resolve outside Kubernetes"). By default a Kubernetes namespace `ns` is the Cloud Map HTTP namespace
// `ns` (M1). A Kubernetes namespace chosen for DNS is the private DNS namespace `<ns>.<domain>` instead: Cloud Map keeps
// Route 53 records for its instances, so `<svc>.<ns>.<domain>` resolves anywhere in the VPC. Every cluster of a
// ClusterSet must be given the same choice: importers find a service by its Cloud Map namespace's name.

/** A DNS label (RFC 1123): what a Kubernetes namespace name is, and what each part of a DNS namespace's name must be. */
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
/** Longest name of a DNS namespace whose services' names (labels of up to 63) still fit a 253-character DNS name. */
const MAX_NAMESPACE_NAME = 253 - 64;

export type DnsRecordTypes = 'A' | 'AAAA' | 'A,AAAA';

export interface DnsNamespaceSettings {
  /** The domain every DNS namespace's name ends in, e.g. `mcs.example.internal`. */
  readonly domain: string;
  /** The VPC a new namespace is created in (CreatePrivateDnsNamespace's Vpc); only a creator needs it. */
  readonly vpc: string;
  /** The record types of each service (DnsConfig.DnsRecords): A for IPv4 endpoints, AAAA for IPv6, or both. */
  readonly recordTypes: DnsRecordTypes;
  /** TTL of those records, in seconds. */
  readonly ttlSeconds: number;
}

export interface NamespaceNaming {
  /** The Cloud Map namespace name of Kubernetes namespace `namespace` (or of our own namespaces, e.g. the markers'). */
  cloudMapName(namespace: string): string;
  /** The Kubernetes namespace a Cloud Map namespace name stands for; undefined when this naming never gives it. */
  namespaceOf(cloudMapName: string): string | undefined;
  /** The DNS settings when `namespace` lives in a private DNS namespace; undefined for an HTTP namespace. */
  dns(namespace: string): DnsNamespaceSettings | undefined;
}

/** Every namespace an HTTP namespace of the same name (the default, M1). */
export const HTTP_NAMING: NamespaceNaming = {
  cloudMapName: (namespace) => namespace,
  namespaceOf: (cloudMapName) => cloudMapName,
  dns: () => undefined,
};

export interface NamingChoice {
  /** `dns`: every Kubernetes namespace in a DNS namespace; `http`: only those listed in `dnsNamespaces`. */
  readonly type: 'http' | 'dns';
  /** Kubernetes namespaces in DNS namespaces whatever `type` says. */
  readonly dnsNamespaces: readonly string[];
  /** Needed as soon as any namespace is a DNS one. */
  readonly dns?: DnsNamespaceSettings;
}

/** What is wrong with `domain` as the domain of DNS namespaces, or undefined when it is fine. */
export function domainProblem(domain: string): string | undefined {
  if (domain === '') return 'is empty';
  const labels = domain.split('.');
  const bad = labels.find((l) => !DNS_LABEL.test(l));
  if (bad !== undefined) return `has "${bad}", which is not a lowercase DNS label (a-z, 0-9, "-", at most 63)`;
  if (domain.length + 64 > MAX_NAMESPACE_NAME)
    return `is ${domain.length} characters long; a Kubernetes namespace's name of up to 63 before it must still fit ${MAX_NAMESPACE_NAME}`;
  return undefined;
}

/**
 * The naming of a choice; throws an Error that names the setting to fix when a DNS namespace is asked for without a
 * usable domain. Names that are not DNS labels (our change markers' namespace) always stay HTTP namespaces.
 */
export function namespaceNaming(choice: NamingChoice): NamespaceNaming {
  const listed = new Set(choice.dnsNamespaces);
  if (choice.type === 'http' && listed.size === 0) return HTTP_NAMING;
  const settings = choice.dns;
  if (settings === undefined) throw new Error('a DNS namespace needs a domain');
  const problem = domainProblem(settings.domain);
  if (problem !== undefined) throw new Error(`the DNS namespaces' domain "${settings.domain}" ${problem}`);
  const bad = [...listed].find((n) => !DNS_LABEL.test(n));
  if (bad !== undefined) throw new Error(`"${bad}" is not a Kubernetes namespace name`);
  const isDns = (namespace: string) => DNS_LABEL.test(namespace) && (choice.type === 'dns' || listed.has(namespace));
  const suffix = `.${settings.domain}`;
  return {
    cloudMapName: (namespace) => (isDns(namespace) ? `${namespace}${suffix}` : namespace),
    namespaceOf: (cloudMapName) => {
      if (cloudMapName.endsWith(suffix)) {
        const namespace = cloudMapName.slice(0, -suffix.length);
        if (isDns(namespace)) return namespace;
      }
      return isDns(cloudMapName) ? undefined : cloudMapName;
    },
    dns: (namespace) => (isDns(namespace) ? settings : undefined),
  };
}
