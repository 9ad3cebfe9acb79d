// A token bucket whose refill rate comes from an AdaptiveRate. Callers reserve a token and are told how long to wait
// for it; reservations may go into debt, which queues callers first come, first served without a timer per caller.
import type { AdaptiveRate } from './adaptive-rate.ts';

export class TokenBucket {
  private readonly limiter: AdaptiveRate;
  /** Seconds of the current rate the bucket can hold: the largest burst after a quiet period. */
  private readonly burstSeconds: number;
  private tokens: number;
  private last: number;

  constructor(limiter: AdaptiveRate, now: number, burstSeconds = 1) {
    this.limiter = limiter;
    this.burstSeconds = burstSeconds;
    this.tokens = this.capacity(now);
    this.last = now;
  }

  private capacity(now: number): number {
    return Math.max(1, this.limiter.rate(now) * this.burstSeconds);
  }

  /** Refills for the time since the last call; a bucket that fills up means demand stopped (no more borrowing). */
  private refill(now: number): void {
    if (now > this.last) {
      const capacity = this.capacity(now);
      this.tokens = Math.min(capacity, this.tokens + (this.limiter.rate(now) * (now - this.last)) / 1000);
      this.last = now;
      if (this.tokens >= capacity) this.limiter.setBusy(now, false);
    }
  }

  /**
   * Takes one token; returns the milliseconds the caller must wait before sending (0 when one was available). A caller
   * that has to wait marks the API busy, which lets its rate borrow above the share (adaptive-rate.ts).
   */
  reserve(now: number): number {
    this.refill(now);
    this.tokens -= 1;
    if (this.tokens >= 0) return 0;
    this.limiter.setBusy(now, true);
    return Math.ceil((-this.tokens / this.limiter.rate(now)) * 1000);
  }

  /** After a throttle: slow the rate down and drop any saved-up burst. */
  onThrottle(now: number): boolean {
    this.refill(now);
    const lowered = this.limiter.onThrottle(now);
    if (lowered) this.tokens = Math.min(this.tokens, 0);
    return lowered;
  }

  rate(now: number): number {
    this.refill(now);
    return this.limiter.rate(now);
  }

  /** Tokens available now (negative while callers are queued). */
  available(now: number): number {
    this.refill(now);
    return this.tokens;
  }
}
