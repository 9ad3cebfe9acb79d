// The decisions of leader election on a coordination.k8s.io/v1 Lease, as pure functions of the lease, what this
// candidate observed and the time, so they are tested with an injected clock. The I/O loop is leader-election.ts.
//
// As in client-go, expiry is judged on this candidate's own clock: a lease counts as expired when its record has not
// changed for leaseDurationSeconds since this candidate last saw it change, never by comparing renewTime with the local
// clock (clocks of two machines differ).

import { microTime } from '../kube/micro-time.ts';
import type { JsonPatchOp } from '../kube/client.ts';

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

/** The lease record as this candidate last saw it, and when (its own clock) it saw that record first. */
export interface LeaseObservation {
  readonly record: string;
  readonly observedAt: number;
}

export type LeasePlan =
  | { readonly action: 'create' | 'update'; readonly spec: LeaseSpec; readonly acquired: boolean }
  | { readonly action: 'wait'; readonly holder: string; readonly expiresInMs: number };

function recordOf(spec: LeaseSpec): string {
  return JSON.stringify([
    spec.holderIdentity ?? '',
    spec.renewTime ?? '',
    spec.acquireTime ?? '',
    spec.leaseTransitions ?? 0,
  ]);
}

/** Updates the observation: a changed record restarts the expiry clock, an unchanged one keeps it. */
export function observe(previous: LeaseObservation | undefined, spec: LeaseSpec, now: number): LeaseObservation {
  const record = recordOf(spec);
  return previous && previous.record === record ? previous : { record, observedAt: now };
}

/**
 * What `identity` should write: create the lease, renew it (already held), take it over (free, released or expired),
 * or wait for the current holder's lease to run out.
 */
export function planLease(
  current: LeaseSpec | undefined,
  observation: LeaseObservation | undefined,
  identity: string,
  leaseDurationMs: number,
  now: number,
): LeasePlan {
  const leaseDurationSeconds = Math.ceil(leaseDurationMs / 1000);
  const fresh = (transitions: number): LeaseSpec => ({
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: microTime(now),
    renewTime: microTime(now),
    leaseTransitions: transitions,
  });
  if (!current) return { action: 'create', spec: fresh(0), acquired: true };
  const holder = current.holderIdentity ?? '';
  if (holder === identity) {
    return { action: 'update', spec: { ...current, leaseDurationSeconds, renewTime: microTime(now) }, acquired: false };
  }
  const transitions = (current.leaseTransitions ?? 0) + 1;
  if (holder === '') return { action: 'update', spec: fresh(transitions), acquired: true };
  const holderDurationMs = (current.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
  const observedAt = observation && observation.record === recordOf(current) ? observation.observedAt : now;
  const expiresInMs = observedAt + holderDurationMs - now;
  if (expiresInMs > 0) return { action: 'wait', holder, expiresInMs };
  return { action: 'update', spec: fresh(transitions), acquired: true };
}

/** The spec written on graceful release: no holder, so a standby takes over at its next try instead of waiting. */
export function releasedSpec(current: LeaseSpec, now: number): LeaseSpec {
  return { ...current, holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime(now) };
}

/** A leader that has not renewed for renewDeadlineMs must stop leading before its lease can expire for others. */
export function mustStepDown(lastRenewAt: number, renewDeadlineMs: number, now: number): boolean {
  return now - lastRenewAt >= renewDeadlineMs;
}

/**
 * The holder's renewal as a JSON Patch: the apiserver applies it only while `identity` still holds the Lease (a failed
 * `test` is a 422) and it carries no resourceVersion, so renewals need not wait for each other's answers: a slow
 * answer, or none on a stalled connection, does not hold back the next renewal.
 */
export function renewalPatch(identity: string, leaseDurationMs: number, now: number): JsonPatchOp[] {
  return [
    { op: 'test', path: '/spec/holderIdentity', value: identity },
    { op: 'add', path: '/spec/leaseDurationSeconds', value: Math.ceil(leaseDurationMs / 1000) },
    { op: 'add', path: '/spec/renewTime', value: microTime(now) },
  ];
}

export interface LeaderElectionTiming {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** client-go's constraints: the leader must give up (renew deadline) before others may take over (lease duration). */
export function validateTiming(t: LeaderElectionTiming): void {
  if (!(t.retryPeriodMs > 0))
    throw new Error(`leader election: retry period must be positive, got ${t.retryPeriodMs} ms`);
  if (!(t.renewDeadlineMs > t.retryPeriodMs)) {
    throw new Error(
      `leader election: renew deadline (${t.renewDeadlineMs} ms) must be longer than the retry period (${t.retryPeriodMs} ms)`,
    );
  }
  if (!(t.leaseDurationMs > t.renewDeadlineMs)) {
    throw new Error(
      `leader election: lease duration (${t.leaseDurationMs} ms) must be longer than the renew deadline (${t.renewDeadlineMs} ms)`,
    );
  }
}
