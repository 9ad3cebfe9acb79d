// Plans the Cloud Map writes that make this cluster's instances equal to the desired ones (M4, E8). RegisterInstance
// creates or replaces an instance by id, so one plan is: register what is new or changed, deregister what is gone.

import { ATTR, checkInstanceLimits, KNOWN_ATTRIBUTES } from './cloudmap-attributes.ts';
import { latestById } from './instance-id.ts';
import type { CloudMapInstance } from './types.ts';

export interface DiffInstancesInput {
  /** This cluster's instances for one service (instancesForExport); each must carry this cluster's CLUSTER_ID and CLUSTERSET_ID. */
  desired: readonly CloudMapInstance[];
  /** What Cloud Map lists for the service: every cluster's instances, possibly with duplicate ids (the last one counts). */
  current: readonly CloudMapInstance[];
  clusterId: string;
  /** Two ClusterSets may share an account and reuse a cluster id: an instance is ours only if both ids match. */
  clustersetId: string;
}

/**
 * Carry out `register` before `deregister`: when the last endpoint goes, the address-less instances then exist before the
 * endpoint instances leave, so the cluster never drops out of the import's cluster list in between (I3).
 */
export interface InstancePlan {
  /** New and changed instances, with attributes other writers added to an existing instance kept. */
  register: CloudMapInstance[];
  /** Ids of this cluster's instances that are no longer desired. */
  deregister: string[];
  /** Desired ids that another writer's instance already holds: not written (M4); the caller reports them. `owner` is "<cluster> in <clusterset>". */
  blocked: Array<{ id: string; owner: string }>;
}

/**
 * K8S_CONTROLLER only records which version wrote an instance; an upgrade alone must not rewrite every instance of the
 * ClusterSet (M6), so it is written with every registration but never causes one.
 */
const IGNORED_FOR_CHANGES: ReadonlySet<string> = new Set([ATTR.K8S_CONTROLLER]);

function sameAttributes(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if (!IGNORED_FOR_CHANGES.has(key) && a[key] !== b[key]) return false;
  return true;
}

function ownerOf(instance: CloudMapInstance): string {
  const {
    [ATTR.CLUSTER_ID]: clusterId = '(no CLUSTER_ID)',
    [ATTR.CLUSTERSET_ID]: clustersetId = '(no CLUSTERSET_ID)',
  } = instance.attributes;
  return `${clusterId} in ${clustersetId}`;
}

function foreignAttributes(attributes: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(attributes).filter(([key]) => !KNOWN_ATTRIBUTES.has(key)));
}

/**
 * M4: plans writes to this cluster's instances only (CLUSTER_ID and CLUSTERSET_ID both ours), never to another's. An
 * instance differing in any attribute we write (readiness, hostname and node name included, E8) is re-registered.
 * Throws when `desired` is not this cluster's or repeats an id (a bug in the caller), or when kept attributes would push
 * an instance past Cloud Map's limits (ExportDataError).
 */
export function diffInstances({ desired, current, clusterId, clustersetId }: DiffInstancesInput): InstancePlan {
  const existing = latestById(current);
  const isOurs = (i: CloudMapInstance) =>
    i.attributes[ATTR.CLUSTER_ID] === clusterId && i.attributes[ATTR.CLUSTERSET_ID] === clustersetId;
  const desiredIds = new Set<string>();
  const plan: InstancePlan = { register: [], deregister: [], blocked: [] };
  for (const instance of desired) {
    if (!isOurs(instance))
      throw new Error(
        `diffInstances: desired instance ${instance.id} belongs to ${ownerOf(instance)}, not to this cluster ${clusterId} in ${clustersetId}`,
      );
    if (desiredIds.has(instance.id)) throw new Error(`diffInstances: desired instance id ${instance.id} appears twice`);
    desiredIds.add(instance.id);

    const now = existing.get(instance.id);
    if (now !== undefined && !isOurs(now)) {
      plan.blocked.push({ id: instance.id, owner: ownerOf(now) });
      continue;
    }
    const kept = now === undefined ? {} : foreignAttributes(now.attributes);
    const attributes = { ...kept, ...instance.attributes };
    if (now !== undefined && sameAttributes(now.attributes, attributes)) continue;
    const next = { id: instance.id, attributes };
    if (Object.keys(kept).length > 0) checkInstanceLimits(next, `cluster ${clusterId}`);
    plan.register.push(next);
  }
  for (const [id, instance] of existing) {
    if (isOurs(instance) && !desiredIds.has(id)) plan.deregister.push(id);
  }
  return plan;
}

/** A plan's deregistrations in the order they may be carried out (E8, I3). */
export interface WithdrawalOrder {
  /** May go at once, alongside the registrations: another instance of ours stays for each of their Service ports. */
  early: string[];
  /** Must wait until the registrations are done: they hold a Service port (or the cluster itself) up until then. */
  late: string[];
}

/**
 * E8: an endpoint that is gone must leave the other clusters as fast as one that appears reaches them, so a
 * deregistration does not wait behind registrations (each waits for its Cloud Map operation) unless it has to. It has
 * to when it is the last of this cluster's instances for its Service port: withdrawn first, the port (or the whole
 * cluster) would drop out of the import until the registration that replaces it lands (I3). `current` is what Cloud
 * Map lists for the service; `deregister` holds ids of this cluster's instances (diffInstances).
 */
export function withdrawalOrder({
  deregister,
  current,
  clusterId,
  clustersetId,
}: { deregister: readonly string[] } & Omit<DiffInstancesInput, 'desired'>): WithdrawalOrder {
  const leaving = new Set(deregister);
  const portOf = (i: CloudMapInstance) =>
    `${i.attributes[ATTR.SERVICE_PROTOCOL] ?? ''}/${i.attributes[ATTR.SERVICE_PORT] ?? ''}`;
  const ours = [...latestById(current).values()].filter(
    (i) => i.attributes[ATTR.CLUSTER_ID] === clusterId && i.attributes[ATTR.CLUSTERSET_ID] === clustersetId,
  );
  // Ports for which an instance of ours stays registered through the whole plan.
  const held = new Set(ours.filter((i) => !leaving.has(i.id)).map(portOf));
  const byId = new Map(ours.map((i) => [i.id, i]));
  const order: WithdrawalOrder = { early: [], late: [] };
  for (const id of deregister) {
    const instance = byId.get(id);
    (instance !== undefined && held.has(portOf(instance)) ? order.early : order.late).push(id);
  }
  return order;
}
