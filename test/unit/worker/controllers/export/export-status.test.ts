import { expect } from 'chai';
import fc from 'fast-check';
import {
  conflictCondition,
  readyCondition,
  validCondition,
  type ConditionUpdate,
} from '../../../../../src/core/conditions.ts';
import { exportValidity } from '../../../../../src/core/service-export.ts';
import { planConditions } from '../../../../../src/worker/controllers/export/export-status.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:01:00Z');
const valid = validCondition(exportValidity({ spec: { type: 'ClusterIP' } }), 1);
const noService = validCondition(exportValidity(undefined), 1);
const exported = readyCondition('Exported', 1);
const noConflict = conflictCondition([], 1);

describe('worker ServiceExport status (X4)', () => {
  it('a first, healthy report is written without Events', () => {
    const plan = planConditions([], [valid, exported, noConflict], t0);
    expect(plan.conditions?.map((c) => [c.type, c.status, c.reason])).to.deep.equal([
      ['Valid', 'True', 'Valid'],
      ['Ready', 'True', 'Exported'],
      ['Conflict', 'False', 'NoConflicts'],
    ]);
    expect(plan.transitions).to.deep.equal([]);
  });

  it('a first report of a problem is a Warning Event', () => {
    const plan = planConditions([], [noService], t0);
    expect(plan.transitions.map((t) => [t.type, t.condition.reason])).to.deep.equal([['Warning', 'NoService']]);
  });

  it('the same report again writes nothing (no status write, no Event)', () => {
    const first = planConditions([], [valid, exported, noConflict], t0).conditions!;
    expect(planConditions(first, [valid, exported, noConflict], t1)).to.deep.equal({
      conditions: undefined,
      transitions: [],
    });
  });

  it('a transition keeps the other conditions and gives one Event of the right type', () => {
    const first = planConditions([], [valid, exported, noConflict], t0).conditions!;
    const conflict = conflictCondition(['PortConflict'], 1, 'ports differ');
    const plan = planConditions(first, [valid, exported, conflict], t1);
    expect(plan.transitions.map((t) => [t.type, t.condition.type, t.condition.reason])).to.deep.equal([
      ['Warning', 'Conflict', 'PortConflict'],
    ]);
    expect(plan.conditions!.find((c) => c.type === 'Conflict')!.lastTransitionTime).to.equal('2026-01-01T00:01:00Z');
    expect(plan.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime).to.equal('2026-01-01T00:00:00Z');
    const resolved = planConditions(plan.conditions!, [noConflict], t1);
    expect(resolved.transitions.map((t) => [t.type, t.condition.reason])).to.deep.equal([['Normal', 'NoConflicts']]);
  });

  it('a new generation alone is written but is no Event', () => {
    const first = planConditions([], [valid], t0).conditions!;
    const plan = planConditions(first, [{ ...valid, observedGeneration: 2 }], t1);
    expect(plan.conditions![0]!.observedGeneration).to.equal(2);
    expect(plan.transitions).to.deep.equal([]);
  });

  it('property: applying the same updates (one per type) twice changes nothing the second time', () => {
    const update = fc.constantFrom<ConditionUpdate>(
      valid,
      noService,
      exported,
      readyCondition('Failed', 1, 'x'),
      noConflict,
      conflictCondition(['TypeConflict'], 1),
    );
    fc.assert(
      fc.property(fc.array(update, { maxLength: 6 }), fc.uniqueArray(update, { selector: (u) => u.type }), (a, b) => {
        const once = planConditions(planConditions([], a, t0).conditions ?? [], b, t1);
        const twice = planConditions(once.conditions ?? planConditions([], a, t0).conditions ?? [], b, t1);
        return twice.conditions === undefined && twice.transitions.length === 0;
      }),
    );
  });
});
