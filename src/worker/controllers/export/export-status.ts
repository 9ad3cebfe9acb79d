// ServiceExport status (X4): merges condition updates into the stored conditions, writes them only when something
// other than a timestamp changed, and records a Kubernetes Event for every transition (status or reason changed).
import {
  CONDITION_CONFLICT,
  CONDITION_READY,
  CONDITION_VALID,
  setCondition,
  type ConditionUpdate,
} from '../../../core/conditions.ts';
import type { Condition } from '../../../core/types.ts';
import type { EventRecorder, EventType } from '../../../kube/event-recorder.ts';
import type { ObjectWriter } from '../../../runtime/object-writer.ts';
import { SERVICE_EXPORTS } from '../../../kube/resources.ts';
import type { ServiceExportObject } from '../../objects.ts';

/** A condition whose status or reason changed, for an Event. */
export interface ConditionTransition {
  condition: Condition;
  type: EventType;
}

/** Conditions that are bad news: Valid or Ready not True, Conflict True. */
function isWarning(c: Pick<Condition, 'type' | 'status'>): boolean {
  return c.type === CONDITION_CONFLICT ? c.status === 'True' : c.status !== 'True';
}

function sameCondition(a: Condition | undefined, b: Condition): boolean {
  return (
    a !== undefined &&
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.observedGeneration === b.observedGeneration
  );
}

export interface ConditionPlan {
  /** The full list to store, or undefined when nothing but timestamps would change. */
  conditions: Condition[] | undefined;
  transitions: ConditionTransition[];
}

/** Pure: the list after `updates` and the transitions they cause, relative to `current`. */
export function planConditions(
  current: readonly Condition[],
  updates: readonly ConditionUpdate[],
  now: Date,
): ConditionPlan {
  let next = [...current];
  const transitions: ConditionTransition[] = [];
  let changed = false;
  for (const update of updates) {
    const before = next.find((c) => c.type === update.type);
    next = setCondition(next, update, now);
    const after = next.find((c) => c.type === update.type)!;
    if (sameCondition(before, after)) continue;
    changed = true;
    // A first report that all is well is not news; every other change of status or reason is.
    const firstAndFine = before === undefined && !isWarning(after);
    if (!firstAndFine && (before?.status !== after.status || before?.reason !== after.reason)) {
      transitions.push({ condition: after, type: isWarning(after) ? 'Warning' : 'Normal' });
    }
  }
  return { conditions: changed ? next : undefined, transitions };
}

/** The condition types this worker owns on a ServiceExport. */
const OWNED = new Set([CONDITION_VALID, CONDITION_READY, CONDITION_CONFLICT]);

export class ExportStatusWriter {
  readonly #writer: ObjectWriter;
  readonly #events: EventRecorder;

  constructor(writer: ObjectWriter, events: EventRecorder) {
    this.#writer = writer;
    this.#events = events;
  }

  /**
   * Applies `updates` to the ServiceExport's conditions (server-side apply of the types we own) and records Events.
   * Returns the ServiceExport with the conditions as now stored, for a later update in the same reconcile.
   */
  async update(
    serviceExport: ServiceExportObject,
    updates: readonly ConditionUpdate[],
    now = new Date(),
  ): Promise<ServiceExportObject> {
    const plan = planConditions(serviceExport.status?.conditions ?? [], updates, now);
    if (plan.conditions === undefined) return serviceExport;
    const { namespace, name } = serviceExport.metadata;
    await this.#writer.applyStatus(SERVICE_EXPORTS, {
      metadata: { namespace, name },
      status: { conditions: plan.conditions.filter((c) => OWNED.has(c.type)) },
    });
    const regarding = {
      ...serviceExport,
      apiVersion: serviceExport.apiVersion ?? `${SERVICE_EXPORTS.group}/${SERVICE_EXPORTS.version}`,
      kind: SERVICE_EXPORTS.kind,
    };
    for (const t of plan.transitions)
      this.#events.record(
        regarding,
        t.type,
        t.condition.reason.split(',')[0]!,
        `${t.condition.type}: ${t.condition.message}`,
      );
    return { ...serviceExport, status: { ...serviceExport.status, conditions: plan.conditions } };
  }
}
