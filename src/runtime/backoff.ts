// Exponential backoff with optional jitter, as plain functions so the informer, the work queue, leader election and
// conflict retries share one rule and tests can check it without timers.

export interface BackoffPolicy {
  /** Delay after the first failure. */
  readonly baseMs: number;
  /** Upper bound of any delay. */
  readonly maxMs: number;
  /**
   * Fraction of the delay that is randomised (0 = none, 1 = "full jitter"): the delay is drawn uniformly from
   * [d × (1 − jitter), d]. Jitter spreads retries of many clients that failed together (an apiserver restart).
   */
  readonly jitter: number;
}

/** Delay before retry number `failures` (1 = first retry): base × 2^(failures−1), capped, then jittered. */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  if (failures <= 0) return 0;
  // 2^30 already exceeds any sensible cap; clamping the exponent keeps the arithmetic finite.
  const raw = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(failures - 1, 30));
  const jitter = Math.min(1, Math.max(0, policy.jitter));
  return Math.round(raw * (1 - jitter * random()));
}

/** Resolves after `ms`, or at once (without rejecting) when `signal` aborts: callers check the signal themselves. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
