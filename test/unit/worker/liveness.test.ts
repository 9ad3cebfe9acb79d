import { expect } from 'chai';
import fc from 'fast-check';
import { liveness, type LoopProgress } from '../../../src/worker/liveness.ts';

const LIMIT = 300_000;
const NOW = 10_000_000;

describe('worker liveness: a loop with work and no progress past the limit fails /healthz', () => {
  it('names every stuck loop and how long it has been stuck', () => {
    const loops: LoopProgress[] = [
      { name: 'Cloud Map watcher (us-west-2)', busy: true, progressAt: NOW - 301_000 },
      { name: 'export queue', busy: true, progressAt: NOW - 1_000 },
      { name: 'import queue', busy: true, progressAt: NOW - 420_000 },
    ];
    expect(liveness(loops, NOW, LIMIT)).to.equal(
      'no progress past the limit of 300 s (--progress-timeout): Cloud Map watcher (us-west-2) for 301 s, import queue for 420 s',
    );
  });

  it('an idle loop is never stuck, however old its last progress; exactly at the limit is still live', () => {
    expect(liveness([{ name: 'export queue', busy: false, progressAt: 0 }], NOW, LIMIT)).to.equal(true);
    expect(liveness([{ name: 'export queue', busy: true, progressAt: NOW - LIMIT }], NOW, LIMIT)).to.equal(true);
    expect(liveness([], NOW, LIMIT)).to.equal(true);
  });

  it('fails exactly when some busy loop is older than the limit (property)', () => {
    const loop = fc.record({
      name: fc.constantFrom('watcher', 'export queue', 'import queue'),
      busy: fc.boolean(),
      progressAt: fc.integer({ min: 0, max: NOW }),
    });
    fc.assert(
      fc.property(fc.array(loop, { maxLength: 6 }), (loops) => {
        const stuck = loops.some((l) => l.busy && NOW - l.progressAt > LIMIT);
        const result = liveness(loops, NOW, LIMIT);
        return stuck
          ? typeof result === 'string' &&
              loops.filter((l) => l.busy && NOW - l.progressAt > LIMIT).every((l) => result.includes(l.name))
          : result === true;
      }),
    );
  });
});
