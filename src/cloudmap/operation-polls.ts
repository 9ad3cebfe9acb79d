// Which calls find out whether pending Cloud Map operations are done (pure). GetOperation answers for one operation;
// ListOperations answers for up to 100 per page, filtered to one service's operations that settled since a time. A
// batch of registrations of one service is therefore polled with one ListOperations per round instead of one
// GetOperation each. An operation a listing keeps missing (the store pruned it, or it settled outside the window) is
// asked for by GetOperation once it is older than `individualAfterMs`, which also confirms a vanished one.

export interface PendingOperation {
  readonly id: string;
  /** The service the operation writes to; undefined when unknown (polled with an account-wide listing). */
  readonly serviceId: string | undefined;
  /** When we submitted (or first learned of) it, Unix ms. */
  readonly since: number;
}

export interface OperationListing {
  readonly serviceId: string | undefined;
  /** Lower bound of the listing's UPDATE_DATE window, Unix ms. */
  readonly since: number;
  readonly ids: readonly string[];
}

export interface PollPlan {
  readonly listings: readonly OperationListing[];
  readonly gets: readonly string[];
}

export interface PollPolicy {
  /** Operations of one service from which a listing is cheaper than GetOperation each. */
  readonly batchFrom: number;
  /** Operations older than this are asked for one by one. */
  readonly individualAfterMs: number;
}

export const DEFAULT_POLL_POLICY: PollPolicy = { batchFrom: 3, individualAfterMs: 15_000 };

/** Every pending operation is covered exactly once: by a listing of its service, or by a GetOperation. */
export function planOperationPolls(pending: readonly PendingOperation[], now: number, policy: PollPolicy = DEFAULT_POLL_POLICY): PollPlan {
  const gets: string[] = [];
  const groups = new Map<string | undefined, PendingOperation[]>();
  for (const op of pending) {
    if (now - op.since >= policy.individualAfterMs) {
      gets.push(op.id);
      continue;
    }
    const group = groups.get(op.serviceId);
    if (group) group.push(op);
    else groups.set(op.serviceId, [op]);
  }
  const listings: OperationListing[] = [];
  for (const [serviceId, ops] of groups) {
    if (ops.length < policy.batchFrom) gets.push(...ops.map((op) => op.id));
    else listings.push({ serviceId, since: Math.min(...ops.map((op) => op.since)), ids: ops.map((op) => op.id) });
  }
  return { listings, gets };
}
