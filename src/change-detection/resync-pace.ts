// How fast the watcher's safety-net resync checks services (pure). The change marker tells readers what changed, so
// the resync only catches what the marker cannot: writers that never bump it (the AWS controller v0.3.1 during a
// migration), services deleted behind our back, a lost bump. It checks the services one by one, spread over time,
// the longest unread first: every service within `intervalMs` of its previous read while that costs at most
// `budgetPerMinute` calls, and slower beyond, so the idle cost stays flat whatever the number of services (M6). The
// promise holds per service, not per pass: a service first read in the middle of everything else is due one interval
// after that read, not after a pass that began before it.

export interface ResyncPace {
  /** Longest time between two reads of a service. */
  readonly intervalMs: number;
  /** Most checks per minute. */
  readonly budgetPerMinute: number;
  /** Time between two steps (the poll interval): a check falls due up to one step before it is made. */
  readonly stepMs: number;
}

/**
 * Time between two checks of a service that nothing else reads: one step less than the interval, so a check falls due
 * at a step no later than the interval; longer when the budget cannot pay for that. A service is read again within
 * this plus one step of its previous read.
 */
export function resyncPeriodMs(services: number, pace: ResyncPace): number {
  return Math.max(pace.stepMs, pace.intervalMs - pace.stepMs, (services * 60_000) / pace.budgetPerMinute);
}

/** Checks per minute at a steady pace for `services` services (never above the budget). */
export function checksPerMinute(services: number, pace: ResyncPace): number {
  return services === 0 ? 0 : (services * 60_000) / resyncPeriodMs(services, pace);
}

/**
 * The services to check at a step `elapsedMs` after the previous one, given when each was last read (`lastReads`,
 * clock ms, any order) and the fraction carried over: their indexes, longest unread first, and the new carry. The
 * larger of two counts: the steady pace (spreads the checks, so the calls per minute stay flat), and the services
 * whose read is older than one period (so none waits longer, even when the pace just dropped because services
 * vanished, or the reads bunched).
 */
export function dueChecks(
  carry: number,
  elapsedMs: number,
  lastReads: readonly number[],
  now: number,
  pace: ResyncPace,
): { checks: number[]; carry: number } {
  const services = lastReads.length;
  const owed = carry + (checksPerMinute(services, pace) * Math.max(0, elapsedMs)) / 60_000;
  const cutoff = now - resyncPeriodMs(services, pace);
  const overdue = lastReads.reduce((n, read) => (read <= cutoff ? n + 1 : n), 0);
  // A long pause does not pile up more than one round of checks.
  const count = Math.min(services, Math.max(Math.floor(owed), overdue));
  if (count === 0) return { checks: [], carry: owed };
  const checks = lastReads
    .map((read, i) => ({ read, i }))
    .sort((a, b) => a.read - b.read || a.i - b.i)
    .slice(0, count)
    .map((c) => c.i);
  // Checks beyond the pace (overdue ones, or a capped pile) are not paid back, nor carried.
  const rest = owed - count;
  return { checks, carry: rest >= 0 && rest < 1 ? rest : 0 };
}

/**
 * Whether the listing of every namespace's services is due again (a service no marker named is found only by it), given
 * when the last one began and how long it took: early enough that each namespace is listed again within one period,
 * and what it finds is read at the next step, so a new service too is read within one period plus one step of its creation.
 */
export function listingDue(
  last: { startedAt: number; durationMs: number } | undefined,
  now: number,
  services: number,
  pace: ResyncPace,
): boolean {
  return last === undefined || now >= last.startedAt + resyncPeriodMs(services, pace) - pace.stepMs - last.durationMs;
}
