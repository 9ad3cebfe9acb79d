// A Cloud Map emulator (moto_server) of its own for suites that need no Kubernetes clusters (the Cloud Map adapter's
// integration tests). Started with the testbed's supervisor, so it never outlives the test run; its log file is
// named in failures.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMoto } from '../../hack/testbed/moto.ts';
import { freePorts } from '../../hack/testbed/ports.ts';
import { Supervisor } from '../../hack/testbed/supervisor.ts';

export interface StandaloneMoto {
  /** `http://127.0.0.1:<port>`: the Cloud Map endpoint. */
  readonly endpoint: string;
  readonly logPath: string;
  /** Forgets every namespace, service, instance and operation (moto's reset API). */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export async function startStandaloneMoto(timeoutMs = 30_000): Promise<StandaloneMoto> {
  const dir = mkdtempSync(join(tmpdir(), 'mcs-moto-'));
  const sup = new Supervisor(dir);
  try {
    const [port] = (await freePorts(1)) as [number];
    const moto = await startMoto(sup, dir, port, timeoutMs);
    return {
      endpoint: moto.endpoint,
      logPath: moto.proc.logPath,
      async reset() {
        const res = await fetch(`${moto.endpoint}/moto-api/reset`, { method: 'POST' });
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`moto reset answered HTTP ${res.status}; see ${moto.proc.logPath}`);
      },
      stop: () => sup.stopAll(),
    };
  } catch (err) {
    await sup.stopAll(1000);
    throw err;
  }
}
