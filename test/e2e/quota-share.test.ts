// --cloudmap-quota-share reaches the rate limits (M6): test/unit/cloudmap/quotas.test.ts covers the sizing, this the
// path from the option through the worker's member and Cloud Map adapter to the limiter, as the Deployment sets it.
// cls1's worker restarted with MCS_CLOUDMAP_QUOTA_SHARE=100 must allow itself 100/80 of the rate cls2's worker (the
// default 80 %) allows, both read from mcs_cloudmap_cloudmap_rate_limit.
import { expect } from 'chai';
import { restoreCls1WorkerAfterEach, withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';

/** Every worker calls it on each marker poll, and far below its share: the rate reported is the share itself. */
const API = 'DiscoverInstancesRevision';

function allowedRate(cluster: E2ECluster): Promise<number> {
  return cluster.metric('mcs_cloudmap_cloudmap_rate_limit', `api="${API}"`);
}

describe('e2e: the Cloud Map quota share reaches the rate limits', function () {
  this.timeout(180_000);
  const e2e = withE2E();
  const settingsChanged = restoreCls1WorkerAfterEach(e2e);

  it('M6: a worker given 100 % allows itself 1.25 times the rate of one on the default 80 %', async () => {
    const { cls1, cls2, stopWorker, startWorker } = e2e();
    await stopWorker(cls1);
    settingsChanged(true);
    await startWorker(cls1, { MCS_CLOUDMAP_QUOTA_SHARE: '100' });
    await eventually(
      `both workers report their ${API} rate`,
      async () => (await allowedRate(cls1)) > 0 && (await allowedRate(cls2)) > 0,
      60_000,
    );
    const [whole, share] = [await allowedRate(cls1), await allowedRate(cls2)];
    console.log(`      ${API}: cls1 (100 %) ${whole}/s, cls2 (80 %) ${share}/s`);
    expect(whole).to.be.closeTo(share * 1.25, 0.2);
  });
});
