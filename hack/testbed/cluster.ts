// One testbed cluster: etcd → kube-apiserver → (controller-manager, scheduler, kwok, fake Nodes) → ready, meaning the
// fake Nodes are Ready and schedulable and the `default` ServiceAccount exists, so a Deployment gets Running pods.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startApiserver } from './apiserver.ts';
import { startControllerManager } from './controller-manager.ts';
import { startEtcd } from './etcd.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { startRealNode, type RealNode, type RealNodePlan } from './data-path/index.ts';
import { createFakeNodes, FAKE_NODE_TAINT, startKwok } from './kwok.ts';
import { clusterNetwork, type ClusterIpFamilies, type ClusterNetwork } from './network.ts';
import { createClusterPki, createNodePki } from './pki.ts';
import { freePorts } from './ports.ts';
import { startScheduler } from './scheduler.ts';
import { isOk } from './probe.ts';
import type { ManagedProcess, Supervisor } from './supervisor.ts';
import { waitFor } from './wait.ts';

export interface TestCluster {
  /** Cluster id (`cls1`, `cls2`, ...), also the kubeconfig's context name. */
  id: string;
  /** 1-based position in the ClusterSet. */
  index: number;
  kubeconfigPath: string;
  context: string;
  /** kube-apiserver URL, https://127.0.0.1:<port>. */
  server: string;
  /** The cluster's IP families, the primary first: its Services get ClusterIPs of these, its pods addresses of these. */
  ipFamilies: ClusterIpFamilies;
  /** The primary family's pod range. */
  podCidr: string;
  /** The primary family's Service range. */
  serviceCidr: string;
  /** One pod range per family, in `ipFamilies` order. */
  podCidrs: string[];
  /** One Service range per family, in `ipFamilies` order. */
  serviceCidrs: string[];
  /** One log file per component: etcd.log, kube-apiserver.log, kube-controller-manager.log, kube-scheduler.log, kwok.log. */
  logsDir: string;
  /** CA that signed the apiserver's certificate (and every client certificate of this cluster). */
  caCertPath: string;
  /** Names of the fake Nodes, each with its own range of each pod CIDR. */
  nodeNames: string[];
  /** The real node, with a data path (`startClusterSet({ dataPath: true })`): pods scheduled there run. */
  realNode?: RealNode;
  /** Health endpoints of the other components. */
  endpoints: { etcd: string; controllerManager: string; scheduler: string; kwok: string };
  /** A fresh client configuration for this cluster (admin, system:masters). */
  readonly kubeConfig: () => KubeConfig;
  /** Fault tests: stops one component (SIGTERM, SIGKILL after 5 s) and waits until it has exited. */
  readonly stopComponent: (name: RestartableComponent) => Promise<void>;
  /** Starts a stopped component again with the same flags, ports and data; waits until it answers its health check. */
  readonly startComponent: (name: RestartableComponent) => Promise<void>;
}

export type RestartableComponent = 'etcd' | 'kube-apiserver';

export interface ClusterStartOptions {
  index: number;
  /** The ClusterSet's directory; this cluster uses <dir>/<id>. */
  dir: string;
  sharedPodCidr: boolean;
  region: string;
  ipFamilies: ClusterIpFamilies;
  timeoutMs: number;
  /** Aborted when another part of the ClusterSet failed to start: stop waiting. */
  signal: AbortSignal;
  /** With a data path: this cluster's real node, and the host's address on the data-path bridge. */
  realNode?: { plan: RealNodePlan; hostIp: string };
}

