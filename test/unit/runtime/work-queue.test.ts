import { expect } from 'chai';
import fc from 'fast-check';
import { pino } from 'pino';
import {
  WorkQueue,
  type Scheduler,
  type WorkQueueMetrics,
  type WorkQueueOptions,
} from '../../../src/runtime/work-queue.ts';

const silent = pino({ level: 'silent' });

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every pending microtask and I/O callback run (the queue hands work out asynchronously). */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** A scheduler that records requested delays and fires only when the test says so. */
function manualScheduler() {
  const pending: { ms: number; fn: () => void; cancelled: boolean }[] = [];
  const scheduler: Scheduler = (fn, ms) => {
    const entry = { ms, fn, cancelled: false };
    pending.push(entry);
    return () => {
      entry.cancelled = true;
    };
  };
  const fireAll = () => {
    for (const e of pending.splice(0)) if (!e.cancelled) e.fn();
  };
  return { scheduler, pending, fireAll };
}

/** A queue whose handler blocks on a per-call deferred, recording calls and concurrency. */
function blockingQueue(concurrency: number, extra: Partial<WorkQueueOptions<string>> = {}) {
  const calls: string[] = [];
  const gates: Deferred[] = [];
  const running = new Set<string>();
  let maxParallel = 0;
  let overlaps = 0;
  const queue = new WorkQueue<string>({
    name: 'test',
    concurrency,
    logger: silent,
    handler: async (key) => {
      if (running.has(key)) overlaps++;
      running.add(key);
      maxParallel = Math.max(maxParallel, running.size);
      calls.push(key);
      const gate = deferred();
      gates.push(gate);
      try {
        await gate.promise;
      } finally {
        running.delete(key);
      }
    },
    ...extra,
  });
  return { queue, calls, gates, running, maxParallel: () => maxParallel, overlaps: () => overlaps };
}

