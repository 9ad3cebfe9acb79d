// Client-side rate limits, one adaptive token bucket per Cloud Map API (M6), sized by quotas.ts from the account's
// quotas and the number of clusters that share them, borrowing up to the limit's ceiling while busy. Within a minute
// of a throttle the rate climbs by 1/20 of the ceiling per second, so contending clusters converge on their shares;
// after a quiet minute by 1/4, so a cluster alone reaches the ceiling within 4 s however many share the quota.
import { AdaptiveRate, adaptiveRateConfig, type AdaptiveRateConfig } from '../runtime/adaptive-rate.ts';
import type { Clock } from '../runtime/clock.ts';
import { clientLimits, OTHER_APIS, type ClientLimit, type ClientLimitInput } from './quotas.ts';
import { TokenBucket } from '../runtime/token-bucket.ts';

export class RateLimiter {
  readonly #limits: Readonly<Record<string, ClientLimit>>;
  readonly #clock: Clock;
  readonly #tuning: Partial<AdaptiveRateConfig>;
  readonly #buckets = new Map<string, TokenBucket>();

  /** `tuning` overrides the AIMD parameters of every bucket. */
  constructor(limits: ClientLimitInput, clock: Clock, tuning: Partial<AdaptiveRateConfig> = {}) {
    this.#limits = clientLimits(limits);
    this.#clock = clock;
    this.#tuning = tuning;
  }

  #bucket(api: string): TokenBucket {
    let bucket = this.#buckets.get(api);
    if (!bucket) {
      const now = this.#clock.now();
      const limit = this.#limits[api] ?? this.#limits[OTHER_APIS]!;
      bucket = new TokenBucket(
        new AdaptiveRate(
          adaptiveRateConfig(limit.rate, {
            ceilingRate: limit.ceiling,
            recoveryPerSecond: limit.ceiling / 20,
            quickRecoveryPerSecond: limit.ceiling / 4,
            ...this.#tuning,
          }),
          now,
        ),
        this.#clock,
        limit.burst / limit.rate,
      );
      this.#buckets.set(api, bucket);
    }
    return bucket;
  }

  /** Waits until `api` may be called; an `urgent` caller goes ahead of those waiting (token-bucket.ts). */
  acquire(api: string, urgent = false): Promise<void> {
    return this.#bucket(api).take(urgent);
  }

  /** Gives back a token taken by acquire() and not used for a request. */
  refund(api: string): void {
    this.#bucket(api).refund(this.#clock.now());
  }

  /** Slows `api` down after a throttling response; true when the rate was lowered. */
  onThrottle(api: string): boolean {
    return this.#bucket(api).onThrottle(this.#clock.now());
  }

  /** The rate `api` is currently allowed, in requests per second. */
  rate(api: string): number {
    return this.#bucket(api).rate(this.#clock.now());
  }
}
