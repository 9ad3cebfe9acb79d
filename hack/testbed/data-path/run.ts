// Runs the host commands the data path is made of (ip, sysctl, ctr, umount), with the command line and its stderr in
// every error.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export async function run(command: string, args: readonly string[], what: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${what}: \`${command} ${args.join(' ')}\` failed: ${e.stderr?.trim() || e.message}`, {
      cause: err,
    });
  }
}

/** Like run(), for clean-up steps whose failure must not stop the rest of the clean-up: false when it failed. */
export async function tryRun(command: string, args: readonly string[]): Promise<boolean> {
  try {
    await execFileAsync(command, args);
    return true;
  } catch {
    return false;
  }
}
