// Conflict resolution of the MCS API (X1–X3): the oldest export wins every property, ports are merged, and every
// disagreement is reported with the field, the clusters involved and whose value is used. The reconcile worker calls
// resolveImport to build ServiceImports and Conflict conditions; the webhook calls checkExportAgainstImport at admission.
import { compareText } from './cluster-export.ts';
import { formatPort, mergePorts, type PortClash, type PortDifference, type ServedPorts } from './ports.ts';
import type { ClusterExport, ExportedServiceProperties } from './types.ts';

/** Conflict reasons in the order of X2/X3; a condition joins several with commas in this order. */
export const CONFLICT_REASONS = [
  'PortConflict',
  'TypeConflict',
  'SessionAffinityConflict',
  'SessionAffinityConfigConflict',
  'InternalTrafficPolicyConflict',
  'TrafficDistributionConflict',
  'LabelsConflict',
  'AnnotationsConflict',
  'IPFamilyConflict',
] as const;
export type ConflictReason = (typeof CONFLICT_REASONS)[number];

/** The precedence key of X1. */
export type ExportPrecedence = Pick<ClusterExport, 'clusterId' | 'exportCreationTimestamp'>;
/** What conflict resolution needs from one cluster's export (ClusterExport has it all; the webhook can build it too). */
export type ExportFacts = ExportedServiceProperties & ExportPrecedence;

/** One disagreement: the cluster whose value is used and the clusters whose different value is not. */
export interface ConflictDetail {
  reason: ConflictReason;
  /** The ServiceImport field, e.g. `ports`, `type`, `sessionAffinityConfig`. */
  field: string;
  winner: string;
  losers: string[];
  /** One clause with the values, e.g. `type ClusterSetIP from cluster a (oldest export) wins over Headless from b`. */
  description: string;
  /** What the losers' endpoints then miss, for the Conflict condition (X5: the port they are left out of). */
  consequence?: string;
}

export interface ImportConflict {
  /** Distinct reasons in CONFLICT_REASONS order. */
  reasons: ConflictReason[];
  /** One sentence: the fields, the clusters involved, whose values win and what to do. */
  message: string;
  /** Clusters whose values differ (winners and losers), sorted. */
  clusters: string[];
  details: ConflictDetail[];
}

export interface ImportResolution {
  /** What the ServiceImport and derived Service carry: the oldest export's values and the merged ports. */
  properties: ExportedServiceProperties;
  /** The exports resolved, oldest first (X1): what the export record on the ServiceImport holds. */
  exports: ExportFacts[];
  /** I3: the exporting clusters, sorted. */
  clusters: string[];
  /** X5, strict port conflicts: per cluster, the merged ports its endpoints serve (the EndpointSlice plan's input). */
  served: ServedPorts;
  /**
   * Present when the exports disagree. By X2/X3 the Conflict condition then goes on every exporting cluster's
   * ServiceExport (all of `clusters`), not only on those named here.
   */
  conflict: ImportConflict | undefined;
}

/** X1: oldest ServiceExport first; equal creation times are ordered by cluster id. */
export function comparePrecedence(a: ExportPrecedence, b: ExportPrecedence): number {
  if (a.exportCreationTimestamp !== b.exportCreationTimestamp)
    return a.exportCreationTimestamp - b.exportCreationTimestamp;
  return compareText(a.clusterId, b.clusterId);
}

/** X1: a sorted copy, oldest export first. */
export function byPrecedence<T extends ExportPrecedence>(exports: readonly T[]): T[] {
  return [...exports].sort(comparePrecedence);
}

const KUBERNETES_DEFAULT_AFFINITY_TIMEOUT = 10800;

/**
 * The properties compared by X3 besides ports. `key` gives a comparable form of an export's value, or undefined when the
 * export states none: then it agrees with anyone and the oldest export that states one wins. A member that states its
 * ports only (I12) states none of them.
 */
