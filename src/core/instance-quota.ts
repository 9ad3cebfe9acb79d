// Cloud Map's resource quotas on instances (M8): which of an export's instances are registered when not all fit, and
// how a refusal is read and reported. Cloud Map refuses a new instance past 1,000 per service (not adjustable) or past
// the namespace's quota (2,000 by default, adjustable through AWS Service Quotas); an instance that exists can always
// be replaced. Pure.

import { compareText } from './cluster-export.ts';
import { ATTR, INSTANCE_KIND_SERVICE } from './cloudmap-attributes.ts';
import { CONDITION_READY, type ConditionUpdate } from './conditions.ts';
import type { CloudMapInstance } from './types.ts';

/** Instances per service (Cloud Map developer guide, quotas page): fixed, AWS does not raise it. */
export const INSTANCES_PER_SERVICE = 1000;
/** Instances per namespace: AWS's default, raised on request through AWS Service Quotas. */
export const INSTANCES_PER_NAMESPACE = 2000;

export type InstanceQuota = 'InstancesPerService' | 'InstancesPerNamespace';

export interface QuotaRefusal {
  readonly quota: InstanceQuota;
  /** The limit Cloud Map named, or AWS's default when it named none. */
  readonly limit: number;
}

const QUOTA_NAMES: Readonly<Record<InstanceQuota, string>> = {
  InstancesPerService: 'Instances per service',
  InstancesPerNamespace: 'Instances per namespace',
};

/**
 * Which quota a ResourceLimitExceeded answer to RegisterInstance names ("... reached the quota Instances per service
 * (1000)"). AWS documents no message format, so an answer naming no quota is read from the service's size: a service
 * at INSTANCES_PER_SERVICE is full, otherwise it was the namespace.
 */
