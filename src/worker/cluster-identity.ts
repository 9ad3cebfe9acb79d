// Cluster identity (C1–C3): reads the two well-known ClusterProperties and decides what the worker does when they
// appear, change or vanish. Pure: the worker feeds it the cached properties and carries out the decision.
import { missingIdentityMessage, missingIdentityProperties, validateClusterId } from '../core/cluster-id.ts';
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../core/names.ts';
import type { Identity } from '../cloudmap/ownership.ts';
import type { ClusterPropertyObject } from './objects.ts';

export type { Identity };

export type IdentityReading =
  | { readonly kind: 'ready'; readonly identity: Identity }
  /** Missing or unusable properties; `message` says which and how to fix it, in one sentence. */
  | {
      readonly kind: 'missing';
      readonly reason: 'ClusterPropertyMissing' | 'InvalidClusterId';
      readonly message: string;
    };

/** C1, C2: both properties present with non-empty values and a cluster id that is a DNS label. */
export function readIdentity(
  clusterIdProperty: ClusterPropertyObject | undefined,
  clustersetProperty: ClusterPropertyObject | undefined,
): IdentityReading {
  const clusterId = clusterIdProperty?.spec?.value;
  const clustersetId = clustersetProperty?.spec?.value;
  const missing = missingIdentityProperties(clusterId, clustersetId);
  if (missing.length > 0 || !clusterId || !clustersetId) {
    const message = missingIdentityMessage(missing, 'The worker starts on its own once both exist. ');
    return {
      kind: 'missing',
      reason: 'ClusterPropertyMissing',
      message: `${message[0]!.toUpperCase()}${message.slice(1)}`,
    };
  }
  const invalid = validateClusterId(clusterId);
  if (invalid !== undefined)
    return {
      kind: 'missing',
      reason: 'InvalidClusterId',
      message: `${invalid} Nothing is exported or imported until then (C2).`,
    };
  return { kind: 'ready', identity: { clusterId, clustersetId } };
}

export function sameIdentity(a: Identity | undefined, b: Identity | undefined): boolean {
  return a?.clusterId === b?.clusterId && a?.clustersetId === b?.clustersetId;
}

/** What the worker runs under: nothing yet, an identity, or an identity whose properties changed under exports (C3). */
export type IdentityStatus =
  | { readonly kind: 'idle' }
  | { readonly kind: 'running'; readonly identity: Identity }
  | { readonly kind: 'frozen'; readonly identity: Identity; readonly message: string };

export type IdentityDecision =
  /** Stay as is. */
  | { readonly action: 'none' }
  /** Start reconciling under `identity` (after idle, or after a change while nothing was exported). */
  | { readonly action: 'start'; readonly identity: Identity }
  /** Stop reconciling and wait for the properties (they vanished while nothing was exported). */
  | { readonly action: 'stop'; readonly reading: Extract<IdentityReading, { kind: 'missing' }> }
  /** Keep the running identity but stop exporting, with `message` on every ServiceExport (C3). */
  | { readonly action: 'freeze'; readonly message: string }
  /** The properties are back to the running identity: export again. */
  | { readonly action: 'thaw' };

function describe(identity: Identity): string {
  return `cluster id "${identity.clusterId}" in ClusterSet "${identity.clustersetId}"`;
}

/**
 * C3: while this cluster exports services, its identity must not change: Cloud Map holds its instances under the old
 * one, and peers would see a second cluster. A change (or deletion) then freezes exports until the properties are
 * restored or every ServiceExport is gone; with nothing exported the worker simply follows the properties.
 */
export function decideIdentity(
  status: IdentityStatus,
  reading: IdentityReading,
  hasExports: boolean,
): IdentityDecision {
  if (status.kind === 'idle') {
    return reading.kind === 'ready' ? { action: 'start', identity: reading.identity } : { action: 'none' };
  }
  if (reading.kind === 'ready' && sameIdentity(status.identity, reading.identity)) {
    return status.kind === 'frozen' ? { action: 'thaw' } : { action: 'none' };
  }
  if (!hasExports) {
    return reading.kind === 'ready' ? { action: 'start', identity: reading.identity } : { action: 'stop', reading };
  }
  const now = reading.kind === 'ready' ? `now says ${describe(reading.identity)}` : 'are missing or invalid';
  const message =
    `This cluster's ClusterProperties ${now}, but its exports are registered in Cloud Map as ${describe(status.identity)} (C3): ` +
    `restore ${CLUSTER_ID_PROPERTY} to "${status.identity.clusterId}" and ${CLUSTERSET_ID_PROPERTY} to "${status.identity.clustersetId}", ` +
    'or delete every ServiceExport of this cluster before changing them.';
  if (status.kind === 'frozen' && status.message === message) return { action: 'none' };
  return { action: 'freeze', message };
}
