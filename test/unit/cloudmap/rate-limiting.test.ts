import { expect } from 'chai';
import fc from 'fast-check';
import { AdaptiveRate, adaptiveRateConfig } from '../../../src/runtime/adaptive-rate.ts';
import { CLOUD_MAP_QUOTAS, DEFAULT_CONTROLLERS_SHARE, OTHER_APIS } from '../../../src/cloudmap/quotas.ts';
import { RateLimiter } from '../../../src/cloudmap/rate-limits.ts';
import { TokenBucket } from '../../../src/runtime/token-bucket.ts';
import { FakeClock } from '../../support/fake-clock.ts';

const T0 = 1_000_000;

function bucket(rate: number, overrides = {}): { bucket: TokenBucket; limiter: AdaptiveRate; clock: FakeClock } {
  const clock = new FakeClock(T0);
  const limiter = new AdaptiveRate(adaptiveRateConfig(rate, overrides), T0);
  return { bucket: new TokenBucket(limiter, clock), limiter, clock };
}

/** Takes `n` tokens at once and resolves with the clock's time at which each caller was let through, in order. */
async function takeAll(b: TokenBucket, clock: FakeClock, n: number): Promise<number[]> {
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: n }, () =>
      b.take().then(() => {
        times.push(clock.now());
      }),
    ),
  );
  return times;
}

describe('cloudmap token bucket (M6)', () => {
  it('grants a full second of burst at once, then lets callers through 1/rate apart, in arrival order', async () => {
    const { bucket: b, clock } = bucket(10);
    const times = await takeAll(b, clock, 13);
    expect(times.map((t) => t - T0)).to.deep.equal([...Array<number>(10).fill(0), 100, 200, 300]);
  });

  it('lets an urgent caller ahead of those queued, and still at the rate', async () => {
    const { bucket: b, clock } = bucket(10);
    const order: string[] = [];
    const queued = Array.from({ length: 13 }, (_, n) =>
      b.take().then(() => {
        order.push(`q${n}`);
      }),
    );
    const urgent = b.take(true).then(() => {
      order.push('urgent');
    });
    const late = b.take().then(() => {
      order.push('late');
    });
    await Promise.all([...queued, urgent, late]);
    // The burst of 10 went at once; of the callers that had to wait, the urgent one is first, then arrival order.
    expect(order).to.deep.equal([
      ...Array.from({ length: 10 }, (_, n) => `q${n}`),
      'urgent',
      'q10',
      'q11',
      'q12',
      'late',
    ]);
    expect(clock.now() - T0).to.equal(500);
  });

  it('refills with time up to its capacity', async () => {
    const { bucket: b, clock } = bucket(10);
    await takeAll(b, clock, 10);
    expect(b.available(T0 + 500)).to.be.closeTo(5, 1e-9);
    expect(b.available(T0 + 60_000)).to.equal(10);
  });

  it('never lets through more than capacity + rate × elapsed (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 500 }),
        // Pauses of up to seconds, each followed by a burst of callers at once.
        fc.array(
          fc.record({
            gap: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 1000, max: 5000 })),
            calls: fc.integer({ min: 1, max: 300 }),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        async (rate, steps) => {
          const { bucket: b, clock } = bucket(rate);
          const sendTimes: number[] = [];
          for (const { gap, calls } of steps) {
            clock.advance(gap);
            sendTimes.push(...(await takeAll(b, clock, calls)));
          }
          // Within every window [from, to] of the run, not only the whole run, the sends fit the bucket plus the refill
          // (one token of rounding slack): j - i + 1 sends in [t_i, t_j]. A bucket that saves up more than its capacity
          // while idle passes a whole-run check and fails this one.
          const sorted = sendTimes.sort((x, y) => x - y);
          let best = -Infinity; // max over i <= j of rate × t_i / 1000 - i
          return sorted.every((t, j) => {
            best = Math.max(best, (rate * t) / 1000 - j);
            return j + 1 - (rate * t) / 1000 + best <= rate + 1;
          });
        },
      ),
      { numRuns: 50 },
    );
  });

  it('drops the saved-up burst after a throttle', async () => {
    const { bucket: b, clock } = bucket(100);
    expect(b.available(T0)).to.equal(100);
    expect(b.onThrottle(T0)).to.equal(true);
    expect(b.available(T0)).to.equal(0);
    expect(await takeAll(b, clock, 1)).to.deep.equal([T0 + Math.ceil(1000 / 70)]); // cut to 70/s, rounded up to whole ms
  });

  it('lets queued callers through at the rate of each moment: one cut by a throttle and climbing back, not the rate when they arrived', async () => {
    // 100 callers queued right after a throttle cut 10/s to 7/s, which climbs back by 1/s each second. Waits fixed
    // when the callers arrived would let the last one through after 100/7 = 14.3 s; at the climbing rate the queue
    // drains in about 11 s (7 + 1·t integrated reaches 100 at t ≈ 10.7 s, and the rate stays at 10 from 3 s on).
    const { bucket: b, clock } = bucket(10, { recoveryPerSecond: 1 });
    await takeAll(b, clock, 10);
    b.onThrottle(clock.now());
    const start = clock.now();
    const times = await takeAll(b, clock, 100);
    const elapsed = (times.at(-1)! - start) / 1000;
    expect(elapsed).to.be.below(11.5);
    expect(elapsed).to.be.above(100 / 10);
    expect(times).to.deep.equal([...times].sort((x, y) => x - y));
  });
});

