// C1: nothing is exported before this cluster has both well-known ClusterProperties. The denial shows the exact command
// that creates each missing one.

import { ABOUT_GROUP, CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY, STORAGE_VERSION } from '../../core/names.ts';
import { allow, deny, type Decision } from './decision.ts';

export interface ClusterIdentity {
  /** Value of ClusterProperty cluster.clusterset.k8s.io, undefined when it does not exist. */
  clusterId: string | undefined;
  /** Value of ClusterProperty clusterset.k8s.io, undefined when it does not exist. */
  clustersetId: string | undefined;
}

const PLACEHOLDER: Record<string, string> = {
  [CLUSTER_ID_PROPERTY]: '<this-cluster-id>',
  [CLUSTERSET_ID_PROPERTY]: '<clusterset-id>',
};

/** A one-line shell command creating the ClusterProperty `name`, with a placeholder value to fill in. */
export function createPropertyCommand(name: string): string {
  const object = {
    apiVersion: `${ABOUT_GROUP}/${STORAGE_VERSION}`, kind: 'ClusterProperty', metadata: { name }, spec: { value: PLACEHOLDER[name] ?? '<value>' },
  };
  return `echo '${JSON.stringify(object)}' | kubectl apply -f -`;
}

export function checkClusterPropertiesPresent(identity: ClusterIdentity, exportRef: string): Decision {
  const missing = [
    ...(identity.clusterId === undefined ? [CLUSTER_ID_PROPERTY] : []),
    ...(identity.clustersetId === undefined ? [CLUSTERSET_ID_PROPERTY] : []),
  ];
  if (missing.length === 0) return allow();
  const what = missing.map((name) => `ClusterProperty ${name}`).join(' and ');
  const commands = missing.map(createPropertyCommand).join(' ; ');
  return deny(
    `ServiceExport ${exportRef} cannot be accepted: this cluster has no ${what} yet, so it has no identity in a ClusterSet (C1). ` +
      `Create ${missing.length > 1 ? 'them' : 'it'} first, for example: ${commands}`,
  );
}
