import { expect } from 'chai';
import fc from 'fast-check';
import {
  DEFAULT_POLL_POLICY,
  planOperationPolls,
  type PendingOperation,
} from '../../../src/cloudmap/operation-polls.ts';

const NOW = 1_000_000;
const op = (id: string, age = 0): PendingOperation => ({ id, since: NOW - age });
const OVERLAP = DEFAULT_POLL_POLICY.overlapMs;

describe('cloudmap operation polling plan (M6)', () => {
  it('asks for a few operations one by one', () => {
    expect(planOperationPolls([op('a'), op('b')], NOW, undefined)).to.deep.equal({
      listSince: undefined,
      listed: [],
      gets: ['a', 'b'],
    });
  });

  it('lists many at once, from the oldest submission, then only since the previous listing', () => {
    const ops = [op('a', 300), op('b'), op('c', 100)];
    expect(planOperationPolls(ops, NOW, undefined)).to.deep.equal({
      listSince: NOW - 300 - OVERLAP,
      listed: ['a', 'b', 'c'],
      gets: [],
    });
    expect(planOperationPolls(ops, NOW, NOW - 50).listSince).to.equal(NOW - 50 - OVERLAP);
    // A listing sent before any of these was submitted says nothing about them.
    expect(planOperationPolls(ops, NOW, NOW - 10_000).listSince).to.equal(NOW - 300 - OVERLAP);
  });

  it('asks for the few oldest operations listings kept missing one by one, however many are overdue', () => {
    const plan = planOperationPolls([op('a'), op('b'), op('c'), op('old', 20_000)], NOW, NOW - 500);
    expect(plan.listed).to.deep.equal(['a', 'b', 'c']);
    expect(plan.gets).to.deep.equal(['old']);
    const slow = Array.from({ length: 500 }, (_, n) => op(`s${n}`, 16_000 + n));
    const many = planOperationPolls(slow, NOW, NOW - 500);
    expect(many.gets).to.deep.equal(['s499', 's498', 's497', 's496', 's495']);
    expect(many.listed).to.have.length(495);
  });

  it('covers every pending operation exactly once, with at most one listing whose window holds every listed submission (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({ id: fc.string({ minLength: 1, maxLength: 6 }), age: fc.integer({ min: 0, max: 30_000 }) }),
          { selector: (o) => o.id, maxLength: 60 },
        ),
        fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: undefined }),
        (ops, listedAgo) => {
          const plan = planOperationPolls(
            ops.map((o) => op(o.id, o.age)),
            NOW,
            listedAgo === undefined ? undefined : NOW - listedAgo,
          );
          const covered = [...plan.gets, ...plan.listed];
          const listedOps = ops.filter((o) => plan.listed.includes(o.id));
          return (
            covered.length === ops.length &&
            new Set(covered).size === ops.length &&
            plan.gets.length < DEFAULT_POLL_POLICY.batchFrom + DEFAULT_POLL_POLICY.individualPerRound &&
            (plan.listSince === undefined) === (plan.listed.length === 0) &&
            // No listed operation can have settled before the window: it was submitted after, or pending at the last listing.
            listedOps.every(
              (o) => plan.listSince! <= Math.max(NOW - o.age, listedAgo === undefined ? -Infinity : NOW - listedAgo),
            )
          );
        },
      ),
    );
  });
});
