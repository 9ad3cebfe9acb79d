// Dealing spec files to the test lanes (hack/test-lanes.ts): pure, no processes.
import { expect } from 'chai';
import fc from 'fast-check';
import { dealLanes, lanePorts } from '../../../hack/test-lanes.ts';

describe('test lanes', () => {
  it('deals the longest files first, each to the lane that ends earliest, and keeps each lane in path order', () => {
    const seconds = { 'e/a.test.ts': 100, 'e/b.test.ts': 60, 'e/c.test.ts': 50, 'e/d.test.ts': 40 };
    expect(dealLanes(Object.keys(seconds), seconds, 2)).to.deep.equal([
      ['e/a.test.ts', 'e/d.test.ts'],
      ['e/b.test.ts', 'e/c.test.ts'],
    ]);
  });

  it('counts a file with no recorded duration as 30 s and drops empty lanes', () => {
    expect(dealLanes(['x.test.ts', 'y.test.ts'], { 'x.test.ts': 45 }, 3)).to.deep.equal([['x.test.ts'], ['y.test.ts']]);
  });

  it('deals every file exactly once, and no lane ends later than the best split by more than the longest file', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 600 }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 6 }),
        (costs, lanes) => {
          const seconds = Object.fromEntries(costs.map((c, i) => [`f${String(i).padStart(2, '0')}.test.ts`, c]));
          const dealt = dealLanes(Object.keys(seconds), seconds, lanes);
          expect(dealt.flat().sort()).to.deep.equal(Object.keys(seconds).sort());
          expect(dealt.length).to.be.at.most(lanes);
          const totals = dealt.map((l) => l.reduce((s, f) => s + seconds[f]!, 0));
          const ideal = costs.reduce((a, b) => a + b, 0) / lanes;
          expect(Math.max(...totals)).to.be.at.most(ideal + Math.max(...costs));
        },
      ),
    );
  });

  it("gives each lane its own port range, all below the kernel's ephemeral ports", () => {
    const ranges = [0, 1, 2, 3].map((i) => lanePorts(i, 4).split('-').map(Number) as [number, number]);
    expect(ranges[0]![0]).to.equal(20_000);
    for (const [i, [first, last]] of ranges.entries()) {
      expect(last).to.be.below(32_768);
      expect(first).to.be.below(last);
      if (i > 0) expect(first).to.equal(ranges[i - 1]![1] + 1);
    }
  });
});
