import { expect } from 'chai';
import fc from 'fast-check';
import {
  checksPerMinute,
  dueChecks,
  listingDue,
  resyncPeriodMs,
  type ResyncPace,
} from '../../../src/change-detection/resync-pace.ts';

const PACE: ResyncPace = { intervalMs: 300_000, budgetPerMinute: 60, stepMs: 750 };

/**
 * Runs the pace over a ClusterSet whose services come and go: steps every `pace.stepMs`, from time 0; `events(step)`
 * says what else happens before that step (services appear, read once as they are first seen, or vanish; other reads,
 * as a marker makes). Returns, per service, the times it was read, and the checks made.
 */
function simulate(
  pace: ResyncPace,
  steps: number,
  events: (step: number, now: number, services: Map<number, number>) => void,
): { reads: Map<number, number[]>; checks: number } {
  const lastRead = new Map<number, number>();
  const reads = new Map<number, number[]>();
  let carry = 0;
  let checks = 0;
  for (let step = 0; step < steps; step++) {
    const now = step * pace.stepMs;
    const before = new Map(lastRead);
    events(step, now, lastRead);
    for (const [service, read] of lastRead)
      if (before.get(service) !== read) reads.set(service, [...(reads.get(service) ?? []), read]);
    const services = [...lastRead.keys()];
    const due = dueChecks(
      carry,
      step === 0 ? 0 : pace.stepMs,
      services.map((s) => lastRead.get(s)!),
      now,
      pace,
    );
    carry = due.carry;
    for (const i of due.checks) {
      lastRead.set(services[i]!, now);
      reads.get(services[i]!)!.push(now);
    }
    checks += due.checks.length;
  }
  return { reads, checks };
}

/** The longest time a service went without a read, while it existed, up to `end`. */
function longestGap(reads: readonly number[], end: number, vanishedAt = end): number {
  let gap = 0;
  for (let i = 1; i < reads.length; i++) gap = Math.max(gap, reads[i]! - reads[i - 1]!);
  return Math.max(gap, vanishedAt - reads[reads.length - 1]! - 1);
}

describe('cloudmap safety-net resync pace (M6)', () => {
  it('checks every service within the interval while the budget allows, and stays within the budget beyond', () => {
    expect(resyncPeriodMs(100, PACE)).to.equal(299_250); // a check falls due at a step no later than 300 s
    expect(checksPerMinute(100, PACE)).to.be.closeTo(20.05, 0.01);
    expect(resyncPeriodMs(5000, PACE)).to.equal(5000_000); // 83 min
    expect(checksPerMinute(5000, PACE)).to.equal(60);
    expect(checksPerMinute(0, PACE)).to.equal(0);
    expect(resyncPeriodMs(0, PACE)).to.equal(299_250);
  });

  it('spreads the checks over the steps, carrying fractions, longest unread first', () => {
    const pace = { ...PACE, stepMs: 500 };
    let carry = 0;
    const picked: number[][] = [];
    const lastReads = Array.from({ length: 5000 }, (_, i) => 5000 - i); // service 4999 read longest ago
    for (let i = 0; i < 6; i++) {
      const step = dueChecks(carry, 500, lastReads, 10_000, pace); // 0.5 check per 500 ms step
      picked.push(step.checks);
      carry = step.carry;
    }
    expect(picked).to.deep.equal([[], [4999], [], [4999], [], [4999]]); // (the caller records the read)
  });

  it('re-reads a service first seen in the middle of the others within one interval of that read', () => {
    // Ten services read at start; an eleventh first read 150 s later (found by a listing, or named by a marker).
    const { reads } = simulate(PACE, 1200, (step, now, services) => {
      if (step === 0) for (let s = 0; s < 10; s++) services.set(s, 0);
      if (now === 150_000) services.set(10, now);
    });
    const late = reads.get(10)!;
    expect(late[1]! - late[0]!).to.be.at.most(300_000);
    for (const [, r] of reads) expect(longestGap(r, 1200 * PACE.stepMs)).to.be.at.most(300_000);
  });

  it('lists every namespace again within one period of the last listing, even when it found nothing', () => {
    // Started on an empty Cloud Map: the listing found no service; the next is due one period later, less a step and
    // the listing's duration, so a namespace is listed again within one period, and what it finds read at the next step.
    const last = { startedAt: 1000, durationMs: 400 };
    const dueAt = 1000 + resyncPeriodMs(0, PACE) - PACE.stepMs - 400;
    expect(listingDue(last, dueAt - 1, 0, PACE)).to.equal(false);
    expect(listingDue(last, dueAt, 0, PACE)).to.equal(true);
    expect(listingDue(undefined, 0, 0, PACE)).to.equal(true);
    // A service created just after a namespace was listed: listed again, then read, within the interval.
    expect(dueAt + PACE.stepMs + 400 + PACE.stepMs - (1000 + 400)).to.be.at.most(PACE.intervalMs);
  });

  it('reads every service again within one period plus one step of its last read, whatever comes and goes (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          intervalMs: fc.integer({ min: 1000, max: 120_000 }),
          budgetPerMinute: fc.integer({ min: 1, max: 600 }),
          stepMs: fc.integer({ min: 100, max: 1000 }),
        }),
        fc.array(
          fc.record({
            at: fc.integer({ min: 0, max: 399 }),
            kind: fc.constantFrom('appear', 'vanish', 'read'),
            service: fc.integer({ min: 0, max: 40 }),
          }),
          { maxLength: 120 },
        ),
        fc.integer({ min: 0, max: 40 }),
        (pace, events, initial) => {
          const steps = 400;
          const vanished = new Map<number, number>();
          let most = initial;
          const { reads } = simulate(pace, steps, (step, now, services) => {
            if (step === 0) for (let s = 0; s < initial; s++) services.set(s, 0);
            for (const e of events.filter((x) => x.at === step)) {
              if (e.kind === 'appear' && !services.has(e.service)) services.set(e.service, now);
              if (e.kind === 'read' && services.has(e.service)) services.set(e.service, now);
              if (e.kind === 'vanish' && services.delete(e.service)) vanished.set(e.service, now);
            }
            most = Math.max(most, services.size);
          });
          const bound = resyncPeriodMs(most, pace) + pace.stepMs;
          const end = steps * pace.stepMs;
          for (const [service, r] of reads) {
            // A service that vanished and came back: its reads before it vanished are its own span.
            if (vanished.has(service) && events.some((e) => e.kind === 'appear' && e.service === service)) continue;
            if (longestGap(r, end, vanished.get(service) ?? end) > bound) return false;
          }
          return true;
        },
      ),
    );
  });

  it('costs no more than the pace, plus one check of each service for reads that bunched (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 100, max: 1000 }),
        (services, budgetPerMinute, stepMs) => {
          const pace = { intervalMs: 20_000, budgetPerMinute, stepMs };
          const steps = 800;
          // Every service read at once at start, as the first read does.
          const { checks } = simulate(pace, steps, (step, _now, known) => {
            if (step === 0) for (let s = 0; s < services; s++) known.set(s, 0);
          });
          const paced = (checksPerMinute(services, pace) * (steps - 1) * stepMs) / 60_000;
          return checksPerMinute(services, pace) <= budgetPerMinute + 1e-9 && checks <= paced + services + 1;
        },
      ),
      { numRuns: 50 },
    );
  });
});
