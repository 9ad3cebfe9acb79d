// Time as a dependency, so rate limits, backoff and polling can be tested with a fake clock.
import { sleep } from './backoff.ts';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds (at once for ms <= 0), or as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => (ms <= 0 ? Promise.resolve() : sleep(ms, signal)),
};
