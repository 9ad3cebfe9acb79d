// Liveness of the reconcile worker (pure). Kubernetes restarts a process whose /healthz fails, so it fails when a loop
// that has work stopped making progress (a call left without an answer, a deadlock): the watcher would no longer see
// changes and keys would never be reconciled again, while nothing else in the process notices. It never fails merely
// because Cloud Map is slow or down: every call ends at its deadline, and a failed step is progress (M6).

export interface LoopProgress {
  /** What the reason names: "export queue", "Cloud Map watcher (us-west-2)". */
  readonly name: string;
  /** Whether it has work: a watcher while it runs, a queue while keys wait or are handled. */
  readonly busy: boolean;
  /** When it last finished a step (or, for a queue, last went from idle to busy), ms. */
  readonly progressAt: number;
}

/** true when every busy loop made progress within `limitMs` of `now`; otherwise the reason, naming each stuck loop. */
export function liveness(loops: readonly LoopProgress[], now: number, limitMs: number): true | string {
  const stuck = loops.filter((l) => l.busy && now - l.progressAt > limitMs);
  if (stuck.length === 0) return true;
  const ages = stuck.map((l) => `${l.name} for ${Math.round((now - l.progressAt) / 1000)} s`).join(', ');
  return `no progress past the limit of ${Math.round(limitMs / 1000)} s (--progress-timeout): ${ages}`;
}
