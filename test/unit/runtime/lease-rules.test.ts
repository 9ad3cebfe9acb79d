import { expect } from 'chai';
import fc from 'fast-check';
import { microTime } from '../../../src/kube/micro-time.ts';
import {
  mustStepDown,
  observe,
  planLease,
  releasedSpec,
  renewalPatch,
  validateTiming,
  type LeaseObservation,
  type LeaseSpec,
} from '../../../src/runtime/lease-rules.ts';

const DURATION = 15_000;
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);

function held(holder: string, renewAt: number, transitions = 0): LeaseSpec {
  return {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    acquireTime: microTime(T0),
    renewTime: microTime(renewAt),
    leaseTransitions: transitions,
  };
}

describe('leader election rules (Lease, 15 s duration, injected clock)', () => {
  it('formats MicroTime with six fractional digits', () => {
    expect(microTime(Date.UTC(2025, 4, 6, 7, 8, 9, 123))).to.equal('2025-05-06T07:08:09.123000Z');
  });

  it('creates a missing lease, holding it with 0 transitions', () => {
    const plan = planLease(undefined, undefined, 'a', DURATION, T0);
    expect(plan).to.deep.include({ action: 'create', acquired: true });
    expect(plan.action === 'create' && plan.spec).to.deep.equal({
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: microTime(T0),
      renewTime: microTime(T0),
      leaseTransitions: 0,
    });
  });

  it('renews its own lease: new renewTime, same acquireTime and transitions', () => {
    const plan = planLease(held('a', T0, 3), undefined, 'a', DURATION, T0 + 2000);
    expect(plan.action).to.equal('update');
    if (plan.action !== 'update') return;
    expect(plan.acquired).to.equal(false);
    expect(plan.spec.renewTime).to.equal(microTime(T0 + 2000));
    expect(plan.spec.acquireTime).to.equal(microTime(T0));
    expect(plan.spec.leaseTransitions).to.equal(3);
  });

  it('takes a released lease (no holder) at once, counting a transition', () => {
    const released = releasedSpec(held('a', T0, 2), T0 + 1000);
    expect(released.holderIdentity).to.equal(null);
    const obs = observe(undefined, released, T0 + 1000);
    const plan = planLease(released, obs, 'b', DURATION, T0 + 1000);
    expect(plan).to.deep.include({ action: 'update', acquired: true });
    expect(plan.action === 'update' && plan.spec.holderIdentity).to.equal('b');
    expect(plan.action === 'update' && plan.spec.leaseTransitions).to.equal(3);
  });

  it('waits for another holder until the lease has gone unrenewed for its duration on the local clock', () => {
    const lease = held('a', T0);
    let obs: LeaseObservation | undefined = observe(undefined, lease, T0 + 500);
    const early = planLease(lease, obs, 'b', DURATION, T0 + 10_000);
    expect(early).to.deep.equal({ action: 'wait', holder: 'a', expiresInMs: 5500 });
    obs = observe(obs, lease, T0 + 15_499);
    expect(planLease(lease, obs, 'b', DURATION, T0 + 15_499).action).to.equal('wait');
    const late = planLease(lease, obs, 'b', DURATION, T0 + 15_500);
    expect(late).to.deep.include({ action: 'update', acquired: true });
    expect(late.action === 'update' && late.spec.leaseTransitions).to.equal(1);
  });

  it('ignores the renewTime on the wire (clock skew): a stale-looking lease first seen now is still valid for its duration', () => {
    const lease = held('a', T0 - 3_600_000);
    const obs = observe(undefined, lease, T0);
    expect(planLease(lease, obs, 'b', DURATION, T0)).to.deep.equal({
      action: 'wait',
      holder: 'a',
      expiresInMs: DURATION,
    });
  });

  it('a renewal by the holder restarts the expiry clock', () => {
    let obs = observe(undefined, held('a', T0), T0);
    obs = observe(obs, held('a', T0 + 2000), T0 + 14_000);
    expect(planLease(held('a', T0 + 2000), obs, 'b', DURATION, T0 + 20_000)).to.deep.equal({
      action: 'wait',
      holder: 'a',
      expiresInMs: 9000,
    });
  });

  it("uses the holder's leaseDurationSeconds when judging expiry", () => {
    const lease = { ...held('a', T0), leaseDurationSeconds: 60 };
    const obs = observe(undefined, lease, T0);
    expect(planLease(lease, obs, 'b', DURATION, T0 + 30_000).action).to.equal('wait');
  });

  it('a leader steps down once it has not renewed for the renew deadline', () => {
    expect(mustStepDown(T0, 10_000, T0 + 9_999)).to.equal(false);
    expect(mustStepDown(T0, 10_000, T0 + 10_000)).to.equal(true);
  });

  it('a renewal applies only while the candidate holds the Lease and sets nothing else than its duration and renewTime', () => {
    expect(renewalPatch('a', 15_000, T0 + 1_500)).to.deep.equal([
      { op: 'test', path: '/spec/holderIdentity', value: 'a' },
      { op: 'add', path: '/spec/leaseDurationSeconds', value: 15 },
      { op: 'add', path: '/spec/renewTime', value: '2025-01-01T12:00:01.500000Z' },
    ]);
    expect(renewalPatch('a', 14_001, T0)[1]!.value, 'whole seconds, rounded up').to.equal(15);
  });

  it('property: two candidates never both get a write plan for a lease held by a third that is not yet expired', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 14_999 }), fc.integer({ min: 0, max: 100_000 }), (elapsed, seenAt) => {
        const lease = held('c', T0);
        const obs = observe(undefined, lease, T0 + seenAt);
        for (const candidate of ['a', 'b']) {
          expect(planLease(lease, obs, candidate, DURATION, T0 + seenAt + elapsed).action).to.equal('wait');
        }
      }),
    );
  });

  it('validates the timing: retry < renew deadline < lease duration', () => {
    expect(() =>
      validateTiming({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 }),
    ).to.not.throw();
    expect(() => validateTiming({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 })).to.throw(
      /lease duration/,
    );
    expect(() => validateTiming({ leaseDurationMs: 15_000, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).to.throw(
      /renew deadline/,
    );
    expect(() => validateTiming({ leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 0 })).to.throw(
      /retry period/,
    );
  });
});
