// A token bucket whose refill rate comes from an AdaptiveRate, with a first-come-first-served queue of callers. A
// caller is let through when a token is there at the rate of that moment, never at a time worked out when it arrived:
// a wait computed at a rate cut by a throttle would keep its length after the rate climbed back, and a queue of 60
// callers behind a cut to 0.7/s would then trickle out for 90 s while the bucket had room for four a second.
import type { AdaptiveRate } from './adaptive-rate.ts';
import type { Clock } from './clock.ts';

/** Longest sleep of the queue before it looks at the rate again: a rate that climbs lets callers through sooner. */
const RECHECK_MS = 250;

export class TokenBucket {
  readonly #limiter: AdaptiveRate;
  readonly #clock: Clock;
  /** Seconds of the current rate the bucket can hold: the largest burst after a quiet period. */
  readonly #burstSeconds: number;
  #tokens: number;
  #last: number;
  readonly #queue: (() => void)[] = [];
  #pumping = false;

  constructor(limiter: AdaptiveRate, clock: Clock, burstSeconds = 1) {
    this.#limiter = limiter;
    this.#clock = clock;
    this.#burstSeconds = burstSeconds;
    const now = clock.now();
    this.#tokens = this.#capacity(now);
    this.#last = now;
  }

  #capacity(now: number): number {
    return Math.max(1, this.#limiter.rate(now) * this.#burstSeconds);
  }

  /** Refills for the time since the last call; a bucket that fills up means demand stopped (no more borrowing). */
  #refill(now: number): void {
    if (now > this.#last) {
      const capacity = this.#capacity(now);
      this.#tokens = Math.min(capacity, this.#tokens + (this.#limiter.rate(now) * (now - this.#last)) / 1000);
      this.#last = now;
      if (this.#tokens >= capacity) this.#limiter.setBusy(now, false);
    }
  }

  /**
   * Takes a token when one is there and returns 0; otherwise marks the rate busy (so it may borrow above its share,
   * adaptive-rate.ts) and returns the milliseconds until the next token at the current rate.
   */
  #tryTake(now: number): number {
    this.#refill(now);
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    this.#limiter.setBusy(now, true);
    return Math.max(1, Math.ceil(((1 - this.#tokens) / this.#limiter.rate(now)) * 1000));
  }

  /**
   * Resolves when the caller may send: at once while tokens last, then in arrival order at the current rate. An
   * `urgent` caller goes ahead of those queued (it still waits for a token): a few small calls whose lateness costs
   * more than the bulk's, such as a liveness heartbeat behind thousands of registrations.
   */
  take(urgent = false): Promise<void> {
    if (this.#queue.length === 0 && this.#tryTake(this.#clock.now()) === 0) return Promise.resolve();
    return new Promise((resolve) => {
      if (urgent) this.#queue.unshift(resolve);
      else this.#queue.push(resolve);
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#queue.length > 0) {
        const wait = this.#tryTake(this.#clock.now());
        if (wait === 0) this.#queue.shift()!();
        else await this.#clock.sleep(Math.min(wait, RECHECK_MS));
      }
    } finally {
      this.#pumping = false;
    }
  }

  /** Puts back a token that was taken and not used (never above capacity). */
  refund(now: number): void {
    this.#refill(now);
    this.#tokens = Math.min(this.#capacity(now), this.#tokens + 1);
  }

  /** After a throttle: slow the rate down and drop any saved-up burst. */
  onThrottle(now: number): boolean {
    this.#refill(now);
    const lowered = this.#limiter.onThrottle(now);
    if (lowered) this.#tokens = Math.min(this.#tokens, 0);
    return lowered;
  }

  rate(now: number): number {
    this.#refill(now);
    return this.#limiter.rate(now);
  }

  /** Tokens available now. */
  available(now: number): number {
    this.#refill(now);
    return this.#tokens;
  }
}
