import { expect } from 'chai';
import fc from 'fast-check';
import { CloudMapCaller, DEFAULT_BACKOFF } from '../../../src/cloudmap/call.ts';
import { CloudMapCallError, isTemporary, LeaseLostError } from '../../../src/cloudmap/errors.ts';
import { CallCounter, type CloudMapMetrics } from '../../../src/cloudmap/metrics.ts';
import { FakeClock } from './fake-clock.ts';

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
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 7 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), async (failures, r) => {
      const clock = new FakeClock();
      // Rate limits high enough that only backoff sleeps are recorded.
      const caller = new CloudMapCaller({ clock, random: () => r, rateLimits: { DiscoverInstances: 1e9 } });
      const f = failing(...Array.from({ length: failures }, throttle));
      expect(await caller.call('DiscoverInstances', {}, f.send)).to.equal('ok');
      expect(f.calls()).to.equal(failures + 1);
      const backoffs = clock.sleeps.filter((ms) => ms > 0);
      return backoffs.length <= failures && clock.sleeps.every((ms, n) => ms <= Math.min(DEFAULT_BACKOFF.maxMs, DEFAULT_BACKOFF.baseMs * 2 ** n));
    }));
  });

  it('sends nothing once the fence says the Lease may be lost, not even a retry already under way', async () => {
    let fenced: string | undefined;
    const clock = new FakeClock();
    const caller = new CloudMapCaller({ clock, random: () => 0, rateLimits: { RegisterInstance: 1e9 }, fence: () => fenced });
    let sent = 0;
    const send = async () => {
      sent++;
      fenced = 'the Lease was last renewed 12 s ago';
      throw throttle();
    };
    const err = await caller.call('RegisterInstance', { instanceId: 'i-1' }, send).then(() => undefined, (e: unknown) => e);
    expect(sent).to.equal(1);
    expect(err).to.be.instanceOf(LeaseLostError);
    expect((err as Error).message).to.equal('Cloud Map RegisterInstance not sent: the Lease was last renewed 12 s ago; this replica stops writing and a standby takes over');
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
    const metrics: CloudMapMetrics = { onCall: () => {}, onRateChange: (api, rate) => api === 'RegisterInstance' && rates.push(rate) };
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
    const caller = new CloudMapCaller({ clock: new FakeClock(), random: () => 0.5, metrics: counter, rateLimits: { ListInstances: 10 } });
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
    const err = await caller.call('RegisterInstance', { namespace: 'demo', service: 'web', instanceId: 'i-1' }, f.send).catch((e: unknown) => e);
    expect(f.calls()).to.equal(3);
    expect((err as CloudMapCallError).retryable).to.equal(true);
    expect((err as Error).message).to.match(/RegisterInstance failed for namespace "demo", service "web", instance "i-1".*will be retried/);
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
});