describe('WorkQueue (keyed, serialised per service, parallel across services)', () => {
  it('dedupes a key added many times while it waits', async () => {
    const { queue, calls, gates } = blockingQueue(1);
    queue.add('a');
    for (let i = 0; i < 5; i++) queue.add('b');
    expect(queue.depth).to.equal(1);
    gates[0]!.resolve();
    await settle();
    gates[1]!.resolve();
    await settle();
    expect(calls).to.deep.equal(['a', 'b']);
  });

  it('never runs one key twice at once; a key re-added while running runs once more afterwards', async () => {
    const { queue, calls, gates, running } = blockingQueue(4);
    queue.add('a');
    await settle();
    queue.add('a');
    queue.add('a');
    await settle();
    expect(calls).to.deep.equal(['a']);
    expect(running.has('a')).to.equal(true);
    gates[0]!.resolve();
    await settle();
    expect(calls).to.deep.equal(['a', 'a']);
    gates[1]!.resolve();
    await settle();
    expect(calls).to.deep.equal(['a', 'a']);
    expect(queue.processing).to.equal(0);
  });

  it('handles up to `concurrency` different keys in parallel, in the order they were added', async () => {
    const { queue, calls, gates, maxParallel } = blockingQueue(3);
    for (const k of ['a', 'b', 'c', 'd', 'e']) queue.add(k);
    await settle();
    expect(calls).to.deep.equal(['a', 'b', 'c']);
    expect(queue.depth).to.equal(2);
    gates[1]!.resolve();
    await settle();
    expect(calls).to.deep.equal(['a', 'b', 'c', 'd']);
    for (const g of gates) g.resolve();
    await settle();
    gates.at(-1)!.resolve();
    await settle();
    expect(calls).to.deep.equal(['a', 'b', 'c', 'd', 'e']);
    expect(maxParallel()).to.equal(3);
  });

  // Each case runs with 'running' being handled by the only worker, then finishes one handler at a time.
  const laneCases: { title: string; steps: ['add' | 'addLow', string][]; calls: string[] }[] = [
    {
      title:
        'addLow: keys of a periodic pass wait behind every add(); add() moves one forward, addLow never moves one back',
      steps: [
        ['addLow', 'r1'],
        ['addLow', 'r2'],
        ['addLow', 'r3'],
        ['addLow', 'r4'],
        ['add', 'new'],
        ['add', 'r3'],
        ['addLow', 'new'],
      ],
      calls: ['running', 'new', 'r3', 'r1', 'r2', 'r4'],
    },
    {
      title: 'addLow of the key being handled runs it once more afterwards, in the low lane',
      steps: [
        ['addLow', 'x'],
        ['addLow', 'running'],
        ['add', 'b'],
      ],
      calls: ['running', 'b', 'x', 'running'],
    },
    {
      title: 'add() after addLow of the key being handled runs it once more afterwards, ahead of the low lane',
      steps: [
        ['addLow', 'x'],
        ['addLow', 'running'],
        ['add', 'running'],
      ],
      calls: ['running', 'running', 'x'],
    },
  ];
  for (const c of laneCases) {
    it(c.title, async () => {
      const { queue, calls, gates } = blockingQueue(1);
      queue.add('running');
      await settle();
      for (const [op, key] of c.steps) queue[op](key);
      for (let i = 0; i < c.calls.length; i++) {
        gates[i]!.resolve();
        await settle();
      }
      expect(calls).to.deep.equal(c.calls);
      expect(queue.progress.busy).to.equal(false);
    });
  }

  it('requeues a failing key with per-key exponential backoff and resets it after a success', async () => {
    const clock = manualScheduler();
    let failuresLeft = 3;
    const seen: string[] = [];
    const queue = new WorkQueue<string>({
      name: 'test',
      concurrency: 2,
      logger: silent,
      scheduler: clock.scheduler,
      backoff: { baseMs: 100, maxMs: 1000, jitter: 0 },
      handler: async (key) => {
        seen.push(key);
        if (key === 'bad' && failuresLeft-- > 0) throw new Error('Cloud Map throttled');
      },
    });
    queue.add('bad');
    queue.add('good');
    await settle();
    expect(seen).to.deep.equal(['bad', 'good']);
    expect(queue.numRequeues('bad')).to.equal(1);
    expect(queue.numRequeues('good')).to.equal(0);
    const delays: number[] = [];
    while (clock.pending.length > 0) {
      delays.push(...clock.pending.map((p) => p.ms));
      clock.fireAll();
      await settle();
    }
    expect(delays).to.deep.equal([100, 200, 400]);
    expect(seen.filter((k) => k === 'bad')).to.have.length(4);
    expect(queue.numRequeues('bad')).to.equal(0);
  });

  it('caps the backoff at maxMs', async () => {
    const clock = manualScheduler();
    const queue = new WorkQueue<string>({
      name: 'test',
      concurrency: 1,
      logger: silent,
      scheduler: clock.scheduler,
      backoff: { baseMs: 100, maxMs: 500, jitter: 0 },
      handler: async () => {
        throw new Error('always fails');
      },
    });
    queue.add('k');
    await settle();
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      delays.push(...clock.pending.map((p) => p.ms));
      clock.fireAll();
      await settle();
    }
    expect(delays).to.deep.equal([100, 200, 400, 500, 500]);
    expect(queue.numRequeues('k')).to.equal(6);
  });

  it('addAfter keeps the earliest schedule of a key', async () => {
    const clock = manualScheduler();
    const seen: string[] = [];
    const queue = new WorkQueue<string>({
      name: 'test',
      concurrency: 1,
      logger: silent,
      scheduler: clock.scheduler,
      handler: async (k) => {
        seen.push(k);
      },
    });
    queue.addAfter('k', 5000);
    queue.addAfter('k', 1000);
    queue.addAfter('k', 3000);
    const live = clock.pending.filter((p) => !p.cancelled).map((p) => p.ms);
    expect(live).to.deep.equal([1000]);
    expect(queue.scheduled).to.equal(1);
    clock.fireAll();
    await settle();
    expect(seen).to.deep.equal(['k']);
    expect(queue.scheduled).to.equal(0);
  });

  it('addAfter with a real timer adds the key once the delay has passed', async () => {
    const seen: string[] = [];
    const queue = new WorkQueue<string>({
      name: 'test',
      concurrency: 1,
      logger: silent,
      handler: async (k) => {
        seen.push(k);
      },
    });
    queue.addAfter('k', 20);
    await settle();
    expect(seen).to.deep.equal([]);
    await new Promise((r) => setTimeout(r, 40));
    await settle();
    expect(seen).to.deep.equal(['k']);
  });

  it('shutdown waits for running handlers, drops waiting and scheduled keys, and ignores later adds', async () => {
    const clock = manualScheduler();
    const { queue, calls, gates } = blockingQueue(1, { scheduler: clock.scheduler });
    queue.add('a');
    queue.add('b');
    queue.addAfter('c', 1000);
    await settle();
    let done = false;
    const stopping = queue.shutdown().then(() => {
      done = true;
    });
    await settle();
    expect(done).to.equal(false);
    expect(clock.pending.every((p) => p.cancelled)).to.equal(true);
    queue.add('d');
    gates[0]!.resolve();
    await stopping;
    expect(done).to.equal(true);
    expect(calls).to.deep.equal(['a']);
    expect(queue.depth).to.equal(0);
  });

  it('a failure during shutdown is not requeued', async () => {
    const clock = manualScheduler();
    const gate = deferred();
    const queue = new WorkQueue<string>({
      name: 'test',
      concurrency: 1,
      logger: silent,
      scheduler: clock.scheduler,
      handler: async () => {
        await gate.promise;
      },
    });
    queue.add('a');
    await settle();
    const stopping = queue.shutdown();
    gate.reject(new Error('interrupted'));
    await stopping;
    expect(clock.pending).to.have.length(0);
  });

  it('reports depth by lane, adds, retries, waits and processing results to the metrics hooks', async () => {
    const events: string[] = [];
    const metrics: WorkQueueMetrics = {
      depth: (q, lane, d) => events.push(`depth:${q}:${lane}:${d}`),
      added: (q) => events.push(`added:${q}`),
      retried: (q) => events.push(`retried:${q}`),
      waited: (q, s) => events.push(`waited:${q}:${s >= 0}`),
      processed: (q, s, r) => events.push(`processed:${q}:${s >= 0}:${r}`),
    };
    const clock = manualScheduler();
    const queue = new WorkQueue<string>({
      name: 'export',
      concurrency: 1,
      logger: silent,
      metrics,
      scheduler: clock.scheduler,
      handler: async (k) => {
        if (k === 'bad') throw new Error('boom');
      },
    });
    queue.add('ok');
    queue.add('bad');
    queue.addLow('resynced');
    expect(events.slice(-2)).to.deep.equal(['depth:export:normal:1', 'depth:export:low:1']);
    await settle();
    expect(events).to.include.members([
      'added:export',
      'waited:export:true',
      'processed:export:true:success',
      'processed:export:true:error',
      'retried:export',
    ]);
    expect(events.filter((e) => e.startsWith('depth:')).slice(-2)).to.deep.equal([
      'depth:export:normal:0',
      'depth:export:low:0',
    ]);
    expect(events.filter((e) => e === 'added:export')).to.have.length(3);
  });

  it('accepts structured keys through toKey', async () => {
    const seen: string[] = [];
    const gate = deferred();
    const queue = new WorkQueue<{ namespace: string; name: string }>({
      name: 'test',
      concurrency: 1,
      logger: silent,
      toKey: (k) => `${k.namespace}/${k.name}`,
      handler: async (k) => {
        seen.push(`${k.namespace}/${k.name}`);
        await gate.promise;
      },
    });
    queue.add({ namespace: 'demo', name: 'first' });
    queue.add({ namespace: 'demo', name: 'nginx' });
    queue.add({ namespace: 'demo', name: 'nginx' });
    expect(queue.depth).to.equal(1);
    gate.resolve();
    await settle();
    expect(seen).to.deep.equal(['demo/first', 'demo/nginx']);
  });

  it('lets timers and I/O in while handlers that need no I/O run back to back', async () => {
    // Each handler works ~0.1 ms and resolves at once: without a yield the whole queue drains in one turn of the event
    // loop (a first pass over 30,000 import keys held a worker's loop for seconds, and its Lease renewal with it).
    const spin = () => {
      const end = performance.now() + 0.1;
      while (performance.now() < end);
    };
    let handled = 0;
    const queue = new WorkQueue<string>({
      name: 'spin',
      concurrency: 4,
      logger: silent,
      handler: async () => {
        spin();
        handled++;
      },
    });
    let handledWhenTimerFired = -1;
    const timer = new Promise<void>((r) =>
      setTimeout(() => {
        handledWhenTimerFired = handled;
        r();
      }, 0),
    );
    for (let i = 0; i < 3000; i++) queue.add(`k${i}`);
    await timer;
    while (handled < 3000) await settle();
    expect(handledWhenTimerFired).to.be.greaterThan(0);
    expect(handledWhenTimerFired).to.be.lessThan(1000);
    await queue.shutdown();
  });

  it('rejects a concurrency below 1', () => {
    expect(() => new WorkQueue<string>({ name: 'q', concurrency: 0, handler: async () => {} })).to.throw(
      /concurrency must be at least 1/,
    );
  });

  it('property: under any interleaving of adds and completions, keys never overlap, the limit holds and the last add is served', async () => {
    const keys = ['a', 'b', 'c', 'd'];
    const step = fc.oneof(
      fc.record({ op: fc.constant('add' as const), key: fc.constantFrom(...keys) }),
      fc.record({ op: fc.constant('addLow' as const), key: fc.constantFrom(...keys) }),
      fc.record({ op: fc.constant('finish' as const), index: fc.nat(7) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(step, { maxLength: 40 }),
        async (concurrency, steps) => {
          const { queue, calls, gates, maxParallel, overlaps } = blockingQueue(concurrency);
          // For each key, whether an add happened after the start of its latest run.
          const pendingAfterLastRun = new Map<string, boolean>();
          let seenCalls = 0;
          const observe = () => {
            for (; seenCalls < calls.length; seenCalls++) pendingAfterLastRun.set(calls[seenCalls]!, false);
          };
          for (const s of steps) {
            if (s.op === 'add' || s.op === 'addLow') {
              if (s.op === 'add') queue.add(s.key);
              else queue.addLow(s.key);
              pendingAfterLastRun.set(s.key, true);
            } else {
              if (gates.length > 0) gates[s.index % gates.length]!.resolve();
            }
            await settle();
            observe();
          }
          // Drain: finish everything until the queue is idle.
          while (queue.processing > 0 || queue.depth > 0) {
            for (const g of gates) g.resolve();
            await settle();
            observe();
          }
          expect(maxParallel()).to.be.at.most(concurrency);
          expect(overlaps(), 'a key was handled twice at once').to.equal(0);
          for (const [key, pending] of pendingAfterLastRun)
            expect(pending, `key ${key} was added but never handled afterwards`).to.equal(false);
        },
      ),
      { numRuns: 60 },
    );
  });
});
