// Every Cloud Map call has a deadline (M6), through the real AWS SDK and real sockets: a request accepted and never
// answered (a proxy in front of the emulator that holds it), or answered a byte at a time so its socket is never idle,
// ends at the call deadline, is retried on a new connection and counted as a timeout; an operation wait ends at its
// own deadline even while its poll is stuck; and stopping the adapter's owner cancels the calls in flight. The call
// deadlines are wall-clock (they bound real I/O); the backoffs between attempts run on a fake clock and are checked as
// waits, not timed. No test times a window: each checks which deadline ended the wait.
import { createServer, type Server, type Socket } from 'node:net';
import { expect } from 'chai';
import {
  CloudMapCallError,
  CallCancelledError,
  isTemporary,
  OperationsFailedError,
} from '../../../src/cloudmap/errors.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';
import { startCuttableProxy, type CuttableProxy } from '../../support/proxy.ts';
import { eventually } from '../../support/eventually.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import type { Reachability } from '../../../src/change-detection/marker-polling.ts';
import { watchCloudMap } from '../../../src/change-detection/cloudmap-watcher.ts';
import { adapterFor } from './fixtures.ts';

function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('resolved'),
    (e: unknown) => e,
  );
}

/** An HTTP server that answers every request 200 with a body of 1 MiB sent one byte every 50 ms. */
async function startDripServer(): Promise<{ url: string; server: Server; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('data', () => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: 1048576\r\n\r\n{');
      const drip = setInterval(() => socket.write(' '), 50);
      socket.on('close', () => {
        clearInterval(drip);
        sockets.delete(socket);
      });
    });
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}`, server, sockets };
}

describe('cloudmap call deadlines through real sockets (M6)', function () {
  this.timeout(60_000);
  let moto: StandaloneMoto;
  let proxy: CuttableProxy;

  before(async () => {
    moto = await startStandaloneMoto();
  });
  after(() => moto?.stop());
  beforeEach(async () => {
    proxy = await startCuttableProxy(moto.endpoint);
  });
  afterEach(() => proxy.close());

  it('a request accepted and never answered ends at the deadline, is retried on a new connection, counted as a timeout, and named when it gives up', async () => {
    // Backoffs without jitter, on a clock that only moves when slept on: every wait between attempts is recorded.
    const clock = new FakeClock();
    // A deadline long enough for a loaded machine to get each request to the proxy; the backoffs cost no time.
    const { adapter, calls } = adapterFor(proxy.url, 'cls1', {
      callTimeoutMs: 2_000,
      maxAttempts: 3,
      clock,
      random: () => 0,
    });
    try {
      proxy.hold(1);
      const err = await rejection(adapter.instances.discoverRevision('demo', 'web'));
      expect(err).to.be.instanceOf(CloudMapCallError);
      const failed = err as CloudMapCallError;
      expect(failed.code).to.equal('TimeoutError');
      expect(failed.retryable).to.equal(true);
      expect(failed.message).to.match(
        /^Cloud Map DiscoverInstancesRevision failed for namespace "demo", service "web": TimeoutError: no complete answer within 2000 ms.*\(gave up after 3 attempts \(timed out\); the change is kept and will be retried\)$/,
      );
      expect(calls.count('DiscoverInstancesRevision', 'timeout')).to.equal(3);
      expect(proxy.held, 'requests held: each attempt on a connection of its own').to.equal(3);
      // Three deadlines and, between them, the two backoffs of the policy (100 ms, then 200 ms): no other wait.
      expect(clock.sleeps, 'waits between the attempts').to.deep.equal([100, 200]);
      // Answered again (the namespace does not exist: nothing to read), on a new connection.
      proxy.up();
      expect(await adapter.instances.discoverRevision('demo', 'web')).to.equal(undefined);
      expect([
        calls.count('DiscoverInstancesRevision'),
        calls.count('DiscoverInstancesRevision', 'timeout'),
      ]).to.deep.equal([4, 3]);
    } finally {
      adapter.destroy();
    }
  });

  it('an answer that trickles in a byte at a time (its socket never idle) still ends at the deadline', async () => {
    const drip = await startDripServer();
    const { adapter, calls } = adapterFor(drip.url, 'cls1', { callTimeoutMs: 800, maxAttempts: 1 });
    try {
      // The whole answer would take 14 hours at its pace: ending at all is ending at the deadline, which names itself.
      const err = await rejection(adapter.listNamespaces());
      expect((err as CloudMapCallError).code).to.equal('TimeoutError');
      expect((err as Error).message).to.include('no complete answer within 800 ms');
      expect(calls.count('ListNamespaces', 'timeout')).to.equal(1);
      // The abandoned request's connection is closed, so nothing keeps dripping into the process.
      await eventually(
        'the dripping connection to be closed',
        () => drip.sockets.size === 0 || `${drip.sockets.size} open`,
        5_000,
      );
    } finally {
      adapter.destroy();
      for (const s of drip.sockets) s.destroy();
      await new Promise((resolve) => drip.server.close(resolve));
    }
  });

  it('an operation wait ends at its deadline although the poll asking for it is stuck', async () => {
    const { adapter } = adapterFor(proxy.url, 'cls1', { callTimeoutMs: 30_000, operationPolling: { timeoutMs: 1000 } });
    try {
      proxy.hold(1);
      const err = await rejection(adapter.waitForOperations(['op-held']));
      expect(err).to.be.instanceOf(OperationsFailedError);
      // The waiter's deadline ended it (its 1 s, named in the failure), not the stuck call's 30 s, which is still held.
      expect((err as OperationsFailedError).failures.map((f) => [f.operationId, f.pending, f.reason])).to.deep.equal([
        ['op-held', true, 'still pending after 1000 ms'],
      ]);
      expect(isTemporary(err), "retried without touching the export's conditions").to.equal(true);
      expect(proxy.held, 'the poll still held').to.equal(1);
    } finally {
      adapter.destroy();
    }
  });

  it('stopping the owner cancels a call in flight at once and sends nothing more', async () => {
    const stop = new AbortController();
    const { adapter, calls } = adapterFor(proxy.url, 'cls1', { callTimeoutMs: 30_000, signal: stop.signal });
    try {
      proxy.hold(1);
      let settled: unknown;
      const pending = rejection(adapter.listNamespaces()).then((err) => (settled = err));
      await eventually('the call to be held', () => proxy.held === 1);
      stop.abort();
      // At once: settled by the abort itself, before any timer or I/O could have run.
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled, 'settled by the abort').to.be.instanceOf(CallCancelledError);
      const err = await pending;
      expect((err as Error).message).to.equal(
        'Cloud Map ListNamespaces for no resource cancelled: the reconcilers are stopping',
      );
      expect(isTemporary(err)).to.equal(true);
      expect(proxy.held).to.equal(1);
      expect(calls.count()).to.equal(0);
    } finally {
      adapter.destroy();
    }
  });

  it('a watcher whose owner stops while its marker poll is in flight does not report Cloud Map unreachable', async () => {
    const stop = new AbortController();
    const { adapter } = adapterFor(proxy.url, 'cls1', { callTimeoutMs: 30_000, signal: stop.signal });
    const reports: Reachability[] = [];
    const watcher = watchCloudMap(adapter, {
      onChange: () => {},
      onReachability: (r) => reports.push(r),
      pollIntervalMs: 100,
      heartbeatIntervalMs: 0,
    });
    try {
      proxy.hold(1);
      void watcher.start();
      await eventually('the marker poll to be held', () => proxy.held > 0);
      // As a member stops: its adapter's signal first (the poll is cancelled), then the watcher.
      stop.abort();
      await watcher.stop();
      expect(reports, 'reachability reported by a stopping watcher').to.deep.equal([]);
      expect(watcher.reachability.reachable).to.equal(true);
    } finally {
      adapter.destroy();
    }
  });
});
