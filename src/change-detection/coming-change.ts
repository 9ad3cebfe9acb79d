// A cluster's notice that a bump of its change marker is coming after a wait Cloud Map imposes: the first export of a
// namespace waits for Cloud Map to create the namespace (M1), an operation of its own. One instance per cluster in the
// marker service, holding until when (the writer's Unix ms) its peers should poll the marker closely. Registered as
// the wait begins, it lands about when the namespace does, so the peers read the bump that follows within a close
// poll instead of up to a whole poll interval after it lands (M7). Pure naming, encoding and reading live here.
import type { CloudMapInstance } from '../core/types.ts';
import { clusterInstanceId, clusterTimeInstance, parseClusterTime } from './change-marker.ts';

/** Until when (the writer's clock, Unix ms) peers should poll closely. A marker or heartbeat never has it. */
export const ATTR_COMING_UNTIL = 'COMING_UNTIL';

/** A notice as read from Cloud Map. */
export interface ComingChange {
  readonly clusterId: string;
  readonly until: number;
}

/** `coming@<clusterId>` (clusterInstanceId). */
export function comingInstanceId(clusterId: string): string {
  return clusterInstanceId('coming', clusterId);
}

export function comingInstance(clusterId: string, clustersetId: string, until: number): CloudMapInstance {
  return clusterTimeInstance('coming', ATTR_COMING_UNTIL, clusterId, clustersetId, until);
}

/** The notice an instance of the marker service encodes, or undefined when it is not one. */
export function parseComing(instance: CloudMapInstance): ComingChange | undefined {
  const notice = parseClusterTime('coming', ATTR_COMING_UNTIL, instance);
  return notice && { clusterId: notice.clusterId, until: notice.time };
}

/**
 * Until when a reader that read `notices` at `now` polls closely: to the latest notice of another cluster that it has
 * not acted on before (`acted`: the `until` last acted on per cluster), but no further than `maxMs` from now, so a
 * writer's clock ahead of the reader's, or a notice met again at every read of the marker service, costs one bounded
 * window. 0 when no notice is new. Also returns `acted` as it is after this read.
 */
export function closeWatchUntil(
  notices: readonly ComingChange[],
  acted: ReadonlyMap<string, number>,
  ownClusterId: string,
  now: number,
  maxMs: number,
): { until: number; acted: Map<string, number> } {
  const next = new Map(acted);
  let until = 0;
  for (const notice of notices) {
    if (notice.clusterId === ownClusterId || acted.get(notice.clusterId) === notice.until) continue;
    next.set(notice.clusterId, notice.until);
    until = Math.max(until, Math.min(notice.until, now + maxMs));
  }
  return { until: until > now ? until : 0, acted: next };
}