const PROPERTY_RULES: ReadonlyArray<{
  reason: ConflictReason;
  field: string;
  key: (e: ExportedServiceProperties) => string | undefined;
  show: (e: ExportedServiceProperties) => string;
}> = [
  { reason: 'TypeConflict', field: 'type', key: (e) => e.type, show: (e) => e.type },
  {
    reason: 'SessionAffinityConflict',
    field: 'sessionAffinity',
    key: (e) => e.sessionAffinity,
    show: (e) => e.sessionAffinity,
  },
  {
    // Only ClientIP affinity has a config; an unset timeout means the Kubernetes default.
    reason: 'SessionAffinityConfigConflict',
    field: 'sessionAffinityConfig',
    key: (e) =>
      e.sessionAffinity === 'ClientIP'
        ? String(e.sessionAffinityTimeoutSeconds ?? KUBERNETES_DEFAULT_AFFINITY_TIMEOUT)
        : undefined,
    show: (e) => `timeoutSeconds ${e.sessionAffinityTimeoutSeconds ?? KUBERNETES_DEFAULT_AFFINITY_TIMEOUT}`,
  },
  {
    reason: 'InternalTrafficPolicyConflict',
    field: 'internalTrafficPolicy',
    key: (e) => e.internalTrafficPolicy ?? 'Cluster',
    show: (e) => e.internalTrafficPolicy ?? 'Cluster',
  },
  {
    reason: 'TrafficDistributionConflict',
    field: 'trafficDistribution',
    key: (e) => e.trafficDistribution ?? '',
    show: (e) => (e.trafficDistribution ?? '') || '(unset)',
  },
  {
    reason: 'LabelsConflict',
    field: 'exportedLabels',
    key: (e) => mapKey(e.exportedLabels),
    show: (e) => showMap(e.exportedLabels),
  },
  {
    reason: 'AnnotationsConflict',
    field: 'exportedAnnotations',
    key: (e) => mapKey(e.exportedAnnotations),
    show: (e) => showMap(e.exportedAnnotations),
  },
  {
    // An export without IP families (written by a controller that does not record them) states none.
    reason: 'IPFamilyConflict',
    field: 'ipFamilies',
    key: (e) => (e.ipFamilies.length === 0 ? undefined : e.ipFamilies.join(',')),
    show: (e) => e.ipFamilies.join(','),
  },
];

/**
 * X1–X3 and I3 for one multi-cluster service: the properties its ServiceImport carries, the exporting clusters and the
 * conflict, if any. Independent of the order of `exports`. Throws when given no export (then there is nothing to import).
 */
export function resolveImport(exports: readonly ExportFacts[]): ImportResolution {
  const ordered = byPrecedence(exports);
  const oldest = ordered[0];
  if (oldest === undefined)
    throw new Error('resolveImport: no cluster exports this service, so there is nothing to import');

  const merged = mergePorts(ordered);
  const details = [
    ...merged.clashes.map(portClashDetail),
    ...merged.differences.map(portDifferenceDetail),
    ...(ordered.length > 1 ? propertyDetails(ordered) : []),
  ];
  const ipFamilies = ordered.find((e) => e.ipFamilies.length > 0)?.ipFamilies ?? [];
  const properties: ExportedServiceProperties = {
    type: oldest.type,
    ports: merged.ports,
    sessionAffinity: oldest.sessionAffinity,
    ...(oldest.sessionAffinityTimeoutSeconds === undefined
      ? {}
      : { sessionAffinityTimeoutSeconds: oldest.sessionAffinityTimeoutSeconds }),
    ...(oldest.internalTrafficPolicy === undefined ? {} : { internalTrafficPolicy: oldest.internalTrafficPolicy }),
    ...(oldest.trafficDistribution === undefined ? {} : { trafficDistribution: oldest.trafficDistribution }),
    ipFamilies: [...ipFamilies],
    exportedLabels: { ...oldest.exportedLabels },
    exportedAnnotations: { ...oldest.exportedAnnotations },
  };
  return {
    properties,
    exports: ordered,
    clusters: sortedUnique(ordered.map((e) => e.clusterId)),
    served: merged.served,
    conflict: conflictOf(details),
  };
}

export interface ExportCheck {
  /**
   * Every disagreement once the candidate is in: exactly what resolveImport reports, so the Conflict condition the worker
   * then sets on every exporting cluster's ServiceExport, the candidate's included (X2, X3).
   */
  conflict: ImportConflict | undefined;
  /** The disagreements the candidate takes part in (as winner or loser); undefined when it agrees with everyone. */
  involved: ImportConflict | undefined;
  /** True when some value of the candidate would be overridden by an older export's. */
  loses: boolean;
}

/**
 * For admission: how the candidate export (new or updated) would fare against the clusters exporting now. The candidate
 * replaces any current export of its own cluster and the same rules as resolveImport apply. A candidate not yet created
 * should carry the current time.
 */
export function checkExportAgainstImport(candidate: ExportFacts, current: readonly ExportFacts[]): ExportCheck {
  const { conflict } = resolveImport([...current.filter((e) => e.clusterId !== candidate.clusterId), candidate]);
  const involved = (conflict?.details ?? []).filter(
    (d) => d.winner === candidate.clusterId || d.losers.includes(candidate.clusterId),
  );
  return {
    conflict,
    involved: conflictOf(involved),
    loses: involved.some((d) => d.losers.includes(candidate.clusterId)),
  };
}

