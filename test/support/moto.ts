// A Cloud Map emulator of its own for suites that need no Kubernetes clusters (the Cloud Map adapter's integration
// tests, the emulator's own tests). Started with the testbed's supervisor, so it never outlives the test run; its log
// file is named in failures.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CloudMapEmulatorControl, CloudMapEmulatorOptions } from '../../hack/testbed/cloudmap-emulator.ts';
import { startMoto } from '../../hack/testbed/moto.ts';
import { freePorts } from '../../hack/testbed/ports.ts';
import { Supervisor } from '../../hack/testbed/supervisor.ts';

export interface StandaloneMoto {
  /** `http://127.0.0.1:<port>`: the Cloud Map endpoint. */
  readonly endpoint: string;
  readonly logPath: string;
  /** Mode, faults and call counts at run time. */
  readonly control: CloudMapEmulatorControl;
  /** Forgets every namespace, service, instance, operation, quota bucket and logged call; configuration back to the start. */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** `opts` default to the realistic mode, as everywhere in the testbed. */
export async function startStandaloneMoto(
  opts: CloudMapEmulatorOptions = {},
  timeoutMs = 30_000,
): Promise<StandaloneMoto> {
  const dir = mkdtempSync(join(tmpdir(), 'mcs-moto-'));
  const sup = new Supervisor(dir);
  try {
    const [port] = (await freePorts(1)) as [number];
    const moto = await startMoto(sup, dir, port, timeoutMs, opts);
    return {
      endpoint: moto.endpoint,
      logPath: moto.proc.logPath,
      control: moto.control,
      reset: () => moto.control.reset(),
      stop: () => sup.stopAll(),
    };
  } catch (err) {
    await sup.stopAll(1000);
    throw err;
  }
}