export function readQuotaRefusal(message: string, instancesInService: number): QuotaRefusal {
  const named = /instances per (service|namespace)(?:[^\d(]{0,20}\(([\d,]+)\))?/i.exec(message);
  const limit = named?.[2] === undefined ? undefined : Number(named[2].replaceAll(',', ''));
  if (named !== null) {
    const quota: InstanceQuota =
      named[1]!.toLowerCase() === 'service' ? 'InstancesPerService' : 'InstancesPerNamespace';
    return {
      quota,
      limit: limit ?? (quota === 'InstancesPerService' ? INSTANCES_PER_SERVICE : INSTANCES_PER_NAMESPACE),
    };
  }
  return instancesInService >= INSTANCES_PER_SERVICE
    ? { quota: 'InstancesPerService', limit: INSTANCES_PER_SERVICE }
    : { quota: 'InstancesPerNamespace', limit: INSTANCES_PER_NAMESPACE };
}

function rank(instance: CloudMapInstance): number {
  if (instance.attributes[ATTR.INSTANCE_KIND] === INSTANCE_KIND_SERVICE) return 0;
  return instance.attributes[ATTR.READY] === 'true' ? 1 : 2;
}

function address(instance: CloudMapInstance): string {
  return instance.attributes[ATTR.IPV4] ?? instance.attributes[ATTR.IPV6] ?? '';
}

/**
 * The order in which instances get the slots that are left: address-less instances first (they keep the cluster in
 * the import's cluster list and carry its ports, I3), then ready endpoints before those not ready (only ready ones
 * take traffic), then by address, so that one endpoint's ports go together, and by id. Depends on the instances only.
 */
export function registrationOrder(instances: readonly CloudMapInstance[]): CloudMapInstance[] {
  return [...instances].sort(
    (a, b) => rank(a) - rank(b) || compareText(address(a), address(b)) || compareText(a.id, b.id),
  );
}

export interface FitInput {
  /** This cluster's instances of the export (instancesForExport). */
  readonly desired: readonly CloudMapInstance[];
  /** Ids of this cluster's instances Cloud Map holds now. */
  readonly registered: ReadonlySet<string>;
  /** How many instances of this cluster the service may hold. */
  readonly capacity: number;
}

export interface Fit {
  /** The desired instances to have in Cloud Map, in registrationOrder. */
  readonly chosen: CloudMapInstance[];
  /** How many desired instances are left out. */
  readonly left: number;
}

/**
 * The desired instances that get a slot: every one already registered keeps its slot (what is registered stays
 * registered, so two services short of room never take slots from each other in turn, and endpoints do not flap),
 * then the others in registrationOrder while `capacity` lasts. From an empty service the choice is the first
 * `capacity` of registrationOrder; afterwards it depends on what was registered, and nothing else.
 */
export function fitInstances({ desired, registered, capacity }: FitInput): Fit {
  const ordered = registrationOrder(desired);
  const kept = ordered.filter((i) => registered.has(i.id));
  const room = Math.max(0, Math.floor(capacity) - kept.length);
  const added = ordered.filter((i) => !registered.has(i.id)).slice(0, room);
  const chosenIds = new Set([...kept, ...added].map((i) => i.id));
  const chosen = ordered.filter((i) => chosenIds.has(i.id));
  return { chosen, left: desired.length - chosen.length };
}

/**
 * The mark the importing clusters read (M8): with `desired` given, one instance of `chosen` carries EXPORT_INSTANCES =
 * how many instances the export has in all: the first that is `registered` (so that the mark is never on an instance
 * Cloud Map may refuse), else the first. One instance only, so that setting, changing and clearing the mark costs one
 * update (which no quota refuses), not one per instance.
 */
export function markPartial(
  chosen: readonly CloudMapInstance[],
  desired: number | undefined,
  registered: ReadonlySet<string>,
): CloudMapInstance[] {
  const marked = chosen.find((i) => registered.has(i.id)) ?? chosen[0];
  if (desired === undefined || marked === undefined) return [...chosen];
  return chosen.map((i) =>
    i === marked ? { id: i.id, attributes: { ...i.attributes, [ATTR.EXPORT_INSTANCES]: String(desired) } } : i,
  );
}

/**
 * The clusters of `clustersetId` whose export Cloud Map holds only part of: an instance of theirs declares more
 * instances (EXPORT_INSTANCES) than Cloud Map lists for them. Sorted by cluster id.
 */
export function partialExports(instances: readonly CloudMapInstance[], clustersetId: string): Map<string, QuotaCounts> {
  const byCluster = new Map<string, { ids: Set<string>; desired: number }>();
  for (const instance of instances) {
    const cluster = instance.attributes[ATTR.CLUSTER_ID];
    if (cluster === undefined || instance.attributes[ATTR.CLUSTERSET_ID] !== clustersetId) continue;
    const entry = byCluster.get(cluster) ?? { ids: new Set<string>(), desired: 0 };
    entry.ids.add(instance.id);
    const declared = Number(instance.attributes[ATTR.EXPORT_INSTANCES]);
    if (Number.isSafeInteger(declared)) entry.desired = Math.max(entry.desired, declared);
    byCluster.set(cluster, entry);
  }
  return new Map(
    [...byCluster]
      .filter(([, e]) => e.desired > e.ids.size)
      .sort(([a], [b]) => compareText(a, b))
      .map(([cluster, e]) => [cluster, { registered: e.ids.size, desired: e.desired }]),
  );
}

/** What the importing side's Ready condition says of clusters whose export is partial (I5, M8). */
export function partialImportMessage(partial: ReadonlyMap<string, QuotaCounts>): string {
  const each = [...partial].map(
    ([cluster, c]) =>
      `cluster ${cluster} exports ${count(c.registered)} of its ${count(c.desired)} instances (endpoints × ports)`,
  );
  return `Partial: ${each.join('; ')}. Cloud Map's quota on instances is reached; the ServiceExport's Ready condition in that cluster names the quota and what to do. The endpoints Cloud Map holds are imported.`;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

export interface QuotaCounts {
  /** This cluster's instances of the export that Cloud Map holds. */
  readonly registered: number;
  /** Those it should hold. */
  readonly desired: number;
}

/**
 * Ready False (X4, M8) of an export held back by a quota: the reason names the quota, the message its limit, the
 * counts, and what the user can do about it. `retrySeconds`: how often the controller tries to register the rest.
 */
export function quotaCondition(
  refusal: QuotaRefusal,
  counts: QuotaCounts,
  namespace: string,
  retrySeconds: number,
  observedGeneration: number,
): ConditionUpdate {
  const name = `${QUOTA_NAMES[refusal.quota]} (${count(refusal.limit)})`;
  const what =
    `Cloud Map's quota ${name} is reached: ${count(counts.registered)} of this cluster's ${count(counts.desired)} instances ` +
    `(endpoints × ports) are registered and the other ${count(counts.desired - counts.registered)} are not, so the other clusters import only part of this Service; ` +
    'the registered ones stay registered';
  const todo =
    refusal.quota === 'InstancesPerService'
      ? 'this quota cannot be raised: split the Service into Services of at most 1,000 endpoints × ports in all clusters together (for example one per label shard of the Pods), or export fewer ports'
      : `raise "Instances per namespace" for Cloud Map through AWS Service Quotas, or move Services out of namespace ${namespace} or scale them down`;
  return {
    type: CONDITION_READY,
    status: 'False',
    reason: `${refusal.quota}QuotaExceeded`,
    observedGeneration,
    message: `${what}; ${todo}. The controller tries the rest again every ${count(retrySeconds)} s, and at once when the Service shrinks.`,
  };
}
