// moto's server: the Cloud Map (servicediscovery) emulator, one per ClusterSet, plain HTTP on loopback.
import { join } from 'node:path';
import { binary } from './paths.ts';
import { isOk } from './probe.ts';
import type { ManagedProcess, Supervisor } from './supervisor.ts';

export interface Moto {
  proc: ManagedProcess;
  /** Give this to the AWS SDK as `endpoint` (with `disableHostPrefix: true`). */
  endpoint: string;
}

export async function startMoto(sup: Supervisor, logsDir: string, port: number, timeoutMs: number): Promise<Moto> {
  const endpoint = `http://127.0.0.1:${port}`;
  const proc = sup.start({
    name: 'moto_server',
    command: binary('moto_server'),
    args: ['-H', '127.0.0.1', '-p', String(port)],
    logPath: join(logsDir, 'moto.log'),
    // No colour codes in the log file.
    env: { ...process.env, NO_COLOR: '1', PYTHONUNBUFFERED: '1' },
  });
  await proc.waitReady('/moto-api/ answers', () => isOk(`${endpoint}/moto-api/`), timeoutMs);
  return { proc, endpoint };
}
