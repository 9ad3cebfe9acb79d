import { expect } from 'chai';
import fc from 'fast-check';
import { checksPerMinute, dueChecks, sweepDurationMs } from '../../../src/cloudmap/resync-pace.ts';

const PACE = { intervalMs: 300_000, budgetPerMinute: 60 };

describe('cloudmap safety-net resync pace (M6)', () => {
  it('checks every service within the interval while the budget allows, and stays within the budget beyond', () => {
    expect(checksPerMinute(100, PACE)).to.equal(20);
    expect(sweepDurationMs(100, PACE)).to.equal(300_000);
    expect(checksPerMinute(5000, PACE)).to.equal(60);
    expect(sweepDurationMs(5000, PACE)).to.equal(5000_000); // 83 min
    expect(checksPerMinute(0, PACE)).to.equal(0);
  });

  it('spreads the checks over the ticks, carrying fractions', () => {
    let carry = 0;
    const counts: number[] = [];
    for (let i = 0; i < 6; i++) {
      const step = dueChecks(carry, 500, 5000, PACE); // 0.5 check per 500 ms tick
      counts.push(step.count);
      carry = step.carry;
    }
    expect(counts).to.deep.equal([0, 1, 0, 1, 0, 1]);
  });

  it('never exceeds the budget over any run of ticks, and a pass completes in sweepDurationMs (property)', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 20_000 }),
      fc.integer({ min: 1, max: 600 }),
      fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 400 }),
      (services, budgetPerMinute, ticks) => {
        const pace = { intervalMs: 300_000, budgetPerMinute };
        let carry = 0;
        let total = 0;
        let elapsed = 0;
        for (const ms of ticks) {
          const step = dueChecks(carry, ms, services, pace);
          carry = step.carry;
          total += step.count;
          elapsed += ms;
          if (total > (checksPerMinute(services, pace) * elapsed) / 60_000 + 1e-6) return false;
        }
        const owed = (checksPerMinute(services, pace) * elapsed) / 60_000;
        // Nothing is lost either, unless a tick was longer than a whole pass (then at most one pass is owed).
        return ticks.some((ms) => ms >= sweepDurationMs(services, pace)) || total >= Math.floor(owed - 1e-6);
      },
    ));
  });
});
