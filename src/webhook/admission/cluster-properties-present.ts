// C1: nothing is exported before this cluster has both well-known ClusterProperties. The denial shows the exact command
// that creates each missing one (the rule and its words are src/core/cluster-id.ts's, shared with the worker).

import { missingIdentityMessage, missingIdentityProperties } from '../../core/cluster-id.ts';
import { allow, deny, type Decision } from './decision.ts';

export interface ClusterIdentity {
  /** Value of ClusterProperty cluster.clusterset.k8s.io, undefined (or empty) when it does not exist. */
  clusterId: string | undefined;
  /** Value of ClusterProperty clusterset.k8s.io, undefined (or empty) when it does not exist. */
  clustersetId: string | undefined;
}

export function checkClusterPropertiesPresent(identity: ClusterIdentity, exportRef: string): Decision {
  const missing = missingIdentityProperties(identity.clusterId, identity.clustersetId);
  return missing.length === 0
    ? allow()
    : deny(`ServiceExport ${exportRef} cannot be accepted: ${missingIdentityMessage(missing)}`);
}
