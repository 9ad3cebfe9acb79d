// A cluster's liveness heartbeat (core/cluster-liveness.ts): one instance per cluster in the ClusterSet change
// marker's service, re-registered every heartbeat interval with the writer's time. Living next to the markers makes it
// free to read: every poll already watches that service's revision, and a beat is read with the markers it moves.
// Pure naming, encoding and parsing live here.
import { createHash } from 'node:crypto';
import type { Heartbeat } from '../core/cluster-liveness.ts';
import { MAX_INSTANCE_ID_LENGTH } from '../core/instance-id.ts';
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID } from '../core/names.ts';
import type { CloudMapInstance } from '../core/types.ts';

/** The writer's clock (Unix ms) when it beat. A marker instance never has it (and a heartbeat has no NAMESPACE). */
export const ATTR_HEARTBEAT = 'HEARTBEAT';

/**
 * `heartbeat@<clusterId>`: '@' never appears in a DNS label, so the id cannot collide with a marker's
 * `<clusterId>/<namespace>` or `m-<hash>`; `heartbeat@h-<hash>` when the cluster id does not fit.
 */
export function heartbeatInstanceId(clusterId: string): string {
  const readable = `heartbeat@${clusterId}`;
  if (readable.length <= MAX_INSTANCE_ID_LENGTH && /^[0-9a-zA-Z_.-]+$/.test(clusterId)) return readable;
  return `heartbeat@h-${createHash('sha256').update(clusterId).digest('hex').slice(0, 40)}`;
}

export function heartbeatInstance(clusterId: string, clustersetId: string, stamp: number): CloudMapInstance {
  return {
    id: heartbeatInstanceId(clusterId),
    attributes: { [ATTR_CLUSTER_ID]: clusterId, [ATTR_CLUSTERSET_ID]: clustersetId, [ATTR_HEARTBEAT]: String(Math.floor(stamp)) },
  };
}

/** The heartbeat an instance of the marker service encodes, or undefined when it is not one (a marker, or malformed). */
export function parseHeartbeat(instance: CloudMapInstance): Heartbeat | undefined {
  const clusterId = instance.attributes[ATTR_CLUSTER_ID];
  const raw = instance.attributes[ATTR_HEARTBEAT];
  const stamp = raw === undefined || !/^\d{1,16}$/.test(raw) ? Number.NaN : Number(raw);
  if (clusterId === undefined || !Number.isSafeInteger(stamp) || instance.id !== heartbeatInstanceId(clusterId)) return undefined;
  return { clusterId, stamp };
}
