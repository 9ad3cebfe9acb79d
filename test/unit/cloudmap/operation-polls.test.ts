import { expect } from 'chai';
import fc from 'fast-check';
import { planOperationPolls, type PendingOperation } from '../../../src/cloudmap/operation-polls.ts';

const NOW = 1_000_000;
const op = (id: string, serviceId: string | undefined, age = 0): PendingOperation => ({ id, serviceId, since: NOW - age });

describe('cloudmap operation polling plan (M6)', () => {
  it('lists a service with many pending operations once, and asks for the rest one by one', () => {
    const plan = planOperationPolls([op('a1', 'a'), op('a2', 'a', 300), op('a3', 'a'), op('b1', 'b'), op('x', undefined)], NOW);
    expect(plan.listings).to.deep.equal([{ serviceId: 'a', since: NOW - 300, ids: ['a1', 'a2', 'a3'] }]);
    expect(plan.gets).to.have.members(['b1', 'x']);
  });

  it('asks for operations a listing kept missing one by one', () => {
    const plan = planOperationPolls([op('a1', 'a'), op('a2', 'a'), op('a3', 'a'), op('old', 'a', 20_000)], NOW);
    expect(plan.listings.map((l) => l.ids)).to.deep.equal([['a1', 'a2', 'a3']]);
    expect(plan.gets).to.deep.equal(['old']);
  });

  it('covers every pending operation exactly once and costs at most one call per service plus the stragglers (property)', () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.record({ id: fc.string({ minLength: 1, maxLength: 6 }), serviceId: fc.option(fc.constantFrom('s1', 's2', 's3'), { nil: undefined }), age: fc.integer({ min: 0, max: 30_000 }) }), { selector: (o) => o.id, maxLength: 60 }),
      (ops) => {
        const plan = planOperationPolls(ops.map((o) => op(o.id, o.serviceId, o.age)), NOW);
        const covered = [...plan.gets, ...plan.listings.flatMap((l) => l.ids)];
        const services = new Set(ops.map((o) => o.serviceId));
        return covered.length === ops.length && new Set(covered).size === ops.length &&
          plan.listings.length <= services.size && plan.listings.every((l) => l.ids.length >= 3);
      },
    ));
  });
});
