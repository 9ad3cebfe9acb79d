// ServiceExport status conditions (X4): Valid, Ready and Conflict, kept as a list-map keyed by type the way
// metav1.Condition lists are. Messages are one sentence that says what to do.

import type { ExportValidity } from './service-export.ts';
import type { Condition } from './types.ts';

export const CONDITION_VALID = 'Valid';
export const CONDITION_READY = 'Ready';
export const CONDITION_CONFLICT = 'Conflict';

/** A condition before it is placed in a list; setCondition fills lastTransitionTime. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'>;

/** metav1.Time: RFC 3339 in UTC with whole seconds, as the apiserver stores it (so a re-read compares equal). */
export function conditionTime(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Puts `next` in place of the condition of the same type (or appends it). lastTransitionTime stays when the status is
 * unchanged and becomes `now` when it changes; other conditions are untouched. Applying the same update twice gives the
 * same list.
 */
export function setCondition(conditions: readonly Condition[], next: ConditionUpdate, now: Date): Condition[] {
  const index = conditions.findIndex((c) => c.type === next.type);
  const previous = index === -1 ? undefined : conditions[index];
  const condition: Condition = {
    type: next.type,
    status: next.status,
    reason: next.reason,
    message: next.message,
    lastTransitionTime:
      previous !== undefined && previous.status === next.status ? previous.lastTransitionTime : conditionTime(now),
  };
  if (next.observedGeneration !== undefined) condition.observedGeneration = next.observedGeneration;
  const out = [...conditions];
  if (index === -1) out.push(condition);
  else out[index] = condition;
  return out;
}

/** Valid (E4, E5): True/Valid, or False with NoService / InvalidServiceType. */
export function validCondition(validity: ExportValidity, observedGeneration: number): ConditionUpdate {
  return {
    type: CONDITION_VALID,
    status: validity.valid ? 'True' : 'False',
    reason: validity.reason,
    message: validity.message,
    observedGeneration,
  };
}

export type ReadyReason = 'Exported' | 'Pending' | 'Failed';

/**
 * Ready: Exported (True) once Cloud Map holds this cluster's instances; Pending (False) while waiting, `detail` saying
 * for what; Failed (False) when Cloud Map refused or failed, `detail` saying why.
 */
export function readyCondition(reason: ReadyReason, observedGeneration: number, detail?: string): ConditionUpdate {
  switch (reason) {
    case 'Exported':
      return {
        type: CONDITION_READY,
        status: 'True',
        reason,
        observedGeneration,
        message:
          'The Service is exported to Cloud Map and every cluster of the ClusterSet can import it; nothing to do.',
      };
    case 'Pending':
      return {
        type: CONDITION_READY,
        status: 'False',
        reason,
        observedGeneration,
        message: `Waiting for ${detail ?? 'the export to Cloud Map to complete'}; no action is needed unless this persists, then check the controller's logs.`,
      };
    case 'Failed':
      return {
        type: CONDITION_READY,
        status: 'False',
        reason,
        observedGeneration,
        message: `Exporting to Cloud Map failed (${detail ?? 'see the controller logs'}); fix the cause named here and the controller retries on its own.`,
      };
  }
}

/**
 * Ready Unknown/Failed (X4, M6): Cloud Map kept failing or throttling a call past the retries, so whether it holds this
 * cluster's latest endpoints is not known; what it held before is still imported by the other clusters.
 */
export function cloudMapFailingCondition(observedGeneration: number, detail: string): ConditionUpdate {
  return {
    type: CONDITION_READY,
    status: 'Unknown',
    reason: 'Failed',
    observedGeneration,
    message: `Cloud Map keeps failing (${detail}); the endpoints exported before are still served and the controller retries on its own.`,
  };
}

/**
 * Conflict (X2, X3): False/NoConflicts when `reasons` is empty; otherwise True with the reasons joined with commas, in
 * the order given (conflicts.ts orders them as X2/X3 list them), repeats dropped. `message` (from whoever found the
 * conflicts) names what differs and whose value wins.
 */
export function conflictCondition(
  reasons: readonly string[],
  observedGeneration: number,
  message?: string,
): ConditionUpdate {
  if (reasons.length === 0) {
    return {
      type: CONDITION_CONFLICT,
      status: 'False',
      reason: 'NoConflicts',
      observedGeneration,
      message: 'This export agrees with every other cluster exporting the service; nothing to do.',
    };
  }
  const unique = [...new Set(reasons)];
  return {
    type: CONDITION_CONFLICT,
    status: 'True',
    reason: unique.join(','),
    observedGeneration,
    message:
      message ??
      'This export disagrees with other clusters exporting the service and the oldest export wins: make the Service the same in every exporting cluster.',
  };
}
