// How fast the watcher's safety-net resync checks services (pure). The change marker tells readers what changed, so
// the resync only catches what the marker cannot: writers that never bump it (the AWS controller v0.3.1 during a
// migration), services deleted behind our back, a lost bump. It checks the services one by one, spread over time:
// every service at least once per `intervalMs` while that costs at most `budgetPerMinute` calls, and slower beyond,
// so the idle cost stays flat whatever the number of services (M6).

export interface ResyncPace {
  /** Shortest time in which every service is checked. */
  readonly intervalMs: number;
  /** Most checks per minute. */
  readonly budgetPerMinute: number;
}

/** Checks per minute for `services` services. */
export function checksPerMinute(services: number, pace: ResyncPace): number {
  return Math.min(pace.budgetPerMinute, (services * 60_000) / Math.max(1, pace.intervalMs));
}

/** How long one pass over `services` services takes, in ms. */
export function sweepDurationMs(services: number, pace: ResyncPace): number {
  const rate = checksPerMinute(services, pace);
  return rate > 0 ? (services / rate) * 60_000 : 0;
}

/**
 * Checks due after `elapsedMs` more, given the fraction carried over from earlier steps: the whole number to do now
 * and the new carry. Over any run of steps the count never exceeds the rate × time, plus one.
 */
export function dueChecks(carry: number, elapsedMs: number, services: number, pace: ResyncPace): { count: number; carry: number } {
  const owed = carry + (checksPerMinute(services, pace) * Math.max(0, elapsedMs)) / 60_000;
  const count = Math.floor(owed);
  // A long pause does not pile up more than one pass worth of checks.
  return { count: Math.min(count, services), carry: count > services ? 0 : owed - count };
}