function loadKubeConfig(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

async function waitUntilSchedulable(
  kc: KubeConfig,
  network: ClusterNetwork,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  const expected = new Set(network.nodes.map((n) => n.name));
  await waitFor(
    `${network.clusterId}: fake nodes Ready without taints other than the data path's`,
    async () => {
      const nodes = await api.listNode();
      const ready = nodes.items.filter(
        (n) =>
          expected.has(n.metadata?.name ?? '') &&
          n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') &&
          (n.spec?.taints ?? []).every((t) => t.key === FAKE_NODE_TAINT.key),
      );
      return ready.length === expected.size;
    },
    { timeoutMs, signal },
  );
  await waitFor(
    `${network.clusterId}: ServiceAccount default/default`,
    async () => {
      await api.readNamespacedServiceAccount({ name: 'default', namespace: 'default' });
      return true;
    },
    { timeoutMs, signal },
  );
}

export async function startCluster(sup: Supervisor, opts: ClusterStartOptions): Promise<TestCluster> {
  const network = clusterNetwork(opts.index, opts.sharedPodCidr, opts.region, opts.ipFamilies);
  const id = network.clusterId;
  const base = join(opts.dir, id);
  const logsDir = join(base, 'logs');
  mkdirSync(logsDir, { recursive: true });
  const [etcdClient, etcdPeer, apiserverPort, controllerManagerPort, schedulerPort, kwokPort] = (await freePorts(
    6,
  )) as [number, number, number, number, number, number];
  const server = `https://127.0.0.1:${apiserverPort}`;

  const [pki, etcd] = await Promise.all([
    createClusterPki(join(base, 'pki'), id, network.apiserverServiceIps, opts.realNode ? [opts.realNode.hostIp] : []),
    startEtcd(
      sup,
      { clusterId: id, dataDir: join(base, 'etcd'), logsDir, clientPort: etcdClient, peerPort: etcdPeer },
      opts.timeoutMs,
    ),
  ]);
  const kubeconfigPath = join(base, 'kubeconfig');
  const controllerManagerKubeconfig = join(base, 'controller-manager.kubeconfig');
  const schedulerKubeconfig = join(base, 'scheduler.kubeconfig');
  writeKubeconfig(kubeconfigPath, { context: id, server, caCert: pki.ca.cert, client: pki.admin });
  writeKubeconfig(controllerManagerKubeconfig, {
    context: id,
    server,
    caCert: pki.ca.cert,
    client: pki.controllerManager,
  });
  writeKubeconfig(schedulerKubeconfig, { context: id, server, caCert: pki.ca.cert, client: pki.scheduler });

  const nodePki = opts.realNode && (await createNodePki(join(base, 'pki'), pki.ca, opts.realNode.plan.name));
  const apiserver = await startApiserver(
    sup,
    {
      clusterId: id,
      logsDir,
      port: apiserverPort,
      etcdUrl: etcd.url,
      serviceCidrs: network.serviceCidrs,
      pki,
      kubeletClient: nodePki?.apiserverKubeletClient,
    },
    opts.timeoutMs,
  );
  const components: Record<RestartableComponent, { proc: ManagedProcess; healthy: () => Promise<boolean> }> = {
    etcd: { proc: etcd.proc, healthy: () => isOk(`${etcd.url}/health`) },
    'kube-apiserver': {
      proc: apiserver.proc,
      healthy: () => isOk(`${server}/readyz`, { ca: pki.ca.cert, client: pki.admin }),
    },
  };
  const kc = loadKubeConfig(kubeconfigPath);
  const [realNode] = await Promise.all([
    opts.realNode &&
      nodePki &&
      startRealNode(sup, {
        node: opts.realNode.plan,
        server: `https://${opts.realNode.hostIp}:${apiserverPort}`,
        clusterDir: base,
        logsDir,
        region: opts.region,
        zone: network.nodes[0]!.zone,
        clusterCidrs: network.podCidrs,
        pki,
        nodePki,
        kc,
        timeoutMs: opts.timeoutMs,
        signal: opts.signal,
      }),
    createFakeNodes(kc, network, opts.region, opts.realNode !== undefined),
    startControllerManager(
      sup,
      { network, logsDir, kubeconfig: controllerManagerKubeconfig, port: controllerManagerPort, pki },
      opts.timeoutMs,
    ),
    startScheduler(
      sup,
      { clusterId: id, logsDir, kubeconfig: schedulerKubeconfig, port: schedulerPort, pki },
      opts.timeoutMs,
    ),
    startKwok(
      sup,
      { network, region: opts.region, logsDir, kubeconfig: kubeconfigPath, port: kwokPort },
      opts.timeoutMs,
    ),
  ]);
  await waitUntilSchedulable(kc, network, opts.timeoutMs, opts.signal);

  return {
    id,
    index: opts.index,
    kubeconfigPath,
    context: id,
    server,
    ipFamilies: network.ipFamilies,
    podCidr: network.podCidr,
    serviceCidr: network.serviceCidr,
    podCidrs: network.podCidrs,
    serviceCidrs: network.serviceCidrs,
    logsDir,
    caCertPath: pki.ca.cert,
    nodeNames: network.nodes.map((n) => n.name),
    ...(realNode && { realNode }),
    endpoints: {
      etcd: etcd.url,
      controllerManager: `https://127.0.0.1:${controllerManagerPort}`,
      scheduler: `https://127.0.0.1:${schedulerPort}`,
      kwok: `http://127.0.0.1:${kwokPort}`,
    },
    kubeConfig: () => loadKubeConfig(kubeconfigPath),
    stopComponent: (name) => sup.stop(components[name].proc),
    async startComponent(name) {
      const component = components[name];
      component.proc = sup.start(component.proc.spec);
      await component.proc.waitReady('to answer its health check after a restart', component.healthy, opts.timeoutMs);
    },
  };
}
