import { expect } from 'chai';
import fc from 'fast-check';
import { forEachLimited } from '../../../src/runtime/for-each-limited.ts';
import { inClusterset, sameInstances } from '../../../src/cloudmap/instance-set.ts';
import { OwnershipError } from '../../../src/cloudmap/errors.ts';
import { assertOwnInstance } from '../../../src/cloudmap/ownership.ts';
import { collectPages } from '../../../src/runtime/paging.ts';
import type { CloudMapInstance } from '../../../src/core/types.ts';

const inst = (id: string, attributes: Record<string, string> = {}): CloudMapInstance => ({ id, attributes });
const me = { clusterId: 'cls1', clustersetId: 'set-1' };

describe('cloudmap instance lists', () => {
  it('filters by CLUSTERSET_ID (M5)', () => {
    expect(
      inClusterset(
        [inst('a', { CLUSTERSET_ID: 'set-1' }), inst('b', { CLUSTERSET_ID: 'set-2' }), inst('c')],
        'set-1',
      ).map((i) => i.id),
    ).to.deep.equal(['a']);
  });

  it('compares instance sets regardless of order, attribute by attribute', () => {
    expect(sameInstances([inst('a', { X: '1' }), inst('b')], [inst('b'), inst('a', { X: '1' })])).to.equal(true);
    expect(sameInstances([inst('a', { X: '1' })], [inst('a', { X: '2' })])).to.equal(false);
    expect(sameInstances([inst('a', { X: '1' })], [inst('a', { Y: '1' })])).to.equal(false);
    expect(sameInstances([inst('a')], [inst('a'), inst('b')])).to.equal(false);
  });

  it('sameInstances is symmetric and holds for shuffles (property)', () => {
    const instances = fc.uniqueArray(
      fc.record({
        id: fc.string({ minLength: 1, maxLength: 4 }),
        attributes: fc.dictionary(fc.constantFrom('A', 'B'), fc.constantFrom('1', '2')),
      }),
      { selector: (i) => i.id, maxLength: 8 },
    );
    fc.assert(
      fc.property(
        instances,
        instances,
        (a, b) => sameInstances(a, b) === sameInstances(b, a) && sameInstances(a, [...a].reverse()),
      ),
    );
  });
});

describe('cloudmap ownership guard (M4)', () => {
  it("accepts this cluster's instances", () => {
    expect(() =>
      assertOwnInstance(inst('x', { CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'set-1' }), me, 'register', 'service id srv-1'),
    ).to.not.throw();
  });

  it("refuses another cluster's, another ClusterSet's or an unlabelled instance with a clear message", () => {
    expect(() =>
      assertOwnInstance(
        inst('x', { CLUSTER_ID: 'cls2', CLUSTERSET_ID: 'set-1' }),
        me,
        'deregister',
        'service id srv-1',
      ),
    ).to.throw(
      OwnershipError,
      /refusing to deregister Cloud Map instance "x" in service id srv-1: it has CLUSTER_ID="cls2".*M4/,
    );
    expect(() =>
      assertOwnInstance(inst('x', { CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'set-2' }), me, 'register', 's'),
    ).to.throw(OwnershipError, /CLUSTERSET_ID="set-2"/);
    expect(() => assertOwnInstance(inst('x'), me, 'register', 's')).to.throw(OwnershipError, /CLUSTER_ID=\(missing\)/);
  });
});

describe('cloudmap paging and bounded parallelism', () => {
  it('follows NextToken and stops on a repeated token', async () => {
    const pages: Record<string, { items: number[]; nextToken?: string }> = {
      start: { items: [1, 2], nextToken: 't1' },
      t1: { items: [3], nextToken: 't2' },
      t2: { items: [4], nextToken: 't1' },
    };
    expect(await collectPages(async (token) => pages[token ?? 'start']!)).to.deep.equal([1, 2, 3, 4]);
  });

  it('runs every item with at most `limit` in flight and returns the failures', async () => {
    let inFlight = 0;
    let peak = 0;
    const failures = await forEachLimited([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      if (n % 3 === 0) throw new Error(`bad ${n}`);
    });
    expect(peak).to.equal(3);
    expect(failures.map((f) => f.item)).to.deep.equal([3, 6]);
  });
});