function propertyDetails(ordered: readonly ExportFacts[]): ConflictDetail[] {
  const details: ConflictDetail[] = [];
  const stating = ordered.filter((e) => e.portsOnly !== true);
  for (const rule of PROPERTY_RULES) {
    const winner = stating.find((e) => rule.key(e) !== undefined);
    if (winner === undefined) continue;
    const winningKey = rule.key(winner);
    const losers = stating.filter((e) => {
      const key = rule.key(e);
      return key !== undefined && key !== winningKey;
    });
    if (losers.length === 0) continue;
    // Losers with the same value are named together: "Headless from b and c".
    const byValue = new Map<string, string[]>();
    for (const loser of losers)
      byValue.set(rule.show(loser), [...(byValue.get(rule.show(loser)) ?? []), loser.clusterId]);
    const over = [...byValue].map(([value, clusters]) => `${value} from ${listOf(clusters)}`);
    details.push({
      reason: rule.reason,
      field: rule.field,
      winner: winner.clusterId,
      losers: losers.map((l) => l.clusterId),
      description: `${rule.field} ${rule.show(winner)} from cluster ${winner.clusterId} (oldest export) wins over ${listOf(over)}`,
    });
  }
  return details;
}

function portClashDetail(clash: PortClash): ConflictDetail {
  const older = `in cluster ${clash.keptBy} (older export, wins)`;
  const newer = `in cluster ${clash.droppedBy}`;
  const description =
    clash.kind === 'name'
      ? `port ${portName(clash.kept.name)} is ${formatPort({ ...clash.kept, name: '' })} ${older} but ${formatPort({ ...clash.dropped, name: '' })} ${newer}`
      : clash.kind === 'protocolPort'
        ? `${formatPort({ ...clash.kept, name: '' })} is ${portName(clash.kept.name)} ${older} but ${portName(clash.dropped.name)} ${newer}`
        : `port ${portName(clash.kept.name)} has appProtocol ${clash.kept.appProtocol ?? ''} ${older} but ${clash.dropped.appProtocol ?? ''} ${newer}`;
  // X5, strict port conflicts: the loser's endpoints are left out of the port it does not define as the import states it.
  const consequence =
    clash.kind === 'protocolPort'
      ? `so ${portLabel(clash.dropped.name)} of ${clash.droppedBy} is left out and its endpoints receive no traffic on ${formatPort({ ...clash.kept, name: '' })}`
      : `so the endpoints of ${clash.droppedBy} are left out of ${portLabel(clash.kept.name)} and receive no traffic for it`;
  return {
    reason: 'PortConflict',
    field: 'ports',
    winner: clash.keptBy,
    losers: [clash.droppedBy],
    description,
    consequence,
  };
}

/** X2 (mcs-api v0.5.0): ports that are not identical, clash or not; the import still exposes the union. */
function portDifferenceDetail(difference: PortDifference): ConflictDetail {
  const { clusterId, oldest, added, lacking } = difference;
  const changes = [
    ...(added.length > 0 ? [`adds ${listOf(added.map(formatPort))}`] : []),
    ...(lacking.length > 0 ? [`lacks ${listOf(lacking.map(formatPort))}`] : []),
  ];
  return {
    reason: 'PortConflict',
    field: 'ports',
    winner: oldest,
    losers: [clusterId],
    description: `ports of ${clusterId} differ from the oldest export (${oldest}): ${changes.join(', ')}`,
  };
}

function conflictOf(details: ConflictDetail[]): ImportConflict | undefined {
  if (details.length === 0) return undefined;
  const reasons = CONFLICT_REASONS.filter((r) => details.some((d) => d.reason === r));
  const fields = reasons.map((r) => details.find((d) => d.reason === r)!.field);
  const winners = sortedUnique(details.map((d) => d.winner));
  const losers = sortedUnique(details.flatMap((d) => d.losers));
  const clusters = sortedUnique([...winners, ...losers]);
  // X2: the port facts go in the message itself, since the ports that differ are not visible on any one cluster.
  const ports = details
    .filter((d) => d.reason === 'PortConflict')
    .map((d) => (d.consequence === undefined ? d.description : `${d.description}, ${d.consequence}`));
  const portFacts =
    ports.length > 0 ? `${ports.join('; ')}, and the ServiceImport exposes the union of the ports; ` : '';
  const message =
    `Conflicting ${listOf(fields)} between clusters ${listOf(clusters)}; ${portFacts}the oldest export wins (values from ${listOf(winners)}), ` +
    `so change the Service or ServiceExport in ${listOf(losers)} to match, or stop exporting it there.`;
  return { reasons, message, clusters, details };
}

function portLabel(name: string): string {
  return name === '' ? 'the unnamed port' : `port "${name}"`;
}

function portName(name: string): string {
  return name === '' ? 'the unnamed port' : `"${name}"`;
}

function sortedEntries(map: Readonly<Record<string, string>>): Array<[string, string]> {
  return Object.entries(map).sort(([a], [b]) => compareText(a, b));
}

function mapKey(map: Readonly<Record<string, string>>): string {
  return JSON.stringify(sortedEntries(map));
}

function showMap(map: Readonly<Record<string, string>>): string {
  return `{${sortedEntries(map)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ')}}`;
}

function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values)].sort();
}

/** "a", "a and b", "a, b and c". */
function listOf(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