describe('cloudmap AIMD rate (M6)', () => {
  it('cuts to 70 % on a throttle and counts throttles within the cooldown once', () => {
    const r = new AdaptiveRate(adaptiveRateConfig(100), T0);
    expect(r.onThrottle(T0)).to.equal(true);
    expect(r.rate(T0)).to.be.closeTo(70, 1e-9);
    expect(r.onThrottle(T0 + 999)).to.equal(false);
    expect(r.onThrottle(T0 + 1000)).to.equal(true);
    expect(r.rate(T0 + 1000)).to.be.closeTo((70 + 5) * 0.7, 1e-9); // recovered 5/s for 1 s, then cut
  });

  it('recovers linearly to the configured rate and no further', () => {
    const r = new AdaptiveRate(adaptiveRateConfig(100), T0);
    r.onThrottle(T0);
    expect(r.rate(T0 + 2000)).to.be.closeTo(80, 1e-9); // 100/20 per second
    expect(r.rate(T0 + 10_000)).to.equal(100);
    expect(r.rate(T0 + 1_000_000)).to.equal(100);
  });

  it('never leaves [minRate, ceilingRate], nor exceeds maxRate while idle, whatever the throttles and demand (property)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.5, max: 5000, noNaN: true }),
        fc.double({ min: 1, max: 10, noNaN: true }),
        fc.double({ min: 1, max: 20, noNaN: true }),
        fc.array(fc.record({ gap: fc.integer({ min: 0, max: 5000 }), throttle: fc.boolean(), busy: fc.boolean() }), {
          maxLength: 200,
        }),
        (max, borrow, quick, steps) => {
          const r = new AdaptiveRate(
            adaptiveRateConfig(max, {
              ceilingRate: max * borrow,
              quickRecoveryPerSecond: (max / 20) * quick,
              settleMs: 3000,
            }),
            T0,
          );
          let now = T0;
          for (const step of steps) {
            now += step.gap;
            r.setBusy(now, step.busy);
            if (step.throttle) r.onThrottle(now);
            const rate = r.rate(now);
            const cap = step.busy ? max * borrow : max;
            if (rate < r.config.minRate - 1e-9 || rate > cap * (1 + 1e-9)) return false;
          }
          return true;
        },
      ),
    );
  });

  it('borrows past its share only while busy: climbing linearly, cut on a throttle, giving it back when idle', () => {
    const r = new AdaptiveRate(adaptiveRateConfig(10, { ceilingRate: 30 }), T0);
    expect(r.rate(T0 + 60_000)).to.equal(10); // idle: the share, however long
    r.setBusy(T0 + 60_000, true);
    expect(r.rate(T0 + 60_000)).to.equal(10); // no jump
    expect(r.rate(T0 + 70_000)).to.be.closeTo(15, 1e-9); // 10/20 per second
    expect(r.rate(T0 + 200_000)).to.equal(30); // the ceiling
    expect(r.onThrottle(T0 + 200_000)).to.equal(true);
    expect(r.rate(T0 + 200_000)).to.be.closeTo(21, 1e-9);
    r.setBusy(T0 + 210_000, false);
    expect(r.rate(T0 + 210_000)).to.equal(10); // borrowed rate returned at once
    r.setBusy(T0 + 220_000, true);
    expect(r.rate(T0 + 220_000)).to.equal(10); // busy again: climbs from the share
  });

  it('climbs quickly while no throttle was seen for settleMs, slowly within settleMs of one', () => {
    const r = new AdaptiveRate(
      adaptiveRateConfig(10, { ceilingRate: 100, recoveryPerSecond: 1, quickRecoveryPerSecond: 5, settleMs: 60_000 }),
      T0,
    );
    r.setBusy(T0, true);
    expect(r.rate(T0 + 2000)).to.be.closeTo(20, 1e-9); // never throttled: 5/s per second
    expect(r.rate(T0 + 17_000)).to.be.closeTo(95, 1e-9);
    expect(r.rate(T0 + 18_000)).to.equal(100);
    expect(r.onThrottle(T0 + 20_000)).to.equal(true);
    expect(r.rate(T0 + 25_000)).to.be.closeTo(75, 1e-9); // within the minute after it: 1/s per second
    r.setBusy(T0 + 25_000, false);
    r.setBusy(T0 + 40_000, true); // busy again, from the share, still within the minute
    expect(r.rate(T0 + 50_000)).to.be.closeTo(20, 1e-9);
    expect(r.rate(T0 + 80_000)).to.be.closeTo(50, 1e-9); // the minute ends here
    expect(r.rate(T0 + 82_000)).to.be.closeTo(60, 1e-9); // then 5/s per second
  });

  it('climbs at one pace when quickRecoveryPerSecond is not set, and never slower than recoveryPerSecond', () => {
    expect(adaptiveRateConfig(10).quickRecoveryPerSecond).to.equal(0.5);
    expect(adaptiveRateConfig(10, { recoveryPerSecond: 2, quickRecoveryPerSecond: 1 }).quickRecoveryPerSecond).to.equal(
      2,
    );
  });

  it('does not borrow when the ceiling is the share (the default)', () => {
    const r = new AdaptiveRate(adaptiveRateConfig(10), T0);
    r.setBusy(T0, true);
    expect(r.rate(T0 + 1_000_000)).to.equal(10);
    expect(adaptiveRateConfig(10, { ceilingRate: 5 }).ceilingRate).to.equal(10);
  });

  it('rejects a rate that is not positive', () => {
    expect(() => adaptiveRateConfig(0)).to.throw(/positive/);
  });
});

