// Maximum-size bodies sent back to back from a process of their own (W6): writing 7 MiB over TLS costs the sender
// milliseconds of encryption per body, which in the process that times the reviews would count as the server's latency.

import { fork } from 'node:child_process';
import { MAX_SIZE_SHAPES, MAX_SIZE_STATUS, maxSizeClient, type MaxSizeShape } from './hostile-clients.ts';
import { messagesOf } from './webhook-client.ts';

export interface MaxSizeFigures {
  /** Bodies sent, by shape, and how many got another status than MAX_SIZE_STATUS. */
  big: Record<MaxSizeShape, { sent: number; unexpected: number }>;
  examples: string[];
  /** CPU time (user + system, ms) the sender spent while sending: how much of the shared cores the bodies' other end takes. */
  cpuMs: number;
}

export interface MaxSizeOptions {
  port: number;
  ca: string;
  maxRequestBytes: number;
  concurrency: number;
  durationMs: number;
}

/** Starts the sender process with its bodies built; `go()` sends for `durationMs` and resolves with what it saw. */
export async function maxSizeProcess(opts: MaxSizeOptions): Promise<{ go(): Promise<MaxSizeFigures>; kill(): void }> {
  const child = fork(import.meta.filename, [], { stdio: 'inherit' });
  const next = messagesOf(child, 'max-size sender');
  child.send(opts);
  await next();
  return {
    // The sender exits once it has reported.
    go: () => {
      child.send('go');
      return next() as Promise<MaxSizeFigures>;
    },
    /** Stops the sender if it is still running (a run that failed midway). */
    kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    },
  };
}

async function send(opts: MaxSizeOptions, client: ReturnType<typeof maxSizeClient>): Promise<MaxSizeFigures> {
  const big = Object.fromEntries(MAX_SIZE_SHAPES.map((k) => [k, { sent: 0, unexpected: 0 }])) as MaxSizeFigures['big'];
  const examples: string[] = [];
  const cpu = process.cpuUsage();
  const end = performance.now() + opts.durationMs;
  let n = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (performance.now() < end) {
        const shape = MAX_SIZE_SHAPES[n++ % MAX_SIZE_SHAPES.length]!;
        big[shape].sent++;
        const reply = await client.send(shape);
        if (reply.status !== MAX_SIZE_STATUS[shape] && big[shape].unexpected++ === 0)
          examples.push(`${shape}: ${reply.status} ${reply.body.slice(0, 200)}`);
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { big, examples, cpuMs: (used.user + used.system) / 1000 };
}

if (import.meta.main && process.send) {
  process.on('disconnect', () => process.exit(0));
  let client: ReturnType<typeof maxSizeClient> | undefined;
  let opts: MaxSizeOptions | undefined;
  process.on('message', (m: MaxSizeOptions | 'go') => {
    if (m !== 'go') {
      opts = m;
      client = maxSizeClient(m.port, m.ca, m.maxRequestBytes, m.concurrency);
      process.send!('ready');
      return;
    }
    void send(opts!, client!).then((figures) => {
      client!.destroy();
      process.send!(figures, () => process.exit(0));
    });
  });
}
