// AIMD rate control for one Cloud Map API: a throttling response halves the allowed rate (multiplicative decrease),
// then the rate climbs back linearly with time while no further throttling is seen (additive increase), up to the
// configured rate. The quota is shared by every cluster of the account, so backing off quickly and returning slowly
// is what lets several controllers converge on their share instead of oscillating.

export interface AdaptiveRateConfig {
  /** The configured requests per second; never exceeded. */
  readonly maxRate: number;
  /** Floor after repeated throttling, so a call is never starved completely. */
  readonly minRate: number;
  /** Factor applied on a throttle (0 < f < 1). */
  readonly decreaseFactor: number;
  /** Requests per second regained for each second without a throttle. */
  readonly recoveryPerSecond: number;
  /** Throttles within this window of the last decrease count once: calls already in flight fail together. */
  readonly decreaseCooldownMs: number;
}

/** Defaults derived from the configured rate: halve on throttle, regain the full rate in 20 s. */
export function adaptiveRateConfig(maxRate: number, overrides: Partial<AdaptiveRateConfig> = {}): AdaptiveRateConfig {
  if (!(maxRate > 0)) throw new RangeError(`rate limit must be a positive number of requests per second, got ${maxRate}`);
  return {
    maxRate,
    minRate: Math.min(maxRate, Math.max(0.2, maxRate / 100)),
    decreaseFactor: 0.5,
    recoveryPerSecond: maxRate / 20,
    decreaseCooldownMs: 1000,
    ...overrides,
  };
}

export class AdaptiveRate {
  readonly config: AdaptiveRateConfig;
  /** Rate right after the last decrease, and when that was; the current rate grows linearly from there. */
  private floor: number;
  private since: number;
  private lastDecrease = Number.NEGATIVE_INFINITY;

  constructor(config: AdaptiveRateConfig, now: number) {
    this.config = config;
    this.floor = config.maxRate;
    this.since = now;
  }

  /** Allowed requests per second at `now`. */
  rate(now: number): number {
    const regained = (this.config.recoveryPerSecond * Math.max(0, now - this.since)) / 1000;
    return Math.min(this.config.maxRate, this.floor + regained);
  }

  /** Records a throttling response; returns true when it lowered the rate (false inside the cooldown). */
  onThrottle(now: number): boolean {
    if (now - this.lastDecrease < this.config.decreaseCooldownMs) return false;
    this.floor = Math.max(this.config.minRate, this.rate(now) * this.config.decreaseFactor);
    this.since = now;
    this.lastDecrease = now;
    return true;
  }
}
