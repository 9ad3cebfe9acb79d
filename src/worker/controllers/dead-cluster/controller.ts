// The dead-cluster controller (--reap-dead-clusters-after): the clusters dead-clusters.ts finds silent long enough are
// its keys, and each is reaped (dead-cluster-reaper.ts) one at a time. A failed reap is logged, not retried by the
// queue: dead-clusters.ts hands the cluster over again once REAP_AGAIN_AFTER_MS has passed.
import { ControllerBuilder, type ControllerSettings } from '../../../runtime/controller-builder.ts';
import type { Controller, EventSource } from '../../../runtime/controller.ts';
import type { Logger } from '../../../observability/log.ts';

export interface DeadClusterControllerOptions {
  /** The queue's metrics, logger and stop signal; reaps run one at a time. */
  settings: Omit<ControllerSettings<string>, 'concurrency'>;
  /** The clusters due a reap (DeadClusters' onDue). */
  due: EventSource<readonly string[]>;
  /** Deregisters a dead cluster's instances; returns how many. */
  reap: (clusterId: string) => Promise<number>;
  onReaped?: (instances: number) => void;
  log: Logger;
}

export function deadClusterController(o: DeadClusterControllerOptions): Controller<string> {
  return new ControllerBuilder<string>('dead-cluster', { ...o.settings, concurrency: 1 })
    .watches(o.due, (clusters) => clusters)
    .complete(async (clusterId) => {
      try {
        o.onReaped?.(await o.reap(clusterId));
      } catch (err) {
        o.log.warn(
          { event: 'dead-cluster-reap-failed', deadClusterId: clusterId, err: String(err) },
          "could not reap a dead cluster's instances; retrying",
        );
      }
    });
}
