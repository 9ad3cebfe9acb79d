// The last line of defence for M4: this adapter never writes an instance that belongs to another cluster or
// another ClusterSet, whatever its caller computed.
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID } from '../core/names.ts';
import type { CloudMapInstance } from '../core/types.ts';
import { OwnershipError } from './errors.ts';

export interface Identity {
  readonly clusterId: string;
  readonly clustersetId: string;
}

/**
 * Throws OwnershipError unless `instance` carries this cluster's CLUSTER_ID and CLUSTERSET_ID.
 * `action` is the verb for the message (`register`, `deregister`).
 */
export function assertOwnInstance(instance: CloudMapInstance, identity: Identity, action: string, where: string): void {
  const clusterId = instance.attributes[ATTR_CLUSTER_ID];
  const clustersetId = instance.attributes[ATTR_CLUSTERSET_ID];
  if (clusterId === identity.clusterId && clustersetId === identity.clustersetId) return;
  const found =
    `${ATTR_CLUSTER_ID}=${clusterId === undefined ? '(missing)' : `"${clusterId}"`}, ` +
    `${ATTR_CLUSTERSET_ID}=${clustersetId === undefined ? '(missing)' : `"${clustersetId}"`}`;
  throw new OwnershipError(
    `refusing to ${action} Cloud Map instance "${instance.id}" in ${where}: it has ${found} but this cluster is ` +
      `"${identity.clusterId}" in ClusterSet "${identity.clustersetId}" (M4: a cluster only writes its own instances); ` +
      'this is a bug in the caller or an instance id shared with another cluster',
  );
}

/**
 * Throws OwnershipError when `instance` claims this cluster but was registered by another account than this cluster's
 * (`CreatedByAccount` of ListInstances, when both are known): another cluster claims the same cluster id (C4). Its
 * instances are never deregistered; the export reports the duplicate instead.
 */
export function assertOwnAccount(
  instance: CloudMapInstance & { createdByAccount?: string },
  identity: Identity,
  accountId: string | undefined,
  where: string,
): void {
  if (accountId === undefined || instance.createdByAccount === undefined || instance.createdByAccount === accountId)
    return;
  throw new OwnershipError(
    `refusing to deregister Cloud Map instance "${instance.id}" in ${where}: it claims cluster "${identity.clusterId}" but account ` +
      `${instance.createdByAccount} registered it, not this cluster's account ${accountId}; two clusters in different accounts use the ` +
      `cluster id "${identity.clusterId}" (C4): give each cluster its own`,
  );
}
