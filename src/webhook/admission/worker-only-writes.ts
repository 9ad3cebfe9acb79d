// I6: only the reconcile worker writes ServiceImports and MCS EndpointSlices (those labelled
// multicluster.kubernetes.io/service-name). The namespace controller and garbage collector may still delete them.

import { LABEL_SERVICE_NAME } from '../../core/names.ts';
import type { Operation } from './review.ts';
import { allow, deny, type Decision } from './decision.ts';

export interface WriterIdentities {
  /** User name of the reconcile worker (--worker-service-account). */
  worker: string;
  /** User names that may delete (--system-deleters). */
  deleters: readonly string[];
}

export interface GuardedWrite {
  kind: 'ServiceImport' | 'EndpointSlice';
  /** `namespace/name`. */
  target: string;
  operation: Operation;
  username: string;
  /** Labels of the object being written and of the stored one (a relabel that removes our label is still a write). */
  labels: Record<string, string> | undefined;
  oldLabels: Record<string, string> | undefined;
}

/** EndpointSlices are ours to guard only when they carry the MCS service-name label (S2). */
export function isGuarded(write: Pick<GuardedWrite, 'kind' | 'labels' | 'oldLabels'>): boolean {
  if (write.kind === 'ServiceImport') return true;
  return write.labels?.[LABEL_SERVICE_NAME] !== undefined || write.oldLabels?.[LABEL_SERVICE_NAME] !== undefined;
}

const VERB: Record<Operation, string> = { CREATE: 'create', UPDATE: 'update', DELETE: 'delete', CONNECT: 'connect to' };

export function checkWorkerOnlyWrite(write: GuardedWrite, identities: WriterIdentities): Decision {
  if (!isGuarded(write) || write.username === identities.worker) return allow();
  if (write.operation === 'DELETE' && identities.deleters.includes(write.username)) return allow();
  const what =
    write.kind === 'ServiceImport'
      ? `ServiceImport ${write.target}`
      : `EndpointSlice ${write.target} (labelled ${LABEL_SERVICE_NAME})`;
  // The worker's identity stays out of the message: it is a ServiceAccount of another namespace, and a name to aim at.
  return deny(
    `${what} is managed by the mcs-cloudmap worker; user "${write.username}" may not ${VERB[write.operation]} it (I6). ` +
      'Create or delete a ServiceExport in the exporting cluster instead.',
  );
}
