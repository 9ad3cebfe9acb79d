// A private etcd + kube-apiserver (no controllers, no nodes) built from the testbed's own pieces, for the one test that
// must restart an apiserver: a restart re-initialises the apiserver's watch cache at the current etcd revision, so a
// client that reconnects with an older resourceVersion gets a real 410 "too old resource version". The shared
// ClusterSet is never restarted because other suites use it.
import { KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiserver, type Apiserver } from '../../../hack/testbed/apiserver.ts';
import { startEtcd } from '../../../hack/testbed/etcd.ts';
import { writeKubeconfig } from '../../../hack/testbed/kubeconfig.ts';
import { createClusterPki } from '../../../hack/testbed/pki.ts';
import { freePorts } from '../../../hack/testbed/ports.ts';
import { Supervisor } from '../../../hack/testbed/supervisor.ts';

export interface PrivateApiserver {
  readonly server: string;
  readonly logsDir: string;
  kubeConfig(): KubeConfig;
  /** Stops kube-apiserver (etcd keeps its data) and starts it again on the same port. */
  restart(): Promise<void>;
  stop(opts: { keepLogs: boolean }): Promise<void>;
}

const TIMEOUT_MS = 90_000;

export async function startPrivateApiserver(): Promise<PrivateApiserver> {
  const dir = mkdtempSync(join(tmpdir(), 'mcs-cloudmap-kube-it-'));
  const sup = new Supervisor(dir);
  const id = 'kube-it';
  const [etcdClient, etcdPeer, port] = (await freePorts(3)) as [number, number, number];
  const [pki, etcd] = await Promise.all([
    createClusterPki(join(dir, 'pki'), id, ['10.200.0.1']),
    startEtcd(
      sup,
      { clusterId: id, dataDir: join(dir, 'etcd'), logsDir: dir, clientPort: etcdClient, peerPort: etcdPeer },
      TIMEOUT_MS,
    ),
  ]);
  const spec = { clusterId: id, logsDir: dir, port, etcdUrl: etcd.url, serviceCidrs: ['10.200.0.0/24'], pki };
  let apiserver: Apiserver = await startApiserver(sup, spec, TIMEOUT_MS);
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfigPath, { context: id, server: apiserver.server, caCert: pki.ca.cert, client: pki.admin });
  return {
    server: apiserver.server,
    logsDir: dir,
    kubeConfig: () => {
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      return kc;
    },
    restart: async () => {
      apiserver.proc.stopping = true;
      apiserver.proc.signalGroup('SIGTERM');
      await apiserver.proc.exited;
      apiserver = await startApiserver(sup, spec, TIMEOUT_MS);
    },
    stop: async ({ keepLogs }) => {
      await sup.stopAll();
      if (!keepLogs) rmSync(dir, { recursive: true, force: true });
    },
  };
}
