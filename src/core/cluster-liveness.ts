// Which clusters of the ClusterSet are alive, from their heartbeats in Cloud Map (docs/design.md "Dead clusters").
// A cluster whose worker is gone for good never unexports; its instances would be imported forever. Every worker
// stamps a heartbeat every interval; a reader that has not seen a cluster's stamp change for longer than the TTL
// calls it silent, withdraws its endpoints, and restores them when the stamp moves again.
//
// Silence is measured on the reader's own clock, from when it first saw the current stamp, so the clocks of the
// writers never enter a steady-state decision (no skew). Only a stamp seen for the first time — after the reader
// started, or a cluster appearing — carries no sighting to measure from: then the writer's stamp, less a skew
// allowance, says how long ago it was written, so a cluster dead for long is not imported again for a whole TTL after
// every restart of its peers. A writer whose clock is behind by more than the allowance is judged silent until its
// next beat (at most one interval), never longer.

/** A heartbeat as read from Cloud Map: the writer's clock (Unix ms) when it wrote it. */
export interface Heartbeat {
  readonly clusterId: string;
  readonly stamp: number;
}

/** What a reader knows of one cluster's heartbeat: the stamp, and since when (reader's clock) it has been the same. */
export interface HeartbeatSighting {
  readonly stamp: number;
  readonly heardAt: number;
}

/**
 * The sightings after a read of the heartbeats at `now` (reader's clock). A stamp that differs from the one seen
 * before was written since: heard now. A stamp seen for the first time is heard at `stamp + skewAllowanceMs`, but never
 * later than now (a writer whose clock is ahead is simply heard now). Clusters whose heartbeat is gone are forgotten:
 * without a heartbeat a cluster cannot be judged (a controller that writes none is always live).
 */
export function observeHeartbeats(
  previous: ReadonlyMap<string, HeartbeatSighting>,
  read: readonly Heartbeat[],
  now: number,
  skewAllowanceMs: number,
): Map<string, HeartbeatSighting> {
  const next = new Map<string, HeartbeatSighting>();
  for (const { clusterId, stamp } of read) {
    const before = next.get(clusterId) ?? previous.get(clusterId);
    if (before !== undefined && before.stamp === stamp) next.set(clusterId, before);
    else if (before !== undefined) next.set(clusterId, { stamp, heardAt: Math.max(before.heardAt, now) });
    else next.set(clusterId, { stamp, heardAt: Math.min(now, stamp + skewAllowanceMs) });
  }
  return next;
}

/**
 * The clusters silent at `now` (reader's clock): heard last more than `ttlMs` ago, each with when it was heard last.
 * `self` is never silent (this process is running), nor is a cluster without a heartbeat. `ttlMs` <= 0 turns the
 * judgement off: no cluster is silent.
 */
export function silentClusters(
  sightings: ReadonlyMap<string, HeartbeatSighting>,
  now: number,
  ttlMs: number,
  self: string,
): Map<string, number> {
  const silent = new Map<string, number>();
  if (!(ttlMs > 0)) return silent;
  for (const [clusterId, { heardAt }] of sightings) {
    if (clusterId !== self && now - heardAt > ttlMs) silent.set(clusterId, heardAt);
  }
  return silent;
}

/** The same sets of silent clusters (when each was heard last counts too: it is in the condition message). */
export function sameSilence(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  return a.size === b.size && [...a].every(([clusterId, heardAt]) => b.get(clusterId) === heardAt);
}
