// Every Cloud Map request goes through here: wait for the API's token bucket, send under the call deadline, count the
// outcome, and on a throttling, transient or timed-out failure retry with full-jitter exponential backoff (slowing the
// API down on throttles). Final failures and exhausted retries surface as CloudMapCallError with the call's context.
import type { Logger } from '../observability/log.ts';
import type { AdaptiveRateConfig } from '../runtime/adaptive-rate.ts';
import { backoffDelay, type BackoffPolicy } from '../runtime/backoff.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import {
  CallCancelledError,
  CallTimeoutError,
  classifyError,
  CloudMapCallError,
  describeContext,
  LeaseLostError,
  type CallContext,
} from './errors.ts';
import { noMetrics, type CallOutcome, type CloudMapMetrics } from './metrics.ts';
import { RateLimiter } from './rate-limits.ts';

export interface CallerOptions {
  /** Client rates per API set outright (see quotas.ts); the rest are shares of the account quotas. */
  rateLimits?: Readonly<Record<string, number>>;
  /** Account quota rates per API that differ from CLOUD_MAP_QUOTAS. */
  quotas?: Readonly<Record<string, number>>;
  /** Clusters sharing the account's quotas (default 1). */
  clusters?: number;
  /** The fraction of each quota the ClusterSet's controllers take together (default DEFAULT_CONTROLLERS_SHARE). */
  quotaShare?: number;
  rateTuning?: Partial<AdaptiveRateConfig>;
  backoff?: BackoffPolicy;
  /** Attempts per call before a retryable failure is handed to the caller (default 8). */
  maxAttempts?: number;
  /** Longest wait for one attempt's complete answer (default DEFAULT_CALL_TIMEOUT_MS); then it is aborted and retried. */
  callTimeoutMs?: number;
  /** Aborted when the adapter's owner stops: attempts in flight are abandoned and nothing is sent any more. */
  signal?: AbortSignal;
  metrics?: CloudMapMetrics;
  /**
   * Asked right before every request is sent: a reason when this process must not call Cloud Map any more (its leader
   * Lease may have passed to a standby), undefined when it may.
   */
  fence?: () => string | undefined;
  logger?: Logger;
  clock?: Clock;
  random?: () => number;
}

/** Full jitter (uniform in [0, min(cap, base × 2^n)]): callers throttled together do not come back in lockstep. */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 10_000, jitter: 1 };

/** Cloud Map answers in well under a second; a loaded regional endpoint or a 1,000-instance page in a few. */
export const DEFAULT_CALL_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_ATTEMPTS = 8;

/**
 * The longest one call can take once its rate-limit wait is over: every attempt running into the deadline, with the
 * longest backoff between them. Liveness bounds must exceed it (a loop waiting on one call is not stuck).
 */
export function longestCallMs(
  callTimeoutMs: number,
  maxAttempts = DEFAULT_MAX_ATTEMPTS,
  backoff: BackoffPolicy = DEFAULT_BACKOFF,
): number {
  let total = maxAttempts * callTimeoutMs;
  for (let n = 1; n < maxAttempts; n++) total += Math.min(backoff.maxMs, backoff.baseMs * 2 ** n);
  return total;
}

const OUTCOME = {
  throttle: 'throttled',
  transient: 'transient',
  timeout: 'timeout',
  final: 'error',
} as const satisfies Record<string, CallOutcome>;

export class CloudMapCaller {
  readonly #limiter: RateLimiter;
  readonly #backoff: BackoffPolicy;
  readonly #maxAttempts: number;
  readonly #callTimeoutMs: number;
  readonly #signal: AbortSignal | undefined;
  readonly #metrics: CloudMapMetrics;
  readonly #fence: () => string | undefined;
  readonly #logger: Logger | undefined;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #reported = new Map<string, number>();

