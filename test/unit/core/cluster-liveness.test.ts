import { expect } from 'chai';
import fc from 'fast-check';
import {
  observeHeartbeats,
  sameSilence,
  silentClusters,
  type Heartbeat,
  type HeartbeatSighting,
} from '../../../src/core/cluster-liveness.ts';

const SKEW = 60_000;
const TTL = 180_000;

function sightings(entries: Record<string, HeartbeatSighting>): Map<string, HeartbeatSighting> {
  return new Map(Object.entries(entries));
}

describe('core/cluster-liveness: dead clusters', () => {
  describe('observeHeartbeats', () => {
    const cases: Array<{
      what: string;
      before: Record<string, HeartbeatSighting>;
      read: Heartbeat[];
      now: number;
      after: Record<string, HeartbeatSighting>;
    }> = [
      {
        what: 'a stamp seen before keeps its sighting',
        before: { b: { stamp: 5, heardAt: 100 } },
        read: [{ clusterId: 'b', stamp: 5 }],
        now: 900_000,
        after: { b: { stamp: 5, heardAt: 100 } },
      },
      {
        what: "a new stamp is heard now, whatever the writer's clock says",
        before: { b: { stamp: 5, heardAt: 100 } },
        read: [{ clusterId: 'b', stamp: 1 }],
        now: 500,
        after: { b: { stamp: 1, heardAt: 500 } },
      },
      {
        what: 'first sight of a recent stamp: heard now',
        before: {},
        read: [{ clusterId: 'b', stamp: 990_000 }],
        now: 1_000_000,
        after: { b: { stamp: 990_000, heardAt: 1_000_000 } },
      },
      {
        what: 'first sight of a stamp from the future (writer clock ahead): heard now',
        before: {},
        read: [{ clusterId: 'b', stamp: 2_000_000 }],
        now: 1_000_000,
        after: { b: { stamp: 2_000_000, heardAt: 1_000_000 } },
      },
      {
        what: 'first sight of an old stamp: heard at the stamp plus the skew allowance',
        before: {},
        read: [{ clusterId: 'b', stamp: 100_000 }],
        now: 1_000_000,
        after: { b: { stamp: 100_000, heardAt: 160_000 } },
      },
      {
        what: 'a heartbeat that is gone is forgotten',
        before: { b: { stamp: 5, heardAt: 100 } },
        read: [],
        now: 1000,
        after: {},
      },
    ];
    for (const c of cases) {
      it(c.what, () => {
        expect(Object.fromEntries(observeHeartbeats(sightings(c.before), c.read, c.now, SKEW))).to.deep.equal(c.after);
      });
    }
  });

  describe('silentClusters', () => {
    const s = sightings({
      a: { stamp: 1, heardAt: 0 },
      b: { stamp: 1, heardAt: 820_000 },
      c: { stamp: 1, heardAt: 819_999 },
    });
    const cases: Array<{ what: string; now: number; ttl: number; self: string; silent: Record<string, number> }> = [
      {
        what: 'silent when heard last more than the TTL ago (c by 1 ms; b, exactly the TTL ago, not yet)',
        now: 1_000_000,
        ttl: TTL,
        self: 'x',
        silent: { a: 0, c: 819_999 },
      },
      { what: 'this cluster is never silent', now: 1_000_000, ttl: TTL, self: 'a', silent: { c: 819_999 } },
      { what: 'TTL 0 turns the judgement off', now: 1_000_000, ttl: 0, self: 'x', silent: {} },
      { what: 'within the TTL everybody is live', now: 100_000, ttl: TTL, self: 'x', silent: {} },
    ];
    for (const c of cases) {
      it(c.what, () => {
        expect(Object.fromEntries(silentClusters(s, c.now, c.ttl, c.self))).to.deep.equal(c.silent);
      });
    }

    it('a cluster without a heartbeat (another controller, an older version) is never silent', () => {
      expect(silentClusters(new Map(), 1e12, TTL, 'x').size).to.equal(0);
    });
  });

  describe('properties', () => {
    const cluster = fc.constantFrom('a', 'b', 'c');
    /** A run: reads at increasing reader times, each listing some clusters' stamps. */
    const run = fc.array(
      fc.record({
        dt: fc.integer({ min: 0, max: 120_000 }),
        read: fc.array(fc.record({ clusterId: cluster, stamp: fc.integer({ min: 0, max: 50 }) }), { maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 30 },
    );

    it('a cluster whose stamp changed within the TTL is live, whatever the clocks', () => {
      fc.assert(
        fc.property(run, fc.integer({ min: 0, max: 1e12 }), (reads, start) => {
          let now = start;
          let seen = new Map<string, HeartbeatSighting>();
          const changedAt = new Map<string, number>();
          for (const { dt, read } of reads) {
            now += dt;
            const unique = [...new Map(read.map((h) => [h.clusterId, h])).values()];
            for (const h of unique)
              if (seen.has(h.clusterId) && seen.get(h.clusterId)!.stamp !== h.stamp) changedAt.set(h.clusterId, now);
            for (const id of seen.keys()) if (!unique.some((h) => h.clusterId === id)) changedAt.delete(id);
            seen = observeHeartbeats(seen, unique, now, SKEW);
            const silent = silentClusters(seen, now, TTL, 'none');
            for (const [id, at] of changedAt) if (seen.has(id) && now - at <= TTL && silent.has(id)) return false;
          }
          return true;
        }),
        { numRuns: 500 },
      );
    });

    it('a stamp that stays the same for longer than the TTL is silent, and its last-heard time never moves', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 1e12 }),
          fc.integer({ min: -1e6, max: 1e6 }),
          fc.array(fc.integer({ min: 1, max: 60_000 }), { minLength: 1, maxLength: 20 }),
          (start, skew, steps) => {
            let now = start;
            let seen = observeHeartbeats(new Map(), [{ clusterId: 'b', stamp: start + skew }], now, SKEW);
            const heardAt = seen.get('b')!.heardAt;
            if (heardAt > now) return false;
            for (const dt of steps) {
              now += dt;
              seen = observeHeartbeats(seen, [{ clusterId: 'b', stamp: start + skew }], now, SKEW);
              if (seen.get('b')!.heardAt !== heardAt) return false;
              if (silentClusters(seen, now, TTL, 'a').has('b') !== now - heardAt > TTL) return false;
            }
            return true;
          },
        ),
        { numRuns: 500 },
      );
    });

    it('first sight never calls a writer silent whose clock is behind by no more than the allowance', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 1e12 }),
          fc.integer({ min: 0, max: SKEW }),
          fc.integer({ min: 0, max: TTL }),
          (now, behind, age) => {
            // Written `age` ago by a clock `behind` ms slow: the stamp reads age + behind old.
            const seen = observeHeartbeats(new Map(), [{ clusterId: 'b', stamp: now - age - behind }], now, SKEW);
            return !silentClusters(seen, now, TTL, 'a').has('b');
          },
        ),
        { numRuns: 1000 },
      );
    });
  });

  it('sameSilence compares clusters and when each was heard last', () => {
    expect(sameSilence(new Map([['a', 1]]), new Map([['a', 1]]))).to.equal(true);
    expect(sameSilence(new Map([['a', 1]]), new Map([['a', 2]]))).to.equal(false);
    expect(sameSilence(new Map([['a', 1]]), new Map())).to.equal(false);
  });
});
