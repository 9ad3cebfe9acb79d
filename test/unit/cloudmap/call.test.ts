import { expect } from 'chai';
import fc from 'fast-check';
import { CloudMapCaller, DEFAULT_BACKOFF, longestCallMs } from '../../../src/cloudmap/call.ts';
import { CallCancelledError, CloudMapCallError, isTemporary, LeaseLostError } from '../../../src/cloudmap/errors.ts';
import { CallCounter, type CloudMapMetrics } from '../../../src/cloudmap/metrics.ts';
import { FakeClock } from '../../support/fake-clock.ts';

function throttle(): Error {
  return Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
}

/** A send() that fails with the given errors in order, then returns 'ok'. */
function failing(...errors: Error[]): { send: () => Promise<string>; calls: () => number } {
  let calls = 0;
  return {
    send: async () => {
      const err = errors[calls++];
      if (err) throw err;
      return 'ok';
    },
    calls: () => calls,
  };
}

describe('cloudmap caller: retries, backoff and throttling (M6)', () => {
  it('retries throttles with full-jitter delays inside [0, min(cap, base × 2^n)]', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 7 }),
        fc.double({ min: 0, max: 0.999999, noNaN: true }),
        async (failures, r) => {
          const clock = new FakeClock();
          // Rate limits high enough that only backoff sleeps are recorded.
          const caller = new CloudMapCaller({ clock, random: () => r, rateLimits: { DiscoverInstances: 1e9 } });
          const f = failing(...Array.from({ length: failures }, throttle));
          expect(await caller.call('DiscoverInstances', {}, f.send)).to.equal('ok');
          expect(f.calls()).to.equal(failures + 1);
          const backoffs = clock.sleeps.filter((ms) => ms > 0);
          return (
            backoffs.length <= failures &&
            clock.sleeps.every((ms, n) => ms <= Math.min(DEFAULT_BACKOFF.maxMs, DEFAULT_BACKOFF.baseMs * 2 ** n))
          );
        },
      ),
    );
  });

  it('sends no creation that became unnecessary during its rate-limit wait, counts no call and gives the token back', async () => {
    const clock = new FakeClock();
    const counter = new CallCounter();
    // A burst of 1 at 0.1/s: a second caller waits ten seconds for its token.
    const caller = new CloudMapCaller({ clock, metrics: counter, rateLimits: { CreateService: 0.1 } });
    let known = false;
    const f = failing();
    expect(await caller.callUnlessSettled('CreateService', {}, () => known, f.send)).to.equal('ok');
    const waiting = caller.callUnlessSettled('CreateService', {}, () => known, f.send);
    known = true; // learnt while the second call waits
    expect(await waiting).to.equal(undefined);
    expect(f.calls()).to.equal(1);
    expect(counter.byApi()).to.deep.equal({ CreateService: 1 });
    // The token the skipped call took is back: the next caller does not wait another ten seconds.
    const before = clock.now();
    known = false;
    expect(await caller.callUnlessSettled('CreateService', {}, () => known, f.send)).to.equal('ok');
    expect(clock.now() - before).to.equal(0);
  });

  it('sends nothing once the fence says the Lease may be lost, not even a retry already under way', async () => {
    let fenced: string | undefined;
    const clock = new FakeClock();
    const caller = new CloudMapCaller({
      clock,
      random: () => 0,
      rateLimits: { RegisterInstance: 1e9 },
      fence: () => fenced,
    });
    let sent = 0;
    const send = async () => {
      sent++;
      fenced = 'the Lease was last renewed 12 s ago';
      throw throttle();
    };
    const err = await caller.call('RegisterInstance', { instanceId: 'i-1' }, send).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(sent).to.equal(1);
    expect(err).to.be.instanceOf(LeaseLostError);
    expect((err as Error).message).to.equal(
      'Cloud Map RegisterInstance not sent: the Lease was last renewed 12 s ago; this replica stops writing and a standby takes over',
    );
    // Retried silently by the reconcilers (the new leader reports on the exports).
    expect(isTemporary(err)).to.equal(true);
  });

  it('uses the whole jitter range: from the ceiling down to nothing', async () => {
    const waits = async (r: number) => {
      const clock = new FakeClock();
      const caller = new CloudMapCaller({ clock, random: () => r, rateLimits: { X: 1e9 } });
      await caller.call('X', {}, failing(throttle(), throttle(), throttle()).send);
      // The token bucket's own waits at 1e9 requests/s round up to 1 ms; larger sleeps are backoff.
      return clock.sleeps.filter((ms) => ms > 1);
    };
    expect(await waits(0)).to.deep.equal([100, 200, 400]);
    expect(await waits(0.999999)).to.deep.equal([]);
  });

  it('cuts the API rate to 70 % on a throttle and reports it, and its recovery', async () => {
    const rates: number[] = [];
    const metrics: CloudMapMetrics = {
      onCall: () => {},
      onRateChange: (api, rate) => api === 'RegisterInstance' && rates.push(rate),
    };
    const clock = new FakeClock();
    const caller = new CloudMapCaller({ clock, random: () => 1, metrics, rateLimits: { RegisterInstance: 40 } });
    await caller.call('RegisterInstance', {}, failing().send);
    await caller.call('RegisterInstance', {}, failing(throttle()).send);
    expect(rates.slice(0, 2)).to.deep.equal([40, 28]); // then up by 0.1 as the wait for the next token passes
    clock.advance(20_000);
    await caller.call('RegisterInstance', {}, failing().send);
    expect(rates.at(-1)).to.equal(40);
  });

  it('retries transient failures without slowing the API down', async () => {
    const counter = new CallCounter();
    const caller = new CloudMapCaller({
      clock: new FakeClock(),
      random: () => 0.5,
      metrics: counter,
      rateLimits: { ListInstances: 10 },
    });
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    await caller.call('ListInstances', {}, failing(reset).send);
    expect(counter.count('ListInstances', 'transient')).to.equal(1);
    expect(counter.count('ListInstances', 'success')).to.equal(1);
    expect(caller.rate('ListInstances')).to.equal(10);
  });

  it('does not retry a final error and wraps it with the call context', async () => {
    const counter = new CallCounter();
    const caller = new CloudMapCaller({ clock: new FakeClock(), metrics: counter });
    const notFound = Object.assign(new Error('srv-9'), { name: 'ServiceNotFound', $metadata: { httpStatusCode: 400 } });
    const f = failing(notFound);
    const err = await caller.call('ListInstances', { serviceId: 'srv-9' }, f.send).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CloudMapCallError);
    expect((err as CloudMapCallError).code).to.equal('ServiceNotFound');
    expect((err as Error).message).to.include('service id srv-9');
    expect(f.calls()).to.equal(1);
    expect(counter.byApi()).to.deep.equal({ ListInstances: 1 });
  });

  it('hands a retryable error to the caller after maxAttempts, saying it will be retried', async () => {
    const caller = new CloudMapCaller({ clock: new FakeClock(), maxAttempts: 3 });
    const f = failing(throttle(), throttle(), throttle(), throttle());
    const err = await caller
      .call('RegisterInstance', { namespace: 'demo', service: 'web', instanceId: 'i-1' }, f.send)
      .catch((e: unknown) => e);
    expect(f.calls()).to.equal(3);
    expect((err as CloudMapCallError).retryable).to.equal(true);
    expect((err as Error).message).to.match(
      /RegisterInstance failed for namespace "demo", service "web", instance "i-1".*will be retried/,
    );
  });

  it('counts every attempt by API and outcome', async () => {
    const counter = new CallCounter();
    const caller = new CloudMapCaller({ clock: new FakeClock(), metrics: counter });
    await caller.call('DiscoverInstances', {}, failing(throttle(), throttle()).send);
    await caller.call('DiscoverInstancesRevision', {}, failing().send);
    expect(counter.count('DiscoverInstances', 'throttled')).to.equal(2);
    expect(counter.count('DiscoverInstances')).to.equal(3);
    expect(counter.count()).to.equal(4);
    expect(counter.byApi()).to.deep.equal({ DiscoverInstances: 3, DiscoverInstancesRevision: 1 });
  });

  it('abandons an attempt with no answer at the deadline, aborts its request, retries it and counts a timeout', async () => {
    const counter = new CallCounter();
    const caller = new CloudMapCaller({ clock: new FakeClock(), random: () => 0, metrics: counter, callTimeoutMs: 50 });
    const signals: AbortSignal[] = [];
    // The first request never settles, not even when aborted (an answer that trickles in forever).
    const send = (signal: AbortSignal) => {
      signals.push(signal);
      return signals.length === 1 ? new Promise<string>(() => {}) : Promise.resolve('ok');
    };
    expect(await caller.call('DiscoverInstances', {}, send)).to.equal('ok');
    expect(signals.map((s) => s.aborted)).to.deep.equal([true, false]);
    expect(counter.count('DiscoverInstances', 'timeout')).to.equal(1);
    expect(counter.count('DiscoverInstances', 'success')).to.equal(1);
  });

  it('cancels the attempt in flight when its owner stops, and sends nothing after', async () => {
    const stop = new AbortController();
    const counter = new CallCounter();
    const caller = new CloudMapCaller({
      clock: new FakeClock(),
      metrics: counter,
      signal: stop.signal,
      callTimeoutMs: 60_000,
    });
    let sent = 0;
    const send = (signal: AbortSignal) => {
      sent++;
      return new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
    };
    const pending = caller.call('ListServices', { namespace: 'demo' }, send).then(
      () => undefined,
      (e: unknown) => e,
    );
    while (sent === 0) await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    const err = await pending;
    expect(err).to.be.instanceOf(CallCancelledError);
    expect((err as Error).message).to.equal(
      'Cloud Map ListServices for namespace "demo" cancelled: the reconcilers are stopping',
    );
    expect(
      await caller.call('ListServices', {}, send).then(
        () => undefined,
        (e: unknown) => e,
      ),
    ).to.be.instanceOf(CallCancelledError);
    expect(sent).to.equal(1);
    expect(counter.count(), 'a cancelled attempt is no Cloud Map outcome').to.equal(0);
  });

  it('the longest call: every attempt to its deadline plus the longest backoffs', () => {
    expect(longestCallMs(15_000)).to.equal(8 * 15_000 + 200 + 400 + 800 + 1_600 + 3_200 + 6_400 + 10_000);
    expect(longestCallMs(1_000, 1)).to.equal(1_000);
  });
});
