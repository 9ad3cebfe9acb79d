// Heartbeats and liveness: every heartbeat interval this cluster's heartbeat (heartbeat.ts) is re-registered next to
// the markers, on a loop of its own; every poll that reads the markers reads the heartbeats too, and keeps when each
// cluster's was last seen to change (core/cluster-liveness.ts), which the dead-cluster rules judge.
import { observeHeartbeats, type HeartbeatSighting } from '../core/cluster-liveness.ts';
import type { CloudMapInstance } from '../core/types.ts';
import { sleep } from '../runtime/backoff.ts';
import { registerInMarkerService } from './change-marker-writer.ts';
import { heartbeatInstance, parseHeartbeat } from './heartbeat.ts';
import type { WatchContext } from './watch-options.ts';

/** What this reader knows of the ClusterSet's heartbeats, as of its last complete read of the marker service. */
export interface HeartbeatView {
  readonly sightings: ReadonlyMap<string, HeartbeatSighting>;
  /** When (this reader's clock) the marker service was last read in full or found unchanged; undefined before. */
  readonly readAt: number | undefined;
}

/** A heartbeat that could not be written, or is due while the previous one is still on its way, is tried again after this. */
const BEAT_RETRY_MS = 1000;

export class Liveness {
  readonly #ctx: WatchContext;
  /** Resolves once the first read listed the namespaces, where a heartbeat finds the marker namespace (first-read.ts). */
  readonly #listed: () => Promise<void>;
  #view: HeartbeatView = { sightings: new Map(), readAt: undefined };
  #nextBeat = 0;
  #beating: Promise<void> | undefined;
  #beatLoop: Promise<void> | undefined;

  constructor(ctx: WatchContext, listed: () => Promise<void>) {
    this.#ctx = ctx;
    this.#listed = listed;
  }

  /** The heartbeats of the ClusterSet's clusters as last read (this cluster's included). */
  heartbeats(): HeartbeatView {
    return this.#view;
  }

  /** The marker service was found unchanged by a poll that began at `readAt`. */
  unchanged(readAt: number): void {
    this.#view = { ...this.#view, readAt };
  }

  /** The marker service's instances as read by a poll that began at `readAt`: the heartbeats among them. */
  observe(instances: readonly CloudMapInstance[], readAt: number): void {
    const heartbeats = instances.flatMap((i) => parseHeartbeat(i) ?? []);
    this.#view = {
      sightings: observeHeartbeats(this.#view.sightings, heartbeats, readAt, this.#ctx.opts.heartbeatSkewAllowanceMs),
      readAt,
    };
  }

  /** Starts beating until `signal` aborts. */
  start(signal: AbortSignal): void {
    this.#beatLoop = this.#beatOnTime(signal);
  }

  /** Resolves once the loop and the heartbeat on its way ended. */
  async stopped(): Promise<void> {
    await this.#beatLoop;
    await this.#beating;
  }

  /**
   * Beats every interval on a loop of its own: a poll that takes minutes (a large sync's reads) must not hold the
   * heartbeat past the peers' --dead-cluster-ttl.
   */
  async #beatOnTime(signal: AbortSignal): Promise<void> {
    const { heartbeatIntervalMs, clock } = this.#ctx.opts;
    if (!(heartbeatIntervalMs > 0)) return;
    while (!signal.aborted) {
      this.#beatWhenDue();
      const untilDue = this.#nextBeat - clock.now();
      await sleep(untilDue > 0 ? untilDue : Math.min(heartbeatIntervalMs, BEAT_RETRY_MS), signal);
    }
  }

  /** Writes this cluster's heartbeat when an interval has passed since the last one began (not awaited). */
  #beatWhenDue(): void {
    const { opts, log } = this.#ctx;
    const { heartbeatIntervalMs, clock, identity } = opts;
    if (!(heartbeatIntervalMs > 0) || this.#beating !== undefined || clock.now() < this.#nextBeat) return;
    this.#nextBeat = clock.now() + heartbeatIntervalMs;
    opts.onHeartbeat?.();
    this.#beating = this.#listed()
      .then(() =>
        registerInMarkerService(opts, heartbeatInstance(identity.clusterId, identity.clustersetId, clock.now()), true),
      )
      .catch((err: unknown) => {
        this.#nextBeat = 0; // again within BEAT_RETRY_MS: peers judge this cluster silent after a few missed beats
        log?.warn({ err: String(err) }, "could not write this cluster's heartbeat to Cloud Map; retrying in a second");
      })
      .finally(() => (this.#beating = undefined));
  }
}
