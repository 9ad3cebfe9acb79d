import { expect } from 'chai';
import fc from 'fast-check';
import { startOrder } from '../../../../../src/worker/controllers/export/start-order.ts';

describe('worker start order of ServiceExports (M6)', () => {
  const keys = Array.from({ length: 200 }, (_, i) => `bench-${i % 10}/svc-${i}`);

  it('reconciles every key once, in an order fixed for a cluster', () => {
    const order = startOrder('cls1', keys);
    expect([...order].sort()).to.deep.equal([...keys].sort());
    expect(startOrder('cls1', [...keys].reverse())).to.deep.equal(order);
  });

  it('gives two clusters exporting the same services different orders, so they rarely create one at the same moment', () => {
    const [a, b] = [startOrder('cls1', keys), startOrder('cls2', keys)];
    // Position of each key in cls2's order for cls1's first quarter: spread over the whole list, not also first.
    const firstQuarterOfA = new Set(a.slice(0, 50));
    const alsoEarlyInB = b.slice(0, 50).filter((k) => firstQuarterOfA.has(k)).length;
    expect(alsoEarlyInB).to.be.below(30); // 12.5 expected by chance; 50 if the orders were the same
    expect(a[0]!.split('/')[0], 'two clusters start in different namespaces').to.not.equal(b[0]!.split('/')[0]);
  });

  it('takes one namespace after the other, so the first exports wait for one Cloud Map namespace, not all', () => {
    const namespaces = startOrder('cls1', keys).map((k) => k.split('/')[0]!);
    const runs = namespaces.filter((ns, i) => i === 0 || ns !== namespaces[i - 1]);
    expect(runs).to.have.length(10);
    expect(new Set(runs).size).to.equal(10);
  });

  it('is a permutation of any key list (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.uniqueArray(fc.string()), (cluster, list) => {
        const order = startOrder(cluster, list);
        return (
          order.length === list.length && new Set(order).size === list.length && order.every((k) => list.includes(k))
        );
      }),
    );
  });
});
