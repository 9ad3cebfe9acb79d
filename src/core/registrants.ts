// Members of a multi-cluster service that are not Kubernetes clusters (I9–I12, docs/non-kubernetes.md): instances that
// ECS service discovery, or anything else using Cloud Map's standard instance attributes, registered in a Cloud Map
// service the platform team opted in. Each group of them becomes one cluster-like ClusterExport, so the import side
// (conflicts, derived Service, EndpointSlices, status.clusters) treats it as it treats a cluster.
//
// - Member name (I10): `ecs.<ECS_CLUSTER_NAME>` for ECS tasks, `cloudmap.instances` for every other registrant. Cluster
//   ids are DNS labels (C2), so a name with a dot never collides with a Kubernetes cluster.
// - Ports (I11): AWS_INSTANCE_PORT, TCP, unnamed. The Service port is the member's lowest AWS_INSTANCE_PORT; each
//   endpoint keeps its own (ECS bridge networking gives tasks different host ports).
// - Readiness (I11): the health status DiscoverInstances returns (custom health checks, Route 53 health checks,
//   AWS_INIT_HEALTH_STATUS at registration): ready unless UNHEALTHY, as Cloud Map itself routes to every instance of a
//   service without a health check.
// - Zone (I11): AVAILABILITY_ZONE, for trafficDistribution.
// - Conflicts (I12): such a member states ports only (portsOnly), so it agrees with every cluster on type, session
//   affinity, traffic policies, labels and annotations, and it is the newest member: a Kubernetes export of the same
//   name always wins those properties.
import { isIP } from 'node:net';
import { ATTR } from './cloudmap-attributes.ts';
import { compareText, normalizeClusterExport } from './cluster-export.ts';
import { hashedName, shortHash } from './hashed-names.ts';
import type { CloudMapInstance, ClusterExport, ExportedEndpoint } from './types.ts';

/** An instance as DiscoverInstances returns it with HealthStatus=ALL: with its health status, when Cloud Map gave one. */
export interface RegistrantInstance extends CloudMapInstance {
  health?: string;
}

/** Attributes ECS service discovery writes on each task's instance (ECS developer guide, "Service discovery"). */
export const ECS_ATTR = {
  CLUSTER_NAME: 'ECS_CLUSTER_NAME',
  SERVICE_NAME: 'ECS_SERVICE_NAME',
  TASK_DEFINITION_FAMILY: 'ECS_TASK_DEFINITION_FAMILY',
  AVAILABILITY_ZONE: 'AVAILABILITY_ZONE',
} as const;

/** The member name of every registrant that is not an ECS task. */
export const GENERIC_MEMBER = 'cloudmap.instances';
const ECS_PREFIX = 'ecs.';
/** Label values (EndpointSlice source-cluster label): at most 63, alphanumeric at both ends, `-_.` inside. */
const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** After every Kubernetes export (X1): a registrant never wins a property over a cluster. */
export const REGISTRANT_PRECEDENCE = Number.MAX_SAFE_INTEGER;

/** I10: the member an instance belongs to, stable across tasks and restarts; usable as a label value. */
export function memberName(attributes: Readonly<Record<string, string>>): string {
  const ecsCluster = attributes[ECS_ATTR.CLUSTER_NAME];
  if (ecsCluster === undefined || ecsCluster === '') return GENERIC_MEMBER;
  const plain = `${ECS_PREFIX}${ecsCluster}`;
  if (LABEL_VALUE.test(plain)) return plain;
  return `${ECS_PREFIX}${hashedName(ecsCluster, shortHash([ecsCluster]), undefined, 63 - ECS_PREFIX.length)}`;
}

/** True for an instance an MCS controller wrote (it names its cluster): those are read as cluster exports instead. */
export function isClusterInstance(instance: CloudMapInstance): boolean {
  return instance.attributes[ATTR.CLUSTER_ID] !== undefined;
}

interface Skipped {
  id: string;
  reason: string;
}

/** One instance as an endpoint, or why it cannot be one. */
function endpointOf(instance: RegistrantInstance): ExportedEndpoint | string {
  const a = instance.attributes;
  const ipv6 = a[ATTR.IPV6];
  const address = ipv6 !== undefined && ipv6 !== '' ? ipv6 : a[ATTR.IPV4];
  if (address === undefined || address === '') return `missing ${ATTR.IPV4} or ${ATTR.IPV6}`;
  if (isIP(address) === 0) return `"${address}" is not an IP address`;
  const raw = a[ATTR.PORT];
  if (raw === undefined) return `missing ${ATTR.PORT}`;
  const port = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) return `${ATTR.PORT} "${raw}" is not a port from 1 to 65535`;
  const endpoint: ExportedEndpoint = {
    address,
    ready: instance.health !== 'UNHEALTHY',
    ports: [{ name: '', protocol: 'TCP', port }],
  };
  const zone = a[ECS_ATTR.AVAILABILITY_ZONE];
  if (zone !== undefined && zone !== '') endpoint.zone = zone;
  return endpoint;
}

/**
 * I9–I12: the instances of one opted-in Cloud Map service that no MCS controller wrote, as one ClusterExport per member
 * (sorted by member name, canonical form). Instances without an address or a port are skipped with the reason; an
 * address listed twice in a member counts once (the instance with the lowest id wins, so the result does not depend
 * on Cloud Map's order).
 */
export function registrantExports(
  instances: readonly RegistrantInstance[],
  target: { clustersetId: string; namespace: string; name: string },
): { exports: ClusterExport[]; skipped: Skipped[] } {
  const skipped: Skipped[] = [];
  const members = new Map<string, Map<string, ExportedEndpoint>>();
  for (const instance of [...instances].sort((a, b) => compareText(a.id, b.id))) {
    if (isClusterInstance(instance)) continue;
    const endpoint = endpointOf(instance);
    if (typeof endpoint === 'string') {
      skipped.push({ id: instance.id, reason: endpoint });
      continue;
    }
    const member = memberName(instance.attributes);
    let endpoints = members.get(member);
    if (endpoints === undefined) members.set(member, (endpoints = new Map<string, ExportedEndpoint>()));
    if (!endpoints.has(endpoint.address)) endpoints.set(endpoint.address, endpoint);
  }
  const exports = [...members.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([clusterId, endpoints]) => {
      const list = [...endpoints.values()];
      const port = Math.min(...list.map((e) => e.ports[0]!.port));
      return normalizeClusterExport({
        ...target,
        clusterId,
        exportCreationTimestamp: REGISTRANT_PRECEDENCE,
        type: 'ClusterSetIP',
        ports: [{ name: '', protocol: 'TCP', port }],
        sessionAffinity: 'None',
        ipFamilies: [],
        exportedLabels: {},
        exportedAnnotations: {},
        portsOnly: true,
        endpoints: list,
      });
    });
  return { exports, skipped };
}
