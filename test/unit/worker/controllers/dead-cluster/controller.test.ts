import { expect } from 'chai';
import { pino } from 'pino';
import { Channel } from '../../../../../src/runtime/event-sources.ts';
import { deadClusterController } from '../../../../../src/worker/controllers/dead-cluster/controller.ts';

const silent = pino({ level: 'silent' });
/**
 * Lets pending microtasks and I/O callbacks run: the queue hands work out asynchronously, and after 20 ms of work in
 * one turn of the event loop it waits for the next (so a loaded machine needs a few turns).
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

describe('worker/controllers/dead-cluster/controller', () => {
  it('reaps the clusters handed over one at a time, counts what went, and leaves a failed reap to the next hand-over', async () => {
    const due = new Channel<readonly string[]>();
    const started: string[] = [];
    const finish = new Map<string, { resolve: (n: number) => void; reject: (err: Error) => void }>();
    const reaped: number[] = [];
    const controller = deadClusterController({
      settings: { logger: silent, backoff: { baseMs: 1, maxMs: 1, jitter: 0 } },
      due,
      log: silent,
      reap: (clusterId) =>
        new Promise<number>((resolve, reject) => {
          started.push(clusterId);
          finish.set(clusterId, { resolve, reject });
        }),
      onReaped: (n) => reaped.push(n),
    });
    controller.watch();
    controller.start();
    due.emit(['cls2', 'cls3']);
    await settle();
    expect(started).to.deep.equal(['cls2']);
    finish.get('cls2')!.reject(new Error('Cloud Map does not answer'));
    await settle();
    expect(started).to.deep.equal(['cls2', 'cls3']);
    finish.get('cls3')!.resolve(4);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(started).to.deep.equal(['cls2', 'cls3']);
    expect(reaped).to.deep.equal([4]);
    await controller.stop();
  });
});
