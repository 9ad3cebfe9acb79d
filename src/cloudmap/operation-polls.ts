// Which calls find out whether pending Cloud Map operations are done (pure). GetOperation answers for one operation;
// one ListOperations page answers for up to 100 operations that settled (SUCCESS or FAIL) within a time window, across
// every service. So while several operations are pending, each polling round is one listing of what settled since the
// previous listing (however many services and writers), instead of a GetOperation per operation. In case listings keep
// missing an operation (a store that pruned it, a clock far off), the few oldest operations past `individualAfterMs`
// are asked for by GetOperation each round (which also confirms one that vanished): a bounded cost even while
// hundreds of slow operations are pending.

export interface PendingOperation {
  readonly id: string;
  /** When we submitted (or first learned of) it, Unix ms. */
  readonly since: number;
}

export interface PollPlan {
  /** Lower bound (Unix ms) of one ListOperations UPDATE_DATE window, or undefined for no listing this round. */
  readonly listSince: number | undefined;
  /** Operations the listing covers. */
  readonly listed: readonly string[];
  /** Operations asked for with GetOperation. */
  readonly gets: readonly string[];
}

export interface PollPolicy {
  /** Pending operations from which one listing is cheaper than GetOperation each. */
  readonly batchFrom: number;
  /** Operations older than this may be asked for one by one... */
  readonly individualAfterMs: number;
  /** ...at most this many a round, the oldest first. */
  readonly individualPerRound: number;
  /** The window starts this much early, for clock skew between us and Cloud Map. */
  readonly overlapMs: number;
}

export const DEFAULT_POLL_POLICY: PollPolicy = {
  batchFrom: 3,
  individualAfterMs: 15_000,
  individualPerRound: 5,
  overlapMs: 2_000,
};

/**
 * Plans one round. `lastListedAt` is when the previous listing was sent: an operation it did not show settled was
 * still pending then, so it settles later, and the window needs to reach back only to then (or to the oldest
 * operation's submission, when that is later). Every pending operation is covered exactly once.
 */
export function planOperationPolls(
  pending: readonly PendingOperation[],
  now: number,
  lastListedAt: number | undefined,
  policy: PollPolicy = DEFAULT_POLL_POLICY,
): PollPlan {
  const overdue = new Set(
    [...pending]
      .sort((a, b) => a.since - b.since)
      .filter((op) => now - op.since >= policy.individualAfterMs)
      .slice(0, policy.individualPerRound)
      .map((op) => op.id),
  );
  const rest = pending.filter((op) => !overdue.has(op.id));
  if (rest.length < policy.batchFrom) return { listSince: undefined, listed: [], gets: pending.map((op) => op.id) };
  const oldest = Math.min(...rest.map((op) => op.since));
  return {
    listSince: Math.max(lastListedAt ?? oldest, oldest) - policy.overlapMs,
    listed: rest.map((op) => op.id),
    gets: [...overdue],
  };
}
