// The hostile-client runs of `npm run chaos` (long, recorded in docs/reliability.md) and of the hostile-client tests
// (short, inside `npm test`): reviews measured from a well-behaved client while slowloris connections sit on the
// server, and a mixed soak where a share of the traffic is hostile; and, for test/integration/webhook/max-size.test.ts,
// reviews while maximum-size bodies arrive several at once. They return figures; callers print them.

import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { allBodies, mixed, openLoop, warmClient, type Result, type ServerProcess } from './webhook-client.ts';
import { maxSizeProcess } from './max-size-sender.ts';
import {
  EXPECTED_STATUS,
  HOSTILE_KINDS,
  hostileClient,
  OVERSIZED_RESET,
  slowlorisProcess,
  type HostileKind,
  type MaxSizeShape,
  type SlowlorisFigures,
} from './hostile-clients.ts';

export const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

export interface SlowlorisRun {
  baseline: Result;
  underAttack: Result;
  slow: SlowlorisFigures;
  rssBefore: number;
  rssAfter: number;
  load: string;
}

/** Mixed reviews at `rate` for `durationMs` alone, then again with `connections` slowloris connections open. */
export async function slowlorisRun(
  server: ServerProcess,
  connections: number,
  rate: number,
  durationMs: number,
): Promise<SlowlorisRun> {
  const pools = allBodies();
  const c = await warmClient(server.port, server.ca, 64, pools.get('/mutate')!);
  try {
    const rssBefore = await server.rss();
    const baseline = await openLoop(rate, durationMs, mixed(c, pools));
    const attack = await slowlorisProcess(server.port, connections);
    const underAttack = await openLoop(rate, durationMs, mixed(c, pools));
    const slow = await attack.stop();
    return { baseline, underAttack, slow, rssBefore, rssAfter: await server.rss(), load: load() };
  } finally {
    c.destroy();
  }
}

export interface SoakRun {
  reviews: Result;
  /**
   * Hostile requests sent, by kind: how many got another status than EXPECTED_STATUS, and how many saw their connection
   * closed or reset unanswered (the server past a handshake or header deadline, as when it is saturated; never a crash:
   * the normal reviews and the process are checked separately).
   */
  hostile: Record<HostileKind, { sent: number; unexpected: number; unanswered: number }>;
  /** One unexpected reply per kind, to show what went wrong. */
  examples: string[];
  slow: SlowlorisFigures;
  /** [seconds since start, server RSS bytes]. */
  rss: Array<[number, number]>;
  load: string;
}

/**
 * Mixed traffic at `rate` for `durationMs`, every request whose index is a multiple of 1/hostileShare replaced by a
 * hostile one (kinds in turn), plus `slow` slowloris connections throughout; server RSS sampled every `sampleEveryMs`.
 */
export async function soakRun(
  server: ServerProcess,
  opts: {
    rate: number;
    durationMs: number;
    hostileShare: number;
    slow: number;
    sampleEveryMs: number;
    maxRequestBytes: number;
  },
): Promise<SoakRun> {
  const pools = allBodies();
  const c = await warmClient(server.port, server.ca, 64, pools.get('/mutate')!);
  const bad = hostileClient(server.port, server.ca, opts.maxRequestBytes);
  const hostile = Object.fromEntries(
    HOSTILE_KINDS.map((k) => [k, { sent: 0, unexpected: 0, unanswered: 0 }]),
  ) as SoakRun['hostile'];
  const examples: string[] = [];
  const every = Math.round(1 / opts.hostileShare);
  const normal = mixed(c, pools);
  const rss: Array<[number, number]> = [[0, await server.rss()]];
  const attack = await slowlorisProcess(server.port, opts.slow);
  const start = performance.now();
  let sampling = false;
  let slow: SlowlorisFigures | undefined;
  try {
    const reviews = await openLoop(
      opts.rate,
      opts.durationMs,
      async (i) => {
        if (i % every !== every - 1) return normal(i);
        const kind = HOSTILE_KINDS[Math.floor(i / every) % HOSTILE_KINDS.length]!;
        hostile[kind].sent++;
        const reply = await bad.send(kind, i);
        if (
          reply.status === 0 &&
          EXPECTED_STATUS[kind] !== 0 &&
          !(kind === 'oversized' && reply.status === OVERSIZED_RESET)
        ) {
          hostile[kind].unanswered++;
        } else if (
          reply.status !== EXPECTED_STATUS[kind] &&
          !(kind === 'oversized' && reply.status === OVERSIZED_RESET)
        ) {
          if (hostile[kind].unexpected++ === 0) examples.push(`${kind}: ${reply.status} ${reply.body.slice(0, 200)}`);
        }
        return undefined;
      },
      () => {
        const t = performance.now() - start;
        if (sampling || t < rss[rss.length - 1]![0] * 1000 + opts.sampleEveryMs) return;
        sampling = true;
        void server.rss().then((b) => {
          rss.push([t / 1000, b]);
          sampling = false;
        });
      },
    );
    slow = await attack.stop();
    rss.push([(performance.now() - start) / 1000, await server.rss()]);
    return { reviews, hostile, examples, slow, rss, load: load() };
  } finally {
    if (!slow) await attack.stop();
    bad.destroy();
    c.destroy();
  }
}

