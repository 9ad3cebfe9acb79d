// Dead clusters: once a second, which peers are silent (core/cluster-liveness.ts over the heartbeats the watcher
// read) — their endpoints are withdrawn from imports until they beat again — and, with --reap-dead-clusters-after,
// which are silent long enough to have their instances deregistered (handed to the reaper, controller.ts). Silence
// is measured up to the watcher's last complete read of the marker service, never beyond: while this cluster cannot
// read Cloud Map, nobody turns silent (an import is never dropped because a call failed).
import { sameSilence, silentClusters } from '../../../core/cluster-liveness.ts';
import type { HeartbeatView } from '../../../change-detection/liveness.ts';
import type { Logger } from '../../../observability/log.ts';

/**
 * Least time between two hand-overs of one cluster to the reaper: a failed reap is retried after it, and a finished
 * one is not repeated while the watcher has not read yet that the heartbeat is gone.
 */
const REAP_AGAIN_AFTER_MS = 30_000;

export interface DeadClustersOptions {
  self: string;
  /** --dead-cluster-ttl; 0: nobody is ever silent. */
  ttlMs: number;
  /** --reap-dead-clusters-after; 0: never reap. */
  reapAfterMs: number;
  heartbeats: () => HeartbeatView;
  /** Called with the clusters that turned silent or were heard again. */
  onChange: (clusters: ReadonlySet<string>) => void;
  /** Called with the clusters silent past --reap-dead-clusters-after, each at most once per REAP_AGAIN_AFTER_MS. */
  onDue: (clusters: readonly string[]) => void;
  onSilentCount?: (n: number) => void;
  log: Logger;
  intervalMs?: number;
}

export class DeadClusters {
  readonly #o: DeadClustersOptions;
  #silent: ReadonlyMap<string, number> = new Map();
  #timer: NodeJS.Timeout | undefined;
  readonly #dueAt = new Map<string, number>();

  constructor(options: DeadClustersOptions) {
    this.#o = options;
  }

  /** Silent exporting peers, each with when it was heard last (Unix ms). */
  get silent(): ReadonlyMap<string, number> {
    return this.#silent;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.evaluate(), this.#o.intervalMs ?? 1000);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One judgement: updates the silent set (calling onChange for what moved) and hands over the clusters due a reap. */
  evaluate(): void {
    const { sightings, readAt } = this.#o.heartbeats();
    if (readAt === undefined) return;
    const silent = silentClusters(sightings, readAt, this.#o.ttlMs, this.#o.self);
    if (!sameSilence(silent, this.#silent)) {
      const changed = new Set<string>();
      for (const [clusterId, heardAt] of silent) {
        if (this.#silent.get(clusterId) === heardAt) continue;
        changed.add(clusterId);
        this.#o.log.warn(
          {
            event: 'cluster-silent',
            silentCluster: clusterId,
            lastHeard: new Date(heardAt).toISOString(),
            ttlMs: this.#o.ttlMs,
          },
          "a cluster's heartbeat is older than --dead-cluster-ttl: its endpoints are withdrawn from imports until it beats again",
        );
      }
      for (const clusterId of this.#silent.keys()) {
        if (silent.has(clusterId)) continue;
        changed.add(clusterId);
        this.#o.log.info(
          { event: 'cluster-heard-again', cluster: clusterId },
          'a silent cluster beats again (or its heartbeat is gone): its endpoints are imported again',
        );
      }
      this.#silent = silent;
      this.#o.onSilentCount?.(silent.size);
      this.#o.onChange(changed);
    }
    if (this.#o.reapAfterMs > 0) {
      const now = Date.now();
      const due = [...silentClusters(sightings, readAt, this.#o.reapAfterMs, this.#o.self).keys()].filter(
        (c) => now - (this.#dueAt.get(c) ?? Number.NEGATIVE_INFINITY) >= REAP_AGAIN_AFTER_MS,
      );
      for (const clusterId of due) this.#dueAt.set(clusterId, now);
      if (due.length > 0) this.#o.onDue(due);
    }
  }
}
