import { expect } from 'chai';
import fc from 'fast-check';
import { backoffDelay, sleep } from '../../../src/runtime/backoff.ts';

describe('backoffDelay (M6: reconnect and retry with exponential backoff and jitter)', () => {
  const policy = { baseMs: 100, maxMs: 2000, jitter: 0 };

  it('doubles from the base and stops at the cap', () => {
    const table: [number, number][] = [
      [0, 0],
      [1, 100],
      [2, 200],
      [3, 400],
      [4, 800],
      [5, 1600],
      [6, 2000],
      [60, 2000],
      [5000, 2000],
    ];
    for (const [failures, want] of table) expect(backoffDelay(policy, failures), `failures=${failures}`).to.equal(want);
  });

  it('jitter draws from [d × (1 − jitter), d]', () => {
    const half = { ...policy, jitter: 0.5 };
    expect(backoffDelay(half, 3, () => 0)).to.equal(400);
    expect(backoffDelay(half, 3, () => 0.999999)).to.equal(200);
    expect(backoffDelay({ ...policy, jitter: 1 }, 3, () => 0.5)).to.equal(200);
  });

  it('property: never negative, never above the cap, never below the unjittered floor', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 600_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 100 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        (baseMs, capExtra, jitter, failures, r) => {
          const p = { baseMs, maxMs: baseMs + capExtra, jitter };
          const d = backoffDelay(p, failures, () => r);
          const full = Math.min(p.maxMs, baseMs * 2 ** (failures - 1));
          expect(d).to.be.at.least(Math.floor(full * (1 - jitter)) - 1);
          expect(d).to.be.at.most(p.maxMs);
        },
      ),
    );
  });

  it('sleep resolves early when its signal aborts', async () => {
    const ac = new AbortController();
    const started = Date.now();
    const done = sleep(10_000, ac.signal);
    ac.abort();
    await done;
    expect(Date.now() - started).to.be.below(1000);
  });
});
