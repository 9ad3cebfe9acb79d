// Polling with a deadline, used for every readiness check of the testbed.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** Aborting stops the wait at once with the signal's reason (e.g. the process being waited for has exited). */
  signal?: AbortSignal;
}

/**
 * Calls `check` until it returns true. A check that throws counts as "not yet"; the last error is quoted when the
 * deadline passes so the reader sees why it never became ready.
 */
export async function waitFor(what: string, check: () => Promise<boolean>, opts: WaitOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const interval = opts.intervalMs ?? 200;
  let lastError: unknown;
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      if (await check()) return;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    opts.signal?.throwIfAborted();
    if (Date.now() >= deadline) {
      const why =
        lastError === undefined
          ? ''
          : `; last error: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}`;
      throw new Error(`timed out after ${Math.round(opts.timeoutMs / 1000)}s waiting for ${what}${why}`);
    }
    try {
      await sleep(interval, undefined, { signal: opts.signal });
    } catch {
      opts.signal?.throwIfAborted();
    }
  }
}

/** The last `maxLines` lines of a log file (at most 16 KiB read), for error messages. */
export function logTail(path: string, maxLines = 15): string {
  let fd: number | undefined;
  try {
    const size = statSync(path).size;
    const length = Math.min(size, 16 * 1024);
    const buf = Buffer.alloc(length);
    fd = openSync(path, 'r');
    readSync(fd, buf, 0, length, size - length);
    return buf
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-maxLines)
      .join('\n');
  } catch {
    return '(no log output)';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
