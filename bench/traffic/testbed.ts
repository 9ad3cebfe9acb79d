// The traffic benchmark's ClusterSet: the testbed with a real node per cluster (pods serve, traffic crosses clusters),
// mcs-cloudmap installed as in the end-to-end tests, and each cluster's worker reaching Cloud Map through a proxy of its
// own, so a scenario can cut one cluster (or all) from Cloud Map. Workers can be killed and started again, webhooks
// stopped and started.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { deployLocally, type LocalDeployment } from '../../hack/local/deploy.ts';
import { configMapEnv, kustomizeBase } from '../../hack/local/manifests.ts';
import { startWorkerProcess } from '../../hack/local/processes.ts';
import { startClusterSet, type TestClusterSet } from '../../hack/testbed/index.ts';
import { freePorts } from '../../hack/testbed/ports.ts';
import { Supervisor, type ManagedProcess } from '../../hack/testbed/supervisor.ts';
import { SYSTEM_NAMESPACE } from '../../src/core/names.ts';
import { applyClusterProperties, E2ECluster } from '../../test/support/e2e-harness.ts';
import { startCuttableProxy, type CuttableProxy } from '../../test/support/proxy.ts';

export interface TrafficTestbed {
  cs: TestClusterSet;
  clusters: E2ECluster[];
  /** Per cluster, in the order of `clusters`: the proxy between its worker and the Cloud Map emulator. */
  proxies: CuttableProxy[];
  /** SIGKILL: nothing flushed, the Lease is not released. */
  killWorker(c: E2ECluster): Promise<void>;
  /** A new worker for the cluster under `identity` (a new one waits for the dead one's Lease to expire). */
  startWorker(c: E2ECluster, identity?: string): Promise<void>;
  stopWebhook(c: E2ECluster): Promise<void>;
  startWebhook(c: E2ECluster): Promise<void>;
  stop(opts: { keepLogs: boolean }): Promise<void>;
}

async function end(proc: ManagedProcess, signal: NodeJS.Signals): Promise<void> {
  proc.stopping = true;
  proc.signalGroup(signal);
  await proc.exited;
}

/** `workerEnv`: MCS_* settings of every worker on top of the install's ConfigMap (the dead-cluster TTL of the run). */
export async function startTrafficTestbed(
  workerEnv: Record<string, string>,
  log: (line: string) => void,
): Promise<TrafficTestbed> {
  const cs = await startClusterSet({ dataPath: true, log });
  let deployment: LocalDeployment | undefined;
  const proxies: CuttableProxy[] = [];
  mkdirSync(join(cs.dir, 'traffic-workers'));
  const sup = new Supervisor(join(cs.dir, 'traffic-workers'));
  const stop = async ({ keepLogs }: { keepLogs: boolean }) => {
    await sup.stopAll();
    await deployment?.stop();
    await Promise.all(proxies.map((p) => p.close()));
    await cs.stop({ keepLogs });
  };
  try {
    deployment = await deployLocally(cs, { configEnv: workerEnv, log });
    const clusters = cs.clusters.map((c, i) => new E2ECluster(c, deployment!.installs[i]!));
    for (const c of clusters) applyClusterProperties(c, cs.clustersetId);
    proxies.push(...(await Promise.all(clusters.map(() => startCuttableProxy(cs.cloudMapEndpoint)))));
    const configEnv = { ...configMapEnv(kustomizeBase()), ...workerEnv };
    let generation = 0;
    const startWorker = async (c: E2ECluster, identity = `${c.id}-worker-on-host`) => {
      const [metricsPort, healthPort] = (await freePorts(2)) as [number, number];
      const logsDir = join(cs.dir, 'traffic-workers', `${c.id}-${++generation}`);
      mkdirSync(logsDir, { recursive: true });
      c.worker = await startWorkerProcess(sup, {
        clusterId: c.id,
        configEnv,
        namespace: SYSTEM_NAMESPACE,
        metricsPort,
        healthPort,
        logsDir,
        identity,
        cloudMapEndpoint: proxies[clusters.indexOf(c)]!.url,
        region: cs.region,
        kubeconfig: join(cs.dir, 'mcs-cloudmap', c.id, 'worker.kubeconfig'),
      });
    };
    // The install's workers talk to the emulator directly: replaced by workers behind the proxies.
    for (const c of clusters) {
      await end(c.worker.proc, 'SIGTERM');
      await startWorker(c);
    }
    return {
      cs,
      clusters,
      proxies,
      startWorker,
      stop,
      killWorker: (c) => end(c.worker.proc, 'SIGKILL'),
      stopWebhook: (c) => end(c.webhook.proc, 'SIGTERM'),
      async startWebhook(c) {
        const proc = sup.start(c.webhook.proc.spec);
        await proc.waitReady(
          '/readyz answers ok',
          async () => (await fetch(`${c.webhook.healthUrl}/readyz`)).ok,
          60_000,
        );
        c.webhook = { ...c.webhook, proc };
      },
    };
  } catch (err) {
    await stop({ keepLogs: true });
    throw err;
  }
}
