// etcd for one cluster: plain HTTP on loopback, fsync off (the data is thrown away with the testbed).
import { join } from 'node:path';
import { binary } from './paths.ts';
import { isOk } from './probe.ts';
import type { ManagedProcess, Supervisor } from './supervisor.ts';

export interface EtcdSpec {
  clusterId: string;
  dataDir: string;
  logsDir: string;
  clientPort: number;
  peerPort: number;
}

export interface Etcd {
  proc: ManagedProcess;
  url: string;
}

export async function startEtcd(sup: Supervisor, spec: EtcdSpec, timeoutMs: number): Promise<Etcd> {
  const url = `http://127.0.0.1:${spec.clientPort}`;
  const peer = `http://127.0.0.1:${spec.peerPort}`;
  const proc = sup.start({
    name: `etcd (${spec.clusterId})`,
    command: binary('etcd'),
    args: [
      `--name=${spec.clusterId}`,
      `--data-dir=${spec.dataDir}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=${spec.clusterId}=${peer}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    logPath: join(spec.logsDir, 'etcd.log'),
  });
  await proc.waitReady('/health answers', () => isOk(`${url}/health`), timeoutMs);
  return { proc, url };
}
