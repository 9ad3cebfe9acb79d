// The one way a test waits for something to become true: poll an observed effect, never sleep for a guessed time.
import { setTimeout as sleep } from 'node:timers/promises';

/** What a check returns: true when done; false, or a string saying what it saw instead, when not yet. */
export type Check = () => boolean | string | Promise<boolean | string>;

// The first polls come quickly, so a test of in-process state is not slowed down; later ones every quarter second,
// so a wait of a minute on an apiserver or a pod costs it little.
const FIRST_INTERVAL_MS = 10;
const MAX_INTERVAL_MS = 250;

/**
 * Resolves once `check` returns true. A check that throws counts as not yet. After `timeoutMs` it rejects naming
 * `what`, how long it waited and how many checks ran, and the last thing the check said (its error, or its string).
 */
export async function eventually(what: string, check: Check, timeoutMs = 45_000): Promise<void> {
  const started = performance.now();
  let interval = FIRST_INTERVAL_MS;
  let checks = 0;
  let last = 'returned false';
  for (;;) {
    checks += 1;
    try {
      const result = await check();
      if (result === true) return;
      if (typeof result === 'string') last = `saw: ${result}`;
    } catch (err) {
      last = `threw: ${err instanceof Error ? err.message : String(err)}`;
    }
    const waited = performance.now() - started;
    if (waited >= timeoutMs) {
      throw new Error(
        `timed out waiting for ${what}: ${checks} checks over ${(waited / 1000).toFixed(1)} s (limit ${timeoutMs / 1000} s); the last check ${last}`,
      );
    }
    await sleep(Math.min(interval, timeoutMs - waited));
    interval = Math.min(MAX_INTERVAL_MS, interval * 2);
  }
}
