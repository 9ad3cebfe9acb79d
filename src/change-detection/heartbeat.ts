// A cluster's liveness heartbeat (core/cluster-liveness.ts): one instance per cluster in the ClusterSet change
// marker's service, re-registered every heartbeat interval with the writer's time. Living next to the markers makes it
// free to read: every poll already watches that service's revision, and a beat is read with the markers it moves.
// Pure naming, encoding and parsing live here.
import type { Heartbeat } from '../core/cluster-liveness.ts';
import type { CloudMapInstance } from '../core/types.ts';
import { clusterInstanceId, clusterTimeInstance, parseClusterTime } from './change-marker.ts';

/** The writer's clock (Unix ms) when it beat. A marker instance never has it (and a heartbeat has no NAMESPACE). */
export const ATTR_HEARTBEAT = 'HEARTBEAT';

/** `heartbeat@<clusterId>` (clusterInstanceId). */
export function heartbeatInstanceId(clusterId: string): string {
  return clusterInstanceId('heartbeat', clusterId);
}

export function heartbeatInstance(clusterId: string, clustersetId: string, stamp: number): CloudMapInstance {
  return clusterTimeInstance('heartbeat', ATTR_HEARTBEAT, clusterId, clustersetId, stamp);
}

/** The heartbeat an instance of the marker service encodes, or undefined when it is not one (a marker, or malformed). */
export function parseHeartbeat(instance: CloudMapInstance): Heartbeat | undefined {
  const beat = parseClusterTime('heartbeat', ATTR_HEARTBEAT, instance);
  return beat && { clusterId: beat.clusterId, stamp: beat.time };
}
