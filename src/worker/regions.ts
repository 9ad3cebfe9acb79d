// The Regions of a ClusterSet as the worker sees them (pure): which Regions to read besides its own, and the
// ServiceImport condition that says when an import is degraded because Cloud Map in some Region does not answer.
// Accounts and Regions are addressing, so they stay out of src/core: the import is resolved from every Region's
// instances together, and this condition only reports where the data may be stale.
import { listedRegions } from '../config/options.ts';
import type { ConditionUpdate } from '../core/conditions.ts';

export const CONDITION_REGIONS_REACHABLE = 'RegionsReachable';

/**
 * The Regions this cluster reads, its own first: `--regions` with the own Region added when the list leaves it out,
 * each once. An empty list is the own Region alone (single-Region ClusterSet).
 */
export function clusterSetRegions(own: string, list: string): string[] {
  return [...new Set([own, ...listedRegions(list, 'regions')])];
}

/** One Region as seen for one imported service. */
export interface RegionState {
  readonly region: string;
  /** Cloud Map of the Region was read in full once since the worker started. */
  readonly read: boolean;
  readonly reachable: boolean;
  /** When it stopped answering (ISO time), while unreachable. */
  readonly since?: string;
  /** Clusters whose instances of the service were last read in this Region. */
  readonly clusters: readonly string[];
}

/**
 * The `RegionsReachable` condition of a ServiceImport. A Region degrades the import when it was never read (its
 * clusters' endpoints are missing: it is unknown which they are) or when it stopped answering while clusters exported
 * the service from there (their endpoints are the last ones read, kept, never dropped). Other Regions' imports stay
 * True.
 */
export function regionsCondition(regions: readonly RegionState[]): ConditionUpdate {
  const unread = regions.filter((r) => !r.read);
  const stale = regions.filter((r) => r.read && !r.reachable && r.clusters.length > 0);
  if (unread.length === 0 && stale.length === 0) {
    return {
      type: CONDITION_REGIONS_REACHABLE,
      status: 'True',
      reason: 'Reachable',
      message: `Cloud Map answers in every Region of the ClusterSet (${regions.map((r) => r.region).join(', ')}).`,
    };
  }
  const clauses = [
    ...stale.map(
      (r) =>
        `Cloud Map in Region ${r.region} has not answered since ${r.since ?? 'the last poll'}, so the endpoints of ${plural('cluster', r.clusters)} exported from there are the last ones read and are kept until it answers again`,
    ),
    ...unread.map(
      (r) =>
        `Cloud Map in Region ${r.region} has not been read since the worker started, so clusters exporting from there are missing until it is`,
    ),
  ];
  const where = [...stale, ...unread].map((r) => r.region).join(', ');
  return {
    type: CONDITION_REGIONS_REACHABLE,
    status: 'False',
    reason: 'RegionUnreachable',
    message: `${clauses.join('; ')}: check the network path and the worker's IAM permissions to Cloud Map in ${where}.`,
  };
}

function plural(noun: string, names: readonly string[]): string {
  return `${noun}${names.length === 1 ? '' : 's'} ${names.join(', ')}`;
}