  constructor(options: CallerOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#limiter = new RateLimiter(
      {
        clusters: options.clusters ?? 1,
        ...(options.quotaShare !== undefined ? { share: options.quotaShare } : {}),
        ...(options.quotas ? { quotas: options.quotas } : {}),
        ...(options.rateLimits ? { overrides: options.rateLimits } : {}),
      },
      this.#clock,
      options.rateTuning,
    );
    this.#backoff = options.backoff ?? DEFAULT_BACKOFF;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
    this.#callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.#signal = options.signal;
    this.#metrics = options.metrics ?? noMetrics;
    this.#fence = options.fence ?? (() => undefined);
    this.#logger = options.logger;
    this.#random = options.random ?? Math.random;
  }

  /**
   * Runs `send` (one request to `api`, to be aborted when its signal is) under the API's rate limit and the call
   * deadline, retrying throttles, transient failures and timeouts. `urgent`: ahead of the calls waiting for the
   * API's rate limit (each attempt).
   */
  async call<T>(
    api: string,
    context: CallContext,
    send: (signal: AbortSignal) => Promise<T>,
    urgent = false,
  ): Promise<T> {
    return (await this.#run(api, context, send, undefined, urgent))!;
  }

  /**
   * As call(), for a creation that another caller may make unnecessary while this one waits for its rate limit (a
   * listing finds the name, another cluster's creation is learnt): once the wait is over and before each attempt,
   * `settled` is asked; when it says true, nothing is sent, the token goes back and the result is undefined.
   */
  callUnlessSettled<T>(
    api: string,
    context: CallContext,
    settled: () => boolean,
    send: (signal: AbortSignal) => Promise<T>,
  ): Promise<T | undefined> {
    return this.#run(api, context, send, settled);
  }

  async #run<T>(
    api: string,
    context: CallContext,
    send: (signal: AbortSignal) => Promise<T>,
    settled?: () => boolean,
    urgent = false,
  ): Promise<T | undefined> {
    for (let attempt = 0; ; attempt++) {
      await this.#limiter.acquire(api, urgent);
      if (this.#signal?.aborted) throw new CallCancelledError(api, context);
      if (settled?.()) {
        this.#limiter.refund(api);
        return undefined;
      }
      // After the wait for the rate limit, which a paused process may have spent past its Lease.
      const fenced = this.#fence();
      if (fenced !== undefined) throw new LeaseLostError(api, fenced);
      const started = this.#clock.now();
      try {
        const result = await this.#attempt(api, context, send);
        this.#metrics.onCall(api, 'success', this.#clock.now() - started);
        this.#reportRate(api);
        return result;
      } catch (err) {
        if (err instanceof CallCancelledError) throw err;
        const errorClass = classifyError(err);
        this.#metrics.onCall(api, OUTCOME[errorClass], this.#clock.now() - started);
        if (errorClass === 'throttle' && this.#limiter.onThrottle(api)) {
          const ratePerSecond = this.#reportRate(api);
          this.#logger?.warn({ api, ratePerSecond }, 'Cloud Map throttled requests; slowing this API down');
        }
        if (errorClass === 'final' || attempt + 1 >= this.#maxAttempts)
          throw new CloudMapCallError(api, context, err, attempt + 1);
        const delay = backoffDelay(this.#backoff, attempt + 1, this.#random);
        this.#logger?.debug(
          { api, attempt: attempt + 1, delayMs: delay, errorClass, target: describeContext(context) },
          'retrying Cloud Map call',
        );
        await this.#clock.sleep(delay, this.#signal);
      }
    }
  }

  /**
   * One request under the call deadline (M6). The deadline aborts the request, and the SDK drops its connection; the
   * attempt settles then even if the request does not (an answer dripping in byte by byte outlasts any idle-socket
   * timeout), so no caller ever waits on a connection that stopped answering. The timer is wall-clock whatever the
   * injected clock: it bounds real I/O.
   */
  #attempt<T>(api: string, context: CallContext, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const request = new AbortController();
    return new Promise<T>((resolve, reject) => {
      const cancelled = () => end(new CallCancelledError(api, context));
      const timer = setTimeout(() => end(new CallTimeoutError(this.#callTimeoutMs)), this.#callTimeoutMs);
      const cleanUp = () => {
        clearTimeout(timer);
        this.#signal?.removeEventListener('abort', cancelled);
      };
      const end = (err: Error) => {
        cleanUp();
        reject(err);
        request.abort(err);
      };
      this.#signal?.addEventListener('abort', cancelled, { once: true });
      send(request.signal).then(resolve, reject).finally(cleanUp);
    });
  }

  /**
   * Tells the metrics sink the API's allowed rate (to 0.1 request/s) whenever it differs from the last report: once at
   * the first call, when a throttle lowers it, and as it recovers. Returns the rate.
   */
  #reportRate(api: string): number {
    const rate = Math.round(this.#limiter.rate(api) * 10) / 10;
    if (this.#reported.get(api) !== rate) {
      this.#reported.set(api, rate);
      this.#metrics.onRateChange(api, rate);
    }
    return rate;
  }

  /** The rate an API is currently allowed (requests per second). */
  rate(api: string): number {
    return this.#limiter.rate(api);
  }
}
