// C2, C3, C5: the cluster id must be a DNS label; neither well-known ClusterProperty may change value or be deleted while
// this cluster has ServiceExports (their Cloud Map instances carry the old ids); other names under the Kubernetes
// domains are reserved.

import { isReservedPropertyName, isWellKnownPropertyName, validateClusterId } from '../../src/core/cluster-id.ts';
import { CLUSTER_ID_PROPERTY } from '../../src/core/names.ts';
import type { Operation } from './review.ts';
import { allow, deny, type Decision } from './decision.ts';

export interface ClusterPropertyChange {
  operation: Operation;
  name: string;
  /** spec.value being written (CREATE, UPDATE). */
  value: string | undefined;
  /** spec.value stored so far (UPDATE, DELETE). */
  oldValue: string | undefined;
  /** `namespace/name` of this cluster's ServiceExports. */
  exports: readonly string[];
}

/** How many exports a denial names before summarising the rest. */
const LISTED_EXPORTS = 3;

function listExports(exports: readonly string[]): string {
  const sorted = [...exports].sort();
  const shown = sorted.slice(0, LISTED_EXPORTS).join(', ');
  return sorted.length > LISTED_EXPORTS ? `${shown} and ${sorted.length - LISTED_EXPORTS} more` : shown;
}

function blockedByExports(name: string, what: string, exports: readonly string[]): Decision {
  return deny(
    `ClusterProperty ${name} cannot ${what} while this cluster has ServiceExports (C3): ${listExports(exports)}. ` +
      'Their Cloud Map instances carry the current value; delete the ServiceExports first, then retry.',
  );
}

export function checkClusterPropertyChange(change: ClusterPropertyChange): Decision {
  const { operation, name, value, oldValue, exports } = change;
  const wellKnown = isWellKnownPropertyName(name);
  if (wellKnown && operation === 'DELETE' && exports.length > 0) return blockedByExports(name, 'be deleted', exports);
  if (operation !== 'CREATE' && operation !== 'UPDATE') return allow();

  if (name === CLUSTER_ID_PROPERTY && value !== undefined) {
    const invalid = validateClusterId(value);
    if (invalid !== undefined) return deny(`${invalid.replace(/\.$/, '')} (C2).`);
  }
  if (wellKnown && operation === 'UPDATE' && oldValue !== undefined && value !== oldValue && exports.length > 0) {
    return blockedByExports(name, `change from "${oldValue}" to "${value}"`, exports);
  }
  if (!wellKnown && isReservedPropertyName(name) && operation === 'CREATE') {
    return allow([`ClusterProperty names under k8s.io and kubernetes.io are reserved for well-known properties (C5).`]);
  }
  return allow();
}
