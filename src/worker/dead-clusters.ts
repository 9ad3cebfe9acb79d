// Dead clusters: once a second, which peers are silent (core/cluster-liveness.ts over the heartbeats the watcher
// read) — their endpoints are withdrawn from imports until they beat again — and, with --reap-dead-clusters-after,
// which are silent long enough to have their instances deregistered. Silence is measured up to the watcher's last
// complete read of the marker service, never beyond: while this cluster cannot read Cloud Map, nobody turns silent
// (an import is never dropped because a call failed).
import { sameSilence, silentClusters } from '../core/cluster-liveness.ts';
import type { HeartbeatView } from '../change-detection/liveness.ts';
import type { Logger } from '../observability/log.ts';

/**
 * Least time between two reaps of one cluster: a failed one is retried after it, and a finished one is not repeated
 * while the watcher has not read yet that the heartbeat is gone.
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
  /** Deregisters a dead cluster's instances (dead-cluster-reaper.ts); returns how many. */
  reap: (clusterId: string) => Promise<number>;
  onSilentCount?: (n: number) => void;
  onReaped?: (instances: number) => void;
  log: Logger;
  intervalMs?: number;
}

export class DeadClusters {
  readonly #o: DeadClustersOptions;
  #silent: ReadonlyMap<string, number> = new Map();
  #timer: NodeJS.Timeout | undefined;
  #reaping: Promise<void> | undefined;
  readonly #reapedAt = new Map<string, number>();

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

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#reaping;
  }

  /** One judgement: updates the silent set (calling onChange for what moved) and starts a reap when one is due. */
  evaluate(): void {
    const { sightings, readAt } = this.#o.heartbeats();
    if (readAt === undefined) return;
    const silent = silentClusters(sightings, readAt, this.#o.ttlMs, this.#o.self);
    if (!sameSilence(silent, this.#silent)) {
      const changed = new Set<string>();
      for (const [clusterId, heardAt] of silent) {
        if (this.#silent.get(clusterId) === heardAt) continue;
        changed.add(clusterId);
        this.#o.log.warn({ event: 'cluster-silent', silentCluster: clusterId, lastHeard: new Date(heardAt).toISOString(), ttlMs: this.#o.ttlMs },
          'a cluster\'s heartbeat is older than --dead-cluster-ttl: its endpoints are withdrawn from imports until it beats again');
      }
      for (const clusterId of this.#silent.keys()) {
        if (silent.has(clusterId)) continue;
        changed.add(clusterId);
        this.#o.log.info({ event: 'cluster-heard-again', cluster: clusterId }, 'a silent cluster beats again (or its heartbeat is gone): its endpoints are imported again');
      }
      this.#silent = silent;
      this.#o.onSilentCount?.(silent.size);
      this.#o.onChange(changed);
    }
    if (this.#o.reapAfterMs > 0 && this.#reaping === undefined) {
      const now = Date.now();
      const due = [...silentClusters(sightings, readAt, this.#o.reapAfterMs, this.#o.self).keys()]
        .filter((c) => now - (this.#reapedAt.get(c) ?? Number.NEGATIVE_INFINITY) >= REAP_AGAIN_AFTER_MS);
      if (due.length > 0) this.#reaping = this.#reap(due).finally(() => (this.#reaping = undefined));
    }
  }

  async #reap(clusters: readonly string[]): Promise<void> {
    for (const clusterId of clusters) {
      this.#reapedAt.set(clusterId, Date.now());
      try {
        const instances = await this.#o.reap(clusterId);
        this.#o.onReaped?.(instances);
      } catch (err) {
        this.#o.log.warn({ event: 'dead-cluster-reap-failed', deadClusterId: clusterId, err: String(err) }, 'could not reap a dead cluster\'s instances; retrying');
      }
    }
  }
}
