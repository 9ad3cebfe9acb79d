// AIMD rate control for one Cloud Map API: a throttling response cuts the allowed rate to 70 % (multiplicative
// decrease), then the rate climbs back linearly with time while no further throttling is seen (additive increase). The
// quota is shared by every cluster of the account, so backing off at once and returning slowly is what lets several
// controllers converge on their share instead of oscillating; any factor below 1 converges, and 0.7 rather than ½
// keeps a saturated quota busier between throttles (two exporters halving on CreateService averaged 3.7–4.2 of its 5/s).
//
// A controller's share of the quota is what it may always use. While it is busy (callers queued) and not throttled it
// may also borrow, climbing past its share up to a ceiling (the controllers' whole part of the quota): a cluster
// syncing alone then runs at nearly the account's rate instead of 1/n of it (M6), and when several are busy at once
// the throttles they cause bring each back towards its share. Borrowed rate is returned as soon as demand stops.
//
// The climb is slow only where throttles were seen lately: within `settleMs` of the last one the rate climbs by
// `recoveryPerSecond`, after that by `quickRecoveryPerSecond`. A controller that meets no contention (a cluster
// syncing alone, a first export of a namespace) then reaches its ceiling in seconds, while contending controllers,
// which throttle each other every few seconds, keep the slow climb that converges on their shares; starting together,
// they pay one round of throttles before the slow climb takes over (as TCP's slow start does).

export interface AdaptiveRateConfig {
  /** The share: requests per second regained after throttling and never exceeded while idle. */
  readonly maxRate: number;
  /** Requests per second reachable by borrowing while busy (at least maxRate; equal to it: no borrowing). */
  readonly ceilingRate: number;
  /** Floor after repeated throttling, so a call is never starved completely. */
  readonly minRate: number;
  /** Factor applied on a throttle (0 < f < 1). */
  readonly decreaseFactor: number;
  /** Requests per second regained (or borrowed) for each second without a throttle, within settleMs of the last. */
  readonly recoveryPerSecond: number;
  /** The same once settleMs passed since the last throttle (or before any): at least recoveryPerSecond. */
  readonly quickRecoveryPerSecond: number;
  /** How long after a throttle the climb stays at recoveryPerSecond. */
  readonly settleMs: number;
  /** Throttles within this window of the last decrease count once: calls already in flight fail together. */
  readonly decreaseCooldownMs: number;
}

/**
 * Defaults derived from the share: 70 % on a throttle, regain the full share in 20 s, no borrowing and no quicker
 * climb unless asked.
 */
export function adaptiveRateConfig(maxRate: number, overrides: Partial<AdaptiveRateConfig> = {}): AdaptiveRateConfig {
  if (!(maxRate > 0))
    throw new RangeError(`rate limit must be a positive number of requests per second, got ${maxRate}`);
  const config = {
    maxRate,
    ceilingRate: maxRate,
    minRate: Math.min(maxRate, Math.max(0.2, maxRate / 100)),
    decreaseFactor: 0.7,
    recoveryPerSecond: maxRate / 20,
    decreaseCooldownMs: 1000,
    settleMs: 60_000,
    ...overrides,
  };
  return {
    ...config,
    ceilingRate: Math.max(config.maxRate, config.ceilingRate),
    quickRecoveryPerSecond: Math.max(config.recoveryPerSecond, overrides.quickRecoveryPerSecond ?? 0),
  };
}

export class AdaptiveRate {
  readonly config: AdaptiveRateConfig;
  /** Rate right after the last decrease or change of demand, and when that was; the rate grows linearly from there. */
  #floor: number;
  #since: number;
  #lastDecrease = Number.NEGATIVE_INFINITY;
  #busy = false;

  constructor(config: AdaptiveRateConfig, now: number) {
    this.config = config;
    this.#floor = config.maxRate;
    this.#since = now;
  }

  /** Allowed requests per second at `now`. */
  rate(now: number): number {
    const quickFrom = Math.max(this.#since, this.#lastDecrease + this.config.settleMs);
    const slowMs = Math.max(0, Math.min(now, quickFrom) - this.#since);
    const quickMs = Math.max(0, now - quickFrom);
    const regained = (this.config.recoveryPerSecond * slowMs + this.config.quickRecoveryPerSecond * quickMs) / 1000;
    return Math.min(this.#busy ? this.config.ceilingRate : this.config.maxRate, this.#floor + regained);
  }

  /**
   * Says whether callers are waiting. Becoming busy starts borrowing from the current rate (so it climbs, never
   * jumps); becoming idle gives the borrowed rate back at once.
   */
  setBusy(now: number, busy: boolean): void {
    if (busy === this.#busy) return;
    this.#floor = this.rate(now);
    this.#since = now;
    this.#busy = busy;
  }

  /** Records a throttling response; returns true when it lowered the rate (false inside the cooldown). */
  onThrottle(now: number): boolean {
    if (now - this.#lastDecrease < this.config.decreaseCooldownMs) return false;
    this.#floor = Math.max(this.config.minRate, this.rate(now) * this.config.decreaseFactor);
    this.#since = now;
    this.#lastDecrease = now;
    return true;
  }
}
