// The traffic benchmark's scenarios: what changes while the clients run. cls1 exports nginx-hello; clients in cls2
// reach it by clusterset name and ClusterSet IP (cross-cluster), clients in cls1 by cluster.local (the in-cluster
// baseline: the same change seen from inside the cluster). Some scenarios have cls2 export too, so that a client has
// somewhere to go when cls1's endpoints leave.
import { CoreV1Api, CoordinationV1Api } from '@kubernetes/client-node';
import { LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER, SYSTEM_NAMESPACE } from '../../src/core/names.ts';
import type { E2ECluster } from '../../test/support/e2e-harness.ts';
import { eventually } from '../../test/support/eventually.ts';
import { runningPodIps } from '../../test/support/workloads.ts';
import { apply, kubectl } from './kubectl.ts';
import type { TrafficTestbed } from './testbed.ts';
import { nginxExport, NS, PAIR_SERVICE, SERVICE } from './workload.ts';

export interface ScenarioContext {
  bed: TrafficTestbed;
  cls1: E2ECluster;
  cls2: E2ECluster;
  replicas: number;
  /** Multiplies every wait and outage a scenario chooses (a developer's quick run: 0.3). */
  scale: number;
  /** The workers' dead-cluster TTL. */
  ttlMs: number;
  log(line: string): void;
}

