// C2, C3, C5: the cluster id must be a DNS label; neither well-known ClusterProperty may change value or be deleted while
// this cluster has ServiceExports (their Cloud Map instances carry the old ids); other names under the Kubernetes
// domains are reserved. A ClusterProperty is cluster-scoped, so a refusal names no export (they live in other
// namespaces, and the caller may be anyone who reaches the webhook's port): a count and the command that lists them.

import { isReservedPropertyName, isWellKnownPropertyName, validateClusterId } from '../../core/cluster-id.ts';
import { CLUSTER_ID_PROPERTY } from '../../core/names.ts';
import type { Operation } from './review.ts';
import { allow, deny, type Decision } from './decision.ts';

export interface ClusterPropertyChange {
  operation: Operation;
  name: string;
  /** spec.value being written (CREATE, UPDATE). */
  value: string | undefined;
  /** spec.value stored so far (UPDATE, DELETE). */
  oldValue: string | undefined;
  /** How many ServiceExports this cluster has. */
  exports: number;
}

function blockedByExports(name: string, what: string, exports: number): Decision {
  return deny(
    `ClusterProperty ${name} cannot ${what} while this cluster has ServiceExports (C3): it has ${exports} ` +
      '(`kubectl get serviceexports --all-namespaces` lists them). ' +
      'Their Cloud Map instances carry the current value; delete the ServiceExports first, then retry.',
  );
}

export function checkClusterPropertyChange(change: ClusterPropertyChange): Decision {
  const { operation, name, value, oldValue, exports } = change;
  const wellKnown = isWellKnownPropertyName(name);
  if (wellKnown && operation === 'DELETE' && exports > 0) return blockedByExports(name, 'be deleted', exports);
  if (operation !== 'CREATE' && operation !== 'UPDATE') return allow();

  if (name === CLUSTER_ID_PROPERTY && value !== undefined) {
    const invalid = validateClusterId(value);
    if (invalid !== undefined) return deny(`${invalid.replace(/\.$/, '')} (C2).`);
  }
  if (wellKnown && operation === 'UPDATE' && oldValue !== undefined && value !== oldValue && exports > 0) {
    return blockedByExports(name, `change from "${oldValue}" to "${value}"`, exports);
  }
  if (!wellKnown && isReservedPropertyName(name) && operation === 'CREATE') {
    return allow([`ClusterProperty names under k8s.io and kubernetes.io are reserved for well-known properties (C5).`]);
  }
  return allow();
}
