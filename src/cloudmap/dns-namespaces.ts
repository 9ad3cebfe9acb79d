// The Route 53 records Cloud Map keeps for a service of a private DNS namespace (CreateService's DnsConfig): A and/or
// AAAA records of every instance's AWS_INSTANCE_IPV4/IPV6, MULTIVALUE routing (Route 53 answers up to eight healthy
// records, chosen at random). No SRV: Cloud Map does not combine SRV with A or AAAA in one service, and an SRV record
// needs AWS_INSTANCE_PORT on every instance, which our service-level instances do not carry (docs/non-kubernetes.md).
import type { DnsConfig } from '@aws-sdk/client-servicediscovery';
import type { DnsNamespaceSettings } from '../core/namespace-naming.ts';

export function dnsConfig(settings: DnsNamespaceSettings): DnsConfig {
  return {
    RoutingPolicy: 'MULTIVALUE',
    DnsRecords: settings.recordTypes
      .split(',')
      .map((Type) => ({ Type: Type as 'A' | 'AAAA', TTL: settings.ttlSeconds })),
  };
}