export interface Scenario {
  name: string;
  /** In words, for the table. */
  size(ctx: ScenarioContext): string;
  /** The preStop sleep of the exporting Deployment during the scenario. */
  preStopS: number;
  /** cls2 exports nginx-hello too during the scenario. */
  bothExport?: boolean;
  /** The Service the in-cluster baseline asks for; none: the scenario has no in-cluster equivalent. */
  baseline: typeof SERVICE | typeof PAIR_SERVICE | undefined;
  /** The change, measured from its start; resolves when it is over (the tail follows). */
  act(ctx: ScenarioContext): Promise<void>;
  /** Puts the ClusterSet back as it was before act (not measured). */
  restore?(ctx: ScenarioContext): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PRESTOP_S = 5;

export async function readyPods(c: E2ECluster, app: string, count: number): Promise<void> {
  await eventually(
    `${c.id}: ${count} ready ${app} pods`,
    async () => {
      const pods = await c.kubeConfig
        .makeApiClient(CoreV1Api)
        .listNamespacedPod({ namespace: NS, labelSelector: `app=${app}` });
      return (
        pods.items.length === count &&
        pods.items.every(
          (p) =>
            !p.metadata?.deletionTimestamp &&
            p.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'),
        )
      );
    },
    180_000,
  );
}

/** cls2 imports exactly cls1's ready nginx pods (and cls2's own when `withCls2`), and nothing else. */
export async function importConverged(ctx: ScenarioContext, withCls2: boolean): Promise<void> {
  await eventually(
    `cls2 imports exactly the ready nginx pods of ${withCls2 ? 'cls1 and cls2' : 'cls1'}`,
    async () => {
      const slices = await ctx.cls2.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${SERVICE}`);
      const imported = (source: string) =>
        slices
          .filter((s) => s.metadata?.labels?.[LABEL_SOURCE_CLUSTER] === source)
          .flatMap((s) => s.endpoints ?? [])
          .filter((e) => e.conditions?.ready !== false)
          .map((e) => e.addresses[0]!)
          .sort()
          .join(',');
      const expect = async (c: E2ECluster) => (await runningPodIps(c, NS, 'nginx')).join(',');
      return (
        imported('cls1') === (await expect(ctx.cls1)) && imported('cls2') === (withCls2 ? await expect(ctx.cls2) : '')
      );
    },
    240_000,
  );
}

async function rolloutRestart(c: E2ECluster): Promise<void> {
  await kubectl(c, ['rollout', 'restart', '-n', NS, 'deployment/nginx']);
  await kubectl(c, ['rollout', 'status', '-n', NS, 'deployment/nginx', '--timeout=300s']);
}

/** Evicts every nginx pod through the Eviction API, as `kubectl drain` does, retrying while the budget refuses. */
async function evictAll(c: E2ECluster): Promise<void> {
  const api = c.kubeConfig.makeApiClient(CoreV1Api);
  const original = (await api.listNamespacedPod({ namespace: NS, labelSelector: 'app=nginx' })).items.map(
    (p) => p.metadata!.name!,
  );
  const left = new Set(original);
  while (left.size > 0) {
    for (const name of left) {
      try {
        await api.createNamespacedPodEviction({
          name,
          namespace: NS,
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } },
        });
        left.delete(name);
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (code === 404) left.delete(name);
        else if (code !== 429) throw err;
      }
    }
    if (left.size > 0) await sleep(1000);
  }
}

async function leaseHolder(c: E2ECluster): Promise<string | undefined> {
  const lease = await c.kubeConfig
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ name: 'mcs-cloudmap-worker', namespace: SYSTEM_NAMESPACE });
  return lease.spec?.holderIdentity ?? undefined;
}

/** Past the TTL by a margin: peers act on a silent cluster at their next check after the TTL. */
const pastTtl = (ctx: ScenarioContext) => ctx.ttlMs + 30_000 * ctx.scale;

export const SCENARIOS: readonly Scenario[] = [
  {
    name: 'rollout',
    size: (ctx) => `rollout restart of the exporting Deployment (${ctx.replicas} pods), no preStop`,
    preStopS: 0,
    baseline: SERVICE,
    act: (ctx) => rolloutRestart(ctx.cls1),
  },
  {
    name: 'rollout-prestop',
    size: (ctx) => `rollout restart of the exporting Deployment (${ctx.replicas} pods), preStop sleep ${PRESTOP_S} s`,
    preStopS: PRESTOP_S,
    baseline: SERVICE,
    act: (ctx) => rolloutRestart(ctx.cls1),
  },
  {
    name: 'scale-to-zero',
    size: () =>
      `the exporting Deployment scaled to zero while cls2 also exports (baseline: a Service over it and another Deployment), preStop ${PRESTOP_S} s`,
    preStopS: PRESTOP_S,
    bothExport: true,
    baseline: PAIR_SERVICE,
    async act(ctx) {
      await kubectl(ctx.cls1, ['scale', '-n', NS, 'deployment/nginx', '--replicas=0']);
      await readyPods(ctx.cls1, 'nginx', 0);
    },
    async restore(ctx) {
      await kubectl(ctx.cls1, ['scale', '-n', NS, 'deployment/nginx', `--replicas=${ctx.replicas}`]);
      await readyPods(ctx.cls1, 'nginx', ctx.replicas);
    },
  },
  {
    name: 'node-drain',
    size: (ctx) =>
      `every exporting pod (${ctx.replicas}) evicted from the real node as a drain does, PodDisruptionBudget maxUnavailable 1, preStop ${PRESTOP_S} s`,
    preStopS: PRESTOP_S,
    baseline: SERVICE,
    async act(ctx) {
      await evictAll(ctx.cls1);
      await readyPods(ctx.cls1, 'nginx', ctx.replicas);
    },
  },
  {
    name: 'worker-killed',
    size: () =>
      "the exporting cluster's worker killed (SIGKILL) and replaced by one that must wait for the dead leader's Lease, then a rollout (preStop 5 s) under the new leader",
    preStopS: PRESTOP_S,
    baseline: SERVICE,
    async act(ctx) {
      await ctx.bed.killWorker(ctx.cls1);
      const identity = `cls1-worker-replacement-${Date.now()}`;
      await ctx.bed.startWorker(ctx.cls1, identity);
      await eventually(
        "the replacement worker holds cls1's Lease",
        async () => (await leaseHolder(ctx.cls1)) === identity,
        120_000,
      );
      await rolloutRestart(ctx.cls1);
    },
  },
  {
    name: 'worker-down-past-ttl',
    size: (ctx) =>
      `the exporting cluster's worker down (SIGKILL) for ${Math.round(pastTtl(ctx) / 1000)} s, past the dead-cluster TTL (${ctx.ttlMs / 1000} s), its pods serving`,
    preStopS: PRESTOP_S,
    baseline: SERVICE,
    async act(ctx) {
      await ctx.bed.killWorker(ctx.cls1);
      await sleep(pastTtl(ctx));
      await ctx.bed.startWorker(ctx.cls1, `cls1-worker-after-ttl-${Date.now()}`);
      await importConverged(ctx, false);
    },
  },
  {
    name: 'cut-from-cloudmap-past-ttl',
    size: (ctx) =>
      `the exporting cluster's worker cut from Cloud Map for ${Math.round(pastTtl(ctx) / 1000)} s, past the dead-cluster TTL (${ctx.ttlMs / 1000} s), its pods serving`,
    preStopS: PRESTOP_S,
    baseline: SERVICE,
    async act(ctx) {
      const proxy = ctx.bed.proxies[0]!;
      proxy.down();
      await sleep(pastTtl(ctx));
      proxy.up();
      await importConverged(ctx, false);
    },
  },
  {
    name: 'webhook-down',
    size: (ctx) =>
      `both clusters' webhook servers down for ${Math.round(60 * ctx.scale)} s while the exporting Deployment scales up by one and back, preStop ${PRESTOP_S} s`,
    preStopS: PRESTOP_S,
    baseline: SERVICE,
    async act(ctx) {
      const started = Date.now();
      for (const c of [ctx.cls1, ctx.cls2]) await ctx.bed.stopWebhook(c);
      await kubectl(ctx.cls1, ['scale', '-n', NS, 'deployment/nginx', `--replicas=${ctx.replicas + 1}`]);
      await readyPods(ctx.cls1, 'nginx', ctx.replicas + 1);
      await kubectl(ctx.cls1, ['scale', '-n', NS, 'deployment/nginx', `--replicas=${ctx.replicas}`]);
      await readyPods(ctx.cls1, 'nginx', ctx.replicas);
      await sleep(Math.max(0, 60_000 * ctx.scale - (Date.now() - started)));
      for (const c of [ctx.cls1, ctx.cls2]) await ctx.bed.startWebhook(c);
    },
  },
  {
    name: 'cloudmap-unreachable',
    size: (ctx) => `Cloud Map unreachable from every worker for ${Math.round(60 * ctx.scale)} s`,
    preStopS: PRESTOP_S,
    baseline: SERVICE,
    async act(ctx) {
      for (const p of ctx.bed.proxies) p.down();
      await sleep(60_000 * ctx.scale);
      for (const p of ctx.bed.proxies) p.up();
    },
  },
  {
    name: 'cluster-lost',
    size: (ctx) =>
      `the exporting cluster lost while cls2 also exports: its worker killed and its pods gone without a word to Cloud Map, for ${Math.round(pastTtl(ctx) / 1000)} s (dead-cluster TTL ${ctx.ttlMs / 1000} s)`,
    preStopS: PRESTOP_S,
    bothExport: true,
    baseline: undefined,
    async act(ctx) {
      await ctx.bed.killWorker(ctx.cls1);
      await kubectl(ctx.cls1, ['scale', '-n', NS, 'deployment/nginx', '--replicas=0']);
      await kubectl(ctx.cls1, [
        'delete',
        'pods',
        '-n',
        NS,
        '-l',
        'app=nginx',
        '--grace-period=0',
        '--force',
        '--wait=false',
      ]);
      await sleep(pastTtl(ctx));
    },
    async restore(ctx) {
      await kubectl(ctx.cls1, ['scale', '-n', NS, 'deployment/nginx', `--replicas=${ctx.replicas}`]);
      await readyPods(ctx.cls1, 'nginx', ctx.replicas);
      await ctx.bed.startWorker(ctx.cls1, `cls1-worker-after-loss-${Date.now()}`);
    },
  },
  {
    name: 'unexport',
    size: () => 'cls1 deletes its ServiceExport while clients are connected and cls2 also exports',
    preStopS: PRESTOP_S,
    bothExport: true,
    baseline: undefined,
    async act(ctx) {
      await kubectl(ctx.cls1, ['delete', 'serviceexport', '-n', NS, SERVICE, '--timeout=120s']);
      await eventually(
        "cls2 imports only cls2's endpoints",
        async () => {
          const slices = await ctx.cls2.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${SERVICE}`);
          return slices.length > 0 && slices.every((s) => s.metadata?.labels?.[LABEL_SOURCE_CLUSTER] === 'cls2');
        },
        120_000,
      );
    },
    async restore(ctx) {
      await apply(ctx.cls1, [nginxExport()]);
    },
  },
];
