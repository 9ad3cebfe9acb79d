// What the control plane did while the clients ran, polled every 250 ms: when each of cls1's nginx pods turned ready
// and began terminating, and when its address came into and left cls2's imported EndpointSlices (ready endpoints).
// The lags say where cross-cluster failures come from: a pod whose address leaves cls2 later than its preStop lasts
// gets connections after it stopped serving.
import { CoreV1Api } from '@kubernetes/client-node';
import { LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER } from '../../src/core/names.ts';
import type { E2ECluster } from '../../test/support/e2e-harness.ts';
import { NS, SERVICE } from './workload.ts';

export interface PodTimes {
  name: string;
  address: string;
  readyAt?: number;
  terminatingAt?: number;
  importedAt?: number;
  withdrawnAt?: number;
}

export interface Timeline {
  stop(): Promise<PodTimes[]>;
}

export function startTimeline(cls1: E2ECluster, cls2: E2ECluster): Timeline {
  const core = cls1.kubeConfig.makeApiClient(CoreV1Api);
  const pods = new Map<string, PodTimes>();
  let running = true;
  const poll = async () => {
    const now = Date.now();
    const [list, slices] = await Promise.all([
      core.listNamespacedPod({ namespace: NS, labelSelector: 'app=nginx' }),
      cls2.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${SERVICE},${LABEL_SOURCE_CLUSTER}=${cls1.id}`),
    ]);
    const imported = new Set(
      slices
        .flatMap((s) => s.endpoints ?? [])
        .filter((e) => e.conditions?.ready !== false)
        .map((e) => e.addresses[0]!),
    );
    for (const p of list.items) {
      const address = p.status?.podIP;
      if (!address) continue;
      const ready = p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
      let times = pods.get(address);
      if (times === undefined) {
        times = { name: p.metadata!.name!, address };
        pods.set(address, times);
        // Ready when first seen: when it turned ready is not known.
        if (ready) continue;
      }
      if (times.readyAt === undefined && ready) times.readyAt = now;
      if (times.terminatingAt === undefined && p.metadata?.deletionTimestamp) times.terminatingAt = now;
    }
    for (const times of pods.values()) {
      if (times.importedAt === undefined && imported.has(times.address)) times.importedAt = now;
      if (times.importedAt !== undefined && times.withdrawnAt === undefined && !imported.has(times.address))
        times.withdrawnAt = now;
    }
  };
  const loop = (async () => {
    while (running) {
      await poll().catch(() => {});
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return [...pods.values()];
    },
  };
}

/** Seconds from a pod's termination to its address leaving cls2's slices, for every pod that did both. */
export function withdrawalLags(pods: readonly PodTimes[]): number[] {
  return pods
    .filter((p) => p.terminatingAt !== undefined && p.withdrawnAt !== undefined && p.importedAt! < p.terminatingAt)
    .map((p) => Math.max(0, p.withdrawnAt! - p.terminatingAt!) / 1000);
}

/** Seconds from a pod turning ready to its address reaching cls2's slices. */
export function publishLags(pods: readonly PodTimes[]): number[] {
  return pods
    .filter((p) => p.readyAt !== undefined && p.importedAt !== undefined && p.importedAt >= p.readyAt)
    .map((p) => (p.importedAt! - p.readyAt!) / 1000);
}