export interface MaxSizeRun {
  /** Mixed reviews alone, then while the max-size bodies are sent. */
  baseline: Result;
  reviews: Result;
  /** Max-size bodies sent, by shape, and how many got another status than MAX_SIZE_STATUS. */
  big: Record<MaxSizeShape, { sent: number; unexpected: number }>;
  examples: string[];
  rssBefore: number;
  /** The server's highest RSS since it started (ru_maxrss), read after the run. */
  peakRss: number;
  rssAfter: number;
  /** The server's event-loop delay (ms) while the reviews ran alone, and while the bodies arrived. */
  loopAlone: { p99: number; max: number };
  loopMeanwhile: { p99: number; max: number };
  /** The event-loop delay (ms) of the client that times the reviews, while the bodies arrived (from another process). */
  clientLoop: { p99: number; max: number };
  /** CPU time (ms) the sender process spent sending the bodies. */
  senderCpuMs: number;
  load: string;
}

/**
 * Mixed reviews at `rate` per second for `durationMs` alone, then again while `concurrency` clients of another process
 * each send maximum-size bodies back to back (shapes in turn) (W6).
 */
export async function maxSizeRun(
  server: ServerProcess,
  opts: { concurrency: number; rate: number; durationMs: number; maxRequestBytes: number },
): Promise<MaxSizeRun> {
  const pools = allBodies();
  const c = await warmClient(server.port, server.ca, 16, pools.get('/mutate')!);
  const sender = await maxSizeProcess({
    port: server.port,
    ca: server.ca,
    maxRequestBytes: opts.maxRequestBytes,
    concurrency: opts.concurrency,
    durationMs: opts.durationMs,
  });
  try {
    await server.loopDelay();
    const baseline = await openLoop(opts.rate, opts.durationMs, mixed(c, pools));
    const loopAlone = await server.loopDelay();
    const rssBefore = await server.rss();
    const clientLoop = monitorEventLoopDelay({ resolution: 1 });
    clientLoop.enable();
    const sent = sender.go();
    const reviews = await openLoop(opts.rate, opts.durationMs, mixed(c, pools));
    const loopMeanwhile = await server.loopDelay();
    clientLoop.disable();
    const { big, examples, cpuMs } = await sent;
    return {
      baseline,
      reviews,
      big,
      examples,
      loopAlone,
      loopMeanwhile,
      clientLoop: { p99: clientLoop.percentile(99) / 1e6, max: clientLoop.max / 1e6 },
      senderCpuMs: cpuMs,
      rssBefore,
      peakRss: await server.peakRss(),
      rssAfter: await server.rss(),
      load: load(),
    };
  } finally {
    sender.kill();
    c.destroy();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** Slowloris figures as one line: connections opened, and per style how many the server cut and after how long. */
export function describeSlow(s: SlowlorisFigures): string {
  const styles = (Object.keys(s.cut) as Array<keyof SlowlorisFigures['cut']>).map((k) =>
    s.cut[k] === 0
      ? `${k} 0 cut`
      : `${k} ${s.cut[k]} cut (median held ${(median(s.heldMs[k]) / 1000).toFixed(1)} s; replies ${Object.entries(
          s.replies[k],
        )
          .map(([r, n]) => `${r}×${n}`)
          .join(' ')})`,
  );
  return `${s.opened} slow connections opened; ${styles.join(', ')}`;
}