describe('cloudmap rate limiter per API (M6)', () => {
  it('uses the overridden rate per API, a share of the quota for others, and the * quota for unknown APIs', async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ clusters: 1, overrides: { RegisterInstance: 2 } }, clock);
    expect(limiter.rate('RegisterInstance')).to.equal(2);
    expect(limiter.rate('DiscoverInstances')).to.equal(
      CLOUD_MAP_QUOTAS.DiscoverInstances!.rate * DEFAULT_CONTROLLERS_SHARE,
    );
    expect(limiter.rate('SomethingNew')).to.equal(CLOUD_MAP_QUOTAS[OTHER_APIS]!.rate * DEFAULT_CONTROLLERS_SHARE);
    const times: number[] = [];
    for (let i = 0; i < 6; i++) {
      await limiter.acquire('RegisterInstance');
      times.push(clock.now() - T0);
    }
    expect(times).to.deep.equal([0, 0, 0, 0, 500, 1000]); // a burst of 4 (the quota's two seconds), then one every 500 ms
  });

  it("sizes the bucket from the quota's burst: DiscoverInstances saves up two seconds", async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ clusters: 1, overrides: { DiscoverInstances: 10 } }, clock);
    for (let i = 0; i < 21; i++) await limiter.acquire('DiscoverInstances');
    expect(clock.sleeps).to.deep.equal([100]);
  });

  it("lets a cluster that calls alone borrow up to the controllers' part of the quota, and no further", async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ clusters: 3 }, clock);
    const controllers = CLOUD_MAP_QUOTAS.CreateService!.rate * DEFAULT_CONTROLLERS_SHARE;
    expect(limiter.rate('CreateService')).to.be.closeTo(controllers / 3, 1e-9);
    // 400 calls one after another, as a sync of new services makes them: the first ones drain the burst and queue.
    for (let i = 0; i < 400; i++) await limiter.acquire('CreateService');
    const elapsed = (clock.now() - T0) / 1000;
    expect(limiter.rate('CreateService')).to.be.closeTo(controllers, 1e-9);
    expect(elapsed).to.be.below(400 / (controllers / 3)); // faster than the share alone would allow
    expect(elapsed).to.be.above((400 - 50) / controllers); // never faster than the ceiling
    clock.advance(60_000); // idle: the bucket fills, the borrowed rate goes back
    expect(limiter.rate('CreateService')).to.be.closeTo(controllers / 3, 1e-9);
  });

  it('climbs from its share to the ceiling within 4 s when nothing throttled it for a minute, over 20 s after a throttle', async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ clusters: 3 }, clock);
    const controllers = CLOUD_MAP_QUOTAS.CreateService!.rate * DEFAULT_CONTROLLERS_SHARE;
    /** Queues callers until the rate reaches the ceiling; returns the seconds from the first wait. */
    const climb = async (): Promise<number> => {
      let queuedAt: number | undefined;
      while (limiter.rate('CreateService') < controllers - 1e-9) {
        const before = clock.now();
        await limiter.acquire('CreateService');
        if (queuedAt === undefined && clock.now() > before) queuedAt = before;
      }
      return (clock.now() - queuedAt!) / 1000;
    };
    expect(await climb()).to.be.at.most(4);
    clock.advance(60_000);
    limiter.onThrottle('CreateService');
    expect(await climb()).to.be.above(14); // cut to its share × 0.7, climbing 1/20 of the ceiling per second
    clock.advance(60_000);
    expect(limiter.rate('CreateService')).to.be.closeTo(controllers / 3, 1e-9);
    expect(await climb()).to.be.at.most(4); // a quiet minute later: quick again
  });

  it('does not borrow for an API whose rate is set outright', async () => {
    const clock = new FakeClock(T0);
    const limiter = new RateLimiter({ clusters: 1, overrides: { RegisterInstance: 2 } }, clock);
    for (let i = 0; i < 200; i++) await limiter.acquire('RegisterInstance');
    expect(limiter.rate('RegisterInstance')).to.equal(2);
  });

  it('slows only the throttled API down', () => {
    const limiter = new RateLimiter({ clusters: 2 }, new FakeClock(T0));
    const share = (api: string) => (CLOUD_MAP_QUOTAS[api]!.rate * DEFAULT_CONTROLLERS_SHARE) / 2;
    limiter.onThrottle('RegisterInstance');
    expect(limiter.rate('RegisterInstance')).to.be.closeTo(share('RegisterInstance') * 0.7, 1e-9);
    expect(limiter.rate('DeregisterInstance')).to.equal(share('DeregisterInstance'));
  });
});
