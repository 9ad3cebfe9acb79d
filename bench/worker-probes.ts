// Probes of a worker running as a host process, for the benchmarks that start and stop workers (bench/sync.ts,
// bench/runtime.ts): its /metrics and /readyz, waiting for a condition, stopping it as a Deployment would.
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostProcess } from '../hack/local/processes.ts';

export async function metrics(worker: HostProcess): Promise<string> {
  return (await fetch(worker.metricsUrl)).text();
}

/** Every series of one metric in a worker's /metrics text, with its labels. */
export function metricSeries(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  return [...text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? ([0-9.e+-]+)$`, 'gm'))].map((m) => ({
    labels: Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!])),
    value: Number(m[2]),
  }));
}

/** A metric's value as the worker's /metrics reports it (the first series of that name); 0 when absent. */
export function metricValue(text: string, name: string): number {
  return metricSeries(text, name)[0]?.value ?? 0;
}

export async function queuesIdle(worker: HostProcess): Promise<boolean> {
  return metricSeries(await metrics(worker), 'mcs_cloudmap_workqueue_depth').every((s) => s.value === 0);
}

export async function reconciled(worker: HostProcess): Promise<number> {
  return metricSeries(await metrics(worker), 'mcs_cloudmap_reconcile_total').reduce((n, s) => n + s.value, 0);
}

export async function isReady(worker: HostProcess): Promise<boolean> {
  try {
    return (await fetch(`${worker.healthUrl}/readyz`)).ok;
  } catch {
    return false;
  }
}

/** Polls `check` every 100 ms; resolves with the time it first held. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
  return performance.now();
}

export async function stopWorkers(workers: readonly HostProcess[]): Promise<void> {
  await Promise.all(
    workers.map(async (w) => {
      w.proc.stopping = true;
      w.proc.signalGroup('SIGTERM');
      await Promise.race([w.proc.exited, sleep(30_000).then(() => w.proc.signalGroup('SIGKILL'))]);
      await w.proc.exited;
    }),
  );
}
