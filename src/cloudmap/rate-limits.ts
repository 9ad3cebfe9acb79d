// Client-side rate limits, one adaptive token bucket per Cloud Map API (M6). Quotas are per account and Region and
// shared by every cluster of the ClusterSet, so each controller keeps to a fraction of them by default.
import { AdaptiveRate, adaptiveRateConfig, type AdaptiveRateConfig } from './adaptive-rate.ts';
import type { Clock } from './clock.ts';
import { TokenBucket } from './token-bucket.ts';

/** Key of the rate used for APIs without an entry of their own. */
export const OTHER_APIS = '*';

/**
 * Requests per second per API. AWS documents DiscoverInstances at 1,000/s steady (2,000 burst) and
 * DiscoverInstancesRevision at 3,000/s per account; the control-plane APIs have lower, undocumented limits.
 * These defaults leave room for a second cluster and for people using the console.
 */
export const DEFAULT_RATE_LIMITS: Readonly<Record<string, number>> = {
  DiscoverInstances: 500,
  DiscoverInstancesRevision: 1000,
  RegisterInstance: 50,
  DeregisterInstance: 50,
  GetOperation: 100,
  GetInstance: 50,
  ListInstances: 50,
  ListServices: 20,
  ListNamespaces: 20,
  CreateService: 10,
  DeleteService: 10,
  CreateHttpNamespace: 5,
  DeleteNamespace: 5,
  [OTHER_APIS]: 20,
};

export class RateLimiter {
  private readonly limits: Readonly<Record<string, number>>;
  private readonly clock: Clock;
  private readonly tuning: Partial<AdaptiveRateConfig>;
  private readonly buckets = new Map<string, TokenBucket>();

  /** `limits` is merged over DEFAULT_RATE_LIMITS; `tuning` overrides the AIMD parameters of every bucket. */
  constructor(limits: Readonly<Record<string, number>>, clock: Clock, tuning: Partial<AdaptiveRateConfig> = {}) {
    this.limits = { ...DEFAULT_RATE_LIMITS, ...limits };
    this.clock = clock;
    this.tuning = tuning;
  }

  private bucket(api: string): TokenBucket {
    let bucket = this.buckets.get(api);
    if (!bucket) {
      const now = this.clock.now();
      const rate = this.limits[api] ?? this.limits[OTHER_APIS]!;
      bucket = new TokenBucket(new AdaptiveRate(adaptiveRateConfig(rate, this.tuning), now), now);
      this.buckets.set(api, bucket);
    }
    return bucket;
  }

  /** Waits until `api` may be called. */
  async acquire(api: string): Promise<void> {
    const wait = this.bucket(api).reserve(this.clock.now());
    if (wait > 0) await this.clock.sleep(wait);
  }

  /** Slows `api` down after a throttling response; true when the rate was lowered. */
  onThrottle(api: string): boolean {
    return this.bucket(api).onThrottle(this.clock.now());
  }

  /** The rate `api` is currently allowed, in requests per second. */
  rate(api: string): number {
    return this.bucket(api).rate(this.clock.now());
  }
}
