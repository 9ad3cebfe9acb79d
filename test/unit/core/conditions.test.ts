import { expect } from 'chai';
import fc from 'fast-check';
import {
  cloudMapFailingCondition,
  conditionTime,
  conflictCondition,
  readyCondition,
  setCondition,
  validCondition,
  type ConditionUpdate,
} from '../../../src/core/conditions.ts';
import { exportValidity } from '../../../src/core/service-export.ts';
import type { Condition } from '../../../src/core/types.ts';

const t0 = new Date('2025-01-01T00:00:00.000Z');
const t1 = new Date('2025-01-01T00:05:00.250Z');
const ready = (status: Condition['status'], reason: string): ConditionUpdate => ({
  type: 'Ready',
  status,
  reason,
  message: `m ${reason}`,
  observedGeneration: 1,
});

describe('ServiceExport conditions (X4)', () => {
  describe('setCondition', () => {
    it('appends a new type with lastTransitionTime = now, in whole seconds as the apiserver stores it', () => {
      expect(setCondition([], ready('False', 'Pending'), t1)).to.deep.equal([
        {
          type: 'Ready',
          status: 'False',
          reason: 'Pending',
          message: 'm Pending',
          observedGeneration: 1,
          lastTransitionTime: '2025-01-01T00:05:00Z',
        },
      ]);
    });

    it('keeps lastTransitionTime when the status is unchanged, updating reason, message and observedGeneration', () => {
      const before = setCondition([], ready('False', 'Pending'), t0);
      const after = setCondition(before, { ...ready('False', 'Failed'), observedGeneration: 2 }, t1);
      expect(after).to.deep.equal([
        {
          type: 'Ready',
          status: 'False',
          reason: 'Failed',
          message: 'm Failed',
          observedGeneration: 2,
          lastTransitionTime: '2025-01-01T00:00:00Z',
        },
      ]);
    });

    it('moves lastTransitionTime when the status changes', () => {
      const after = setCondition(setCondition([], ready('False', 'Pending'), t0), ready('True', 'Exported'), t1);
      expect(after[0]?.lastTransitionTime).to.equal('2025-01-01T00:05:00Z');
    });

    it('is a list-map keyed by type: other conditions and their order are kept', () => {
      const valid: Condition = {
        type: 'Valid',
        status: 'True',
        reason: 'Valid',
        message: 'x',
        lastTransitionTime: '2024-01-01T00:00:00Z',
      };
      const other: Condition = {
        type: 'Other',
        status: 'Unknown',
        reason: 'R',
        message: 'y',
        lastTransitionTime: '2024-01-01T00:00:00Z',
      };
      const exported: Condition = { ...ready('True', 'Exported'), lastTransitionTime: '2024-01-01T00:00:00Z' };
      const after = setCondition([valid, exported, other], ready('False', 'Failed'), t1);
      expect(after.map((c) => c.type)).to.deep.equal(['Valid', 'Ready', 'Other']);
      expect(after[0]).to.deep.equal(valid);
      expect(after[2]).to.deep.equal(other);
    });

    it('does not change its input', () => {
      const before = setCondition([], ready('False', 'Pending'), t0);
      const copy = structuredClone(before);
      setCondition(before, ready('True', 'Exported'), t1);
      expect(before).to.deep.equal(copy);
    });

    const conditionArb: fc.Arbitrary<ConditionUpdate> = fc.record({
      type: fc.constantFrom('Valid', 'Ready', 'Conflict'),
      status: fc.constantFrom('True' as const, 'False' as const, 'Unknown' as const),
      reason: fc.constantFrom('A', 'B'),
      message: fc.string({ maxLength: 5 }),
      observedGeneration: fc.integer({ min: 1, max: 5 }),
    });
    const dateArb = fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true });

    it('is idempotent: the same update twice, at any later time, gives the same list (property)', () => {
      fc.assert(
        fc.property(fc.array(conditionArb, { maxLength: 5 }), conditionArb, dateArb, dateArb, (history, next, a, b) => {
          const start = history.reduce<Condition[]>((list, c) => setCondition(list, c, a), []);
          const once = setCondition(start, next, a);
          expect(setCondition(once, next, b)).to.deep.equal(once);
        }),
      );
    });

    it('keeps one condition per type (property)', () => {
      fc.assert(
        fc.property(fc.array(conditionArb, { maxLength: 10 }), dateArb, (updates, now) => {
          const list = updates.reduce<Condition[]>((l, c) => setCondition(l, c, now), []);
          expect(new Set(list.map((c) => c.type)).size).to.equal(list.length);
        }),
      );
    });
  });

  it('conditionTime drops milliseconds', () => {
    expect(conditionTime(new Date('2025-06-01T12:34:56.789Z'))).to.equal('2025-06-01T12:34:56Z');
  });

  describe('builders', () => {
    const valid: Array<[string, ReturnType<typeof exportValidity>, string, string]> = [
      ['a valid export', exportValidity({ spec: { type: 'ClusterIP' } }), 'True', 'Valid'],
      ['a missing Service (E4)', exportValidity(undefined), 'False', 'NoService'],
      [
        'an ExternalName Service (E5)',
        exportValidity({ spec: { type: 'ExternalName' } }),
        'False',
        'InvalidServiceType',
      ],
    ];
    for (const [what, validity, status, reason] of valid) {
      it(`X4: Valid for ${what} is ${status}/${reason} with observedGeneration`, () => {
        expect(validCondition(validity, 7)).to.deep.equal({
          type: 'Valid',
          status,
          reason,
          message: validity.message,
          observedGeneration: 7,
        });
      });
    }

    const readyTable: Array<[Parameters<typeof readyCondition>, string, RegExp]> = [
      [['Exported', 3], 'True', /exported to Cloud Map .*; nothing to do\.$/],
      [
        ['Pending', 3, 'ClusterProperty clusterset.k8s.io to exist'],
        'False',
        /^Waiting for ClusterProperty clusterset.k8s.io to exist; no action is needed unless this persists/,
      ],
      [['Pending', 3], 'False', /^Waiting for the export to Cloud Map to complete;/],
      [
        ['Failed', 3, 'RegisterInstance: AccessDenied'],
        'False',
        /^Exporting to Cloud Map failed \(RegisterInstance: AccessDenied\); fix the cause named here/,
      ],
    ];
    for (const [args, status, message] of readyTable) {
      it(`X4: Ready ${args[0]}${args[2] ? ` (${args[2]})` : ''} is ${status}`, () => {
        const c = readyCondition(...args);
        expect(c).to.include({ type: 'Ready', status, reason: args[0], observedGeneration: 3 });
        expect(c.message).to.match(message);
      });
    }

    it('X4, M6: Ready while Cloud Map keeps failing is Unknown/Failed and names the call', () => {
      const c = cloudMapFailingCondition(
        3,
        'Cloud Map RegisterInstance failed for service id srv-1: InternalFailure (gave up after 8 attempts; the change is kept and will be retried)',
      );
      expect(c).to.include({ type: 'Ready', status: 'Unknown', reason: 'Failed', observedGeneration: 3 });
      expect(c.message).to.match(
        /^Cloud Map keeps failing \(Cloud Map RegisterInstance failed .*\); the endpoints exported before are still served/,
      );
    });

    it('X3: Conflict is False/NoConflicts without reasons', () => {
      expect(conflictCondition([], 2)).to.deep.include({
        type: 'Conflict',
        status: 'False',
        reason: 'NoConflicts',
        observedGeneration: 2,
      });
    });

    it('X3: several reasons are joined with commas, in the order given, without repeats', () => {
      const c = conflictCondition(
        ['PortConflict', 'TypeConflict', 'PortConflict'],
        2,
        'Port 80 differs: cluster a wins; align the Services.',
      );
      expect(c).to.deep.equal({
        type: 'Conflict',
        status: 'True',
        reason: 'PortConflict,TypeConflict',
        message: 'Port 80 differs: cluster a wins; align the Services.',
        observedGeneration: 2,
      });
    });

    it('X3: a conflict without a message gets one that says what to do', () => {
      expect(conflictCondition(['LabelsConflict'], 1).message).to.match(
        /oldest export wins: make the Service the same in every exporting cluster\.$/,
      );
    });

    it('X4: every reason is a valid metav1.Condition reason and every message one sentence', () => {
      const all = [
        ...valid.map(([, v]) => validCondition(v, 1)),
        ...readyTable.map(([args]) => readyCondition(...args)),
        cloudMapFailingCondition(
          1,
          'Cloud Map DeregisterInstance failed for instance "tcp-10.0.0.5-80-14757f89808b": ThrottlingException (gave up after 8 attempts (throttled); the change is kept and will be retried)',
        ),
        conflictCondition([], 1),
        conflictCondition(['PortConflict', 'IPFamilyConflict'], 1),
      ];
      for (const c of all) {
        expect(c.reason).to.match(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/);
        expect(c.message).to.match(/^[^.]+(\.[^ .][^.]*)*\.$/);
      }
    });
  });
});
