// The Cloud Map emulator, one per ClusterSet, plain HTTP on loopback: moto's server with the documented Cloud Map
// behaviour patched in (python -m cloudmap_emulator from this directory, in moto's virtual environment).
import { join } from 'node:path';
import { CloudMapEmulatorControl, emulatorArgs, type CloudMapEmulatorOptions } from './cloudmap-emulator.ts';
import { binary } from './paths.ts';
import { isOk } from './probe.ts';
import type { ManagedProcess, Supervisor } from './supervisor.ts';

export interface Moto {
  proc: ManagedProcess;
  /** Give this to the AWS SDK as `endpoint` (with `disableHostPrefix: true`). */
  endpoint: string;
  /** Faults, mode and call counts at run time. */
  control: CloudMapEmulatorControl;
}

export async function startMoto(
  sup: Supervisor,
  logsDir: string,
  port: number,
  timeoutMs: number,
  opts: CloudMapEmulatorOptions = {},
): Promise<Moto> {
  const endpoint = `http://127.0.0.1:${port}`;
  const proc = sup.start({
    name: 'moto_server',
    command: binary('moto-python'),
    args: ['-m', 'cloudmap_emulator', '-H', '127.0.0.1', '-p', String(port), ...emulatorArgs(opts)],
    logPath: join(logsDir, 'moto.log'),
    // No colour codes in the log file; the package is found next to this file.
    env: { ...process.env, NO_COLOR: '1', PYTHONUNBUFFERED: '1', PYTHONPATH: import.meta.dirname },
  });
  await proc.waitReady('/_emulator/config answers', () => isOk(`${endpoint}/_emulator/config`), timeoutMs);
  return { proc, endpoint, control: new CloudMapEmulatorControl(endpoint) };
}
