// M6: a Cloud Map that throttles a third of all requests (the emulator's fault switch answering with
// ThrottlingException, on top of its request quotas) slows the adapter down, and every write still lands.
import { expect } from 'chai';
import { CloudMapCallError, OperationsFailedError } from '../../../src/cloudmap/errors.ts';
import type { CloudMapMetrics } from '../../../src/cloudmap/metrics.ts';
import { CallCounter } from '../../../src/cloudmap/metrics.ts';
import { CLOUD_MAP_QUOTAS, DEFAULT_CONTROLLERS_SHARE } from '../../../src/cloudmap/quotas.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';
import { adapterFor, instanceOf } from './fixtures.ts';

/** Like the worker: a write that failed with a retryable error is tried again later, never dropped. */
async function untilLanded<T>(attempt: () => Promise<T>, failures: Error[]): Promise<T> {
  for (;;) {
    try {
      return await attempt();
    } catch (err) {
      const retryable = (err instanceof CloudMapCallError && err.retryable) || err instanceof OperationsFailedError;
      if (!retryable) throw err;
      failures.push(err);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

describe('cloudmap adapter under throttling (M6)', function () {
  this.timeout(120_000);
  let moto: StandaloneMoto;

  before(async () => {
    moto = await startStandaloneMoto();
    await moto.control.setFaults({ throttleRate: 1 / 3 });
  });
  after(() => moto?.stop());

  it('slows the throttled APIs down, retries with backoff and lands every write', async () => {
    const counter = new CallCounter();
    const registerRates: number[] = [];
    const metrics: CloudMapMetrics = {
      onCall: (api, outcome) => counter.onCall(api, outcome),
      onRateChange: (api, rate) => api === 'RegisterInstance' && registerRates.push(rate),
    };
    // Few attempts per call, so some calls do give up and the caller's retry (the worker's requeue) is exercised too.
    const { adapter } = adapterFor(moto.endpoint, 'cls1', {
      metrics,
      maxAttempts: 3,
      backoff: { baseMs: 20, maxMs: 500, jitter: 1 },
    });
    const failures: Error[] = [];
    const ns = await untilLanded(() => adapter.ensureNamespace('throttled'), failures);
    const svc = await untilLanded(() => adapter.ensureService(ns, 'web'), failures);

    const wanted = Array.from({ length: 80 }, (_, n) =>
      instanceOf('cls1', `i-${n}`, { AWS_INSTANCE_IPV4: `10.9.0.${n}` }),
    );
    await Promise.all(
      wanted.map((instance) =>
        untilLanded(async () => {
          await adapter.waitForOperations([await adapter.registerInstance(svc, instance)]);
        }, failures),
      ),
    );

    const landed = await untilLanded(() => adapter.listInstances(svc), failures);
    expect(landed.map((i) => i.id).sort()).to.deep.equal(wanted.map((i) => i.id).sort());
    expect(counter.count('RegisterInstance', 'throttled')).to.be.greaterThan(0);
    const wire = await moto.control.calls();
    const throttledAtWire = Object.values(wire.byApi).reduce(
      (sum, outcomes) => sum + (outcomes.fault ?? 0) + (outcomes.throttled ?? 0),
      0,
    );
    expect(counter.count(undefined, 'throttled')).to.equal(throttledAtWire);
    const share = CLOUD_MAP_QUOTAS.RegisterInstance!.rate * DEFAULT_CONTROLLERS_SHARE; // one cluster's
    expect(Math.max(...registerRates)).to.be.at.most(share);
    expect(Math.min(...registerRates)).to.be.below(share); // slowed down by the throttles
    console.log(
      `      at the emulator: ${JSON.stringify(wire.byApi)}; calls: ${JSON.stringify(counter.byApi())}; handed back to the caller: ${failures.length}`,
    );
    for (const err of failures) expect(err.message).to.match(/will retry|will be retried/);
  });
});
