// Notices of a coming change (coming-change.ts, M7). This cluster sends one when a bump of its marker must wait for
// Cloud Map (a namespace being created); while another cluster's notice is new and not expired, the marker is also
// polled every close-watch interval (0.1 s) between polls, and what it names read at once: the first export of a
// namespace then reaches peers within a tenth of a second of Cloud Map creating it and the instances.
import type { CloudMapInstance } from '../core/types.ts';
import { sleep } from '../runtime/backoff.ts';
import { registerInMarkerService } from './change-marker-writer.ts';
import { closeWatchUntil, comingInstance, parseComing } from './coming-change.ts';
import type { WatchContext } from './watch-options.ts';

export class CloseWatch {
  readonly #ctx: WatchContext;
  /** Resolves once the first read listed the namespaces (a notice waits for it, as a heartbeat does). */
  readonly #listed: () => Promise<void>;
  /** Until when (this reader's clock) the marker is polled closely; the notice last acted on per cluster. */
  #state: { until: number; acted: Map<string, number> } = { until: 0, acted: new Map() };
  /** When this cluster last sent a notice of a coming change. */
  #lastNoticeAt = Number.NEGATIVE_INFINITY;

  constructor(ctx: WatchContext, listed: () => Promise<void>) {
    this.#ctx = ctx;
    this.#listed = listed;
  }

  /** The marker service's instances as just read (at `readAt`): the peers' notices among them. */
  noticed(instances: readonly CloudMapInstance[], readAt: number): void {
    const { identity, closeWatchMaxMs } = this.#ctx.opts;
    const notices = instances.flatMap((i) => parseComing(i) ?? []);
    const { until, acted } = closeWatchUntil(notices, this.#state.acted, identity.clusterId, readAt, closeWatchMaxMs);
    this.#state = { until: Math.max(this.#state.until, until), acted };
  }

  /**
   * Until `nextTick`, while a peer's notice of a coming change stands and `synced()`: a close poll (`closePoll`: the
   * marker polled, what moved read) every close-watch interval.
   */
  async watchClosely(
    nextTick: number,
    signal: AbortSignal,
    synced: () => boolean,
    closePoll: () => Promise<void>,
  ): Promise<void> {
    const { clock, closeWatchIntervalMs } = this.#ctx.opts;
    while (!signal.aborted && synced() && closeWatchIntervalMs > 0) {
      const now = clock.now();
      if (now >= this.#state.until || now + closeWatchIntervalMs >= nextTick) return;
      await sleep(closeWatchIntervalMs, signal);
      if (signal.aborted) return;
      this.#ctx.counts.closePolls++;
      await closePoll();
    }
  }

  /**
   * Tells the peers a bump of this cluster's marker is coming after a wait Cloud Map imposes (a namespace being
   * created, M1): they poll the marker closely until closeWatchMaxMs from now (M7). Not awaited; at most one notice
   * per half that time (a notice's own operation must end before the next); a lost one costs peers only the usual
   * poll interval.
   */
  announce(): void {
    const { opts } = this.#ctx;
    const { clock, identity, readOnly, closeWatchMaxMs } = opts;
    const now = clock.now();
    if (
      readOnly ||
      !(closeWatchMaxMs > 0) ||
      this.#ctx.signal().aborted ||
      now < this.#lastNoticeAt + closeWatchMaxMs / 2
    )
      return;
    this.#lastNoticeAt = now;
    void this.#listed()
      .then(() =>
        registerInMarkerService(
          opts,
          comingInstance(identity.clusterId, identity.clustersetId, now + closeWatchMaxMs),
          true,
        ),
      )
      .catch((err: unknown) =>
        this.#ctx.log?.debug(
          { err: String(err) },
          'could not announce a coming change; peers see it at their next poll',
        ),
      );
  }
}
