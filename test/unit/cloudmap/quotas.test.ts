import { expect } from 'chai';
import fc from 'fast-check';
import {
  clientLimits,
  CLOUD_MAP_QUOTAS,
  DEFAULT_CONTROLLERS_SHARE,
  OTHER_APIS,
  quotaLowerBoundSeconds,
} from '../../../src/cloudmap/quotas.ts';

describe('cloudmap client limits from the account quotas (M6)', () => {
  it('gives each of n clusters an equal share of 80% of the documented quotas', () => {
    const limits = clientLimits({ clusters: 4 });
    expect(limits.DiscoverInstances).to.deep.equal({ rate: 200, burst: 400, ceiling: 800 });
    expect(limits.DiscoverInstancesRevision).to.deep.equal({ rate: 600, burst: 600, ceiling: 2400 });
    expect(limits[OTHER_APIS]!.rate).to.equal((CLOUD_MAP_QUOTAS[OTHER_APIS]!.rate * DEFAULT_CONTROLLERS_SHARE) / 4);
  });

  it("takes an account's own quotas and explicit overrides, scaling the burst with the rate", () => {
    const limits = clientLimits({
      clusters: 2,
      quotas: { DiscoverInstances: 500, NewApi: 10 },
      overrides: { RegisterInstance: 7 },
    });
    expect(limits.DiscoverInstances).to.deep.equal({ rate: 200, burst: 400, ceiling: 400 });
    expect(limits.NewApi).to.deep.equal({ rate: 4, burst: 8, ceiling: 8 }); // the * quota's burst ratio
    expect(limits.RegisterInstance).to.deep.equal({ rate: 7, burst: 14, ceiling: 7 });
  });

  it("gives the controllers the share of the quotas they are given, an account of the ClusterSet's alone all of it", () => {
    const limits = clientLimits({ clusters: 3, share: 1 });
    expect(limits.CreateService).to.deep.equal({ rate: 5 / 3, burst: 50 / 3, ceiling: 5 });
    expect(clientLimits({ clusters: 1, share: 0.5 }).CreateService).to.deep.equal({
      rate: 2.5,
      burst: 25,
      ceiling: 2.5,
    });
    for (const share of [0, -0.1, 1.01, Number.NaN]) {
      expect(() => clientLimits({ clusters: 1, share }), String(share)).to.throw(RangeError, 'must be in (0, 1]');
    }
  });

  it('never lets the clusters together exceed the share of any quota, nor one borrow past it, and always leaves a bucket of one (property)', () => {
    const apis = Object.keys(CLOUD_MAP_QUOTAS);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.dictionary(fc.constantFrom(...apis), fc.double({ min: 0.01, max: 10_000, noNaN: true })),
        fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
        (clusters, quotas, percent) => {
          const share = percent === undefined ? DEFAULT_CONTROLLERS_SHARE : percent / 100;
          const limits = clientLimits({ clusters, quotas, ...(percent === undefined ? {} : { share }) });
          return apis.every((api) => {
            const quota = quotas[api] ?? CLOUD_MAP_QUOTAS[api]!.rate;
            const l = limits[api]!;
            return (
              l.rate * clusters <= quota * share * (1 + 1e-9) &&
              l.burst >= 1 &&
              l.ceiling >= l.rate &&
              l.ceiling <= quota * share * (1 + 1e-9)
            );
          });
        },
      ),
    );
  });
});

describe('cloudmap lower bound of a sync from the quotas (M6)', () => {
  it("is the slowest API's calls beyond its burst at its rate", () => {
    // 1,000 new services × 3 instances: CreateService (5/s, burst 50) decides, not RegisterInstance (50/s, burst 100).
    expect(quotaLowerBoundSeconds({ CreateService: 1000, RegisterInstance: 3000 }, CLOUD_MAP_QUOTAS)).to.equal(190);
    expect(quotaLowerBoundSeconds({ CreateService: 1000 }, clientLimits({ clusters: 1 }))).to.equal(240);
    expect(quotaLowerBoundSeconds({ SomethingElse: 30 }, CLOUD_MAP_QUOTAS)).to.equal(1);
    expect(quotaLowerBoundSeconds({}, CLOUD_MAP_QUOTAS)).to.equal(0);
  });
});
