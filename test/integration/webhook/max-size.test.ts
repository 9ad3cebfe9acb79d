// Maximum-size bodies against the shipped limits (W6): the webhook server runs in its own process with the Node.js
// flags of kustomize/base's Deployment and its --max-request-bytes. Mixed reviews go at 100/s from one client for 15 s
// alone, then 15 s more while 4 (then 16) clients of another process send bodies of exactly that size back to back
// (the shapes that cost the most heap to parse). The server's peak RSS must stay under the Deployment's memory limit
// and every review must be answered; latency and the server's event-loop delay are printed, not asserted (the machine
// is shared). Recorded figures: docs/reliability.md; with BENCH_RESULTS=bench/results a run replaces
// bench/results/max-size-<n>-clients.json.

import { expect } from 'chai';
import { maxSizeRun } from '../../support/chaos-runs.ts';
import { fmt, mib, startServerProcess, type ServerProcess } from '../../support/webhook-client.ts';
import { configMapEnv, deploymentNodeFlags, kustomizeBase, type Manifest } from '../../../hack/local/manifests.ts';
import { webhookOptionSpecs } from '../../../src/webhook/options.ts';
import { resultOfThisRun, writeTestResult } from '../../../hack/results/result-file.ts';

const DEPLOYMENT = 'mcs-cloudmap-webhook';
const UNITS: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30 };

/** The memory limit of the Deployment's container, in bytes (binary suffixes only, as the manifests use). */
function memoryLimit(base: Manifest[]): number {
  const d = base.find((m) => m.kind === 'Deployment' && m.metadata.name === DEPLOYMENT) as unknown as {
    spec: { template: { spec: { containers: { resources: { limits: { memory: string } } }[] } } };
  };
  const limit = d.spec.template.spec.containers[0]!.resources.limits.memory;
  const m = /^(\d+)(Ki|Mi|Gi)$/.exec(limit);
  if (!m) throw new Error(`${DEPLOYMENT}: memory limit "${limit}" is not <n>Ki|Mi|Gi`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

describe('W6: maximum-size bodies at once stay within the shipped memory limit', function () {
  this.timeout(300_000);
  const base = kustomizeBase();
  const limit = memoryLimit(base);
  const maxRequestBytes = Number(
    configMapEnv(base)[webhookOptionSpecs.maxRequestBytes.env] ?? webhookOptionSpecs.maxRequestBytes.default,
  );
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  for (const concurrency of [4, 16]) {
    it(`${concurrency} clients of ${mib(maxRequestBytes)} MiB bodies for 15 s: peak RSS under the limit, every review answered`, async () => {
      // A fresh process each time, so its peak RSS is this run's.
      server = await startServerProcess(maxRequestBytes, deploymentNodeFlags(base, DEPLOYMENT));
      const run = await maxSizeRun(server, { concurrency, rate: 100, durationMs: 15_000, maxRequestBytes });
      const latency = (r: typeof run.reviews) =>
        `${r.n} p50 ${fmt(r.p50)} ms p99 ${fmt(r.p99)} ms max ${fmt(r.max)} ms`;
      console.log(
        `      load ${run.load}; bodies sent ${Object.entries(run.big)
          .map(([k, b]) => `${k} ${b.sent}`)
          .join(', ')}; ` +
          `reviews alone ${latency(run.baseline)}, with the bodies ${latency(run.reviews)}; ` +
          `server event-loop delay p99 / max alone ${fmt(run.loopAlone.p99)} / ${fmt(run.loopAlone.max)} ms, meanwhile ${fmt(run.loopMeanwhile.p99)} / ${fmt(run.loopMeanwhile.max)} ms (the timing client's own meanwhile ${fmt(run.clientLoop.p99)} / ${fmt(run.clientLoop.max)} ms); ` +
          `the sender's CPU ${(run.senderCpuMs / 1000).toFixed(1)} s; ` +
          `server RSS ${mib(run.rssBefore)} → peak ${mib(run.peakRss)} → ${mib(run.rssAfter)} MiB (limit ${mib(limit)} MiB)`,
      );
      expect(run.examples, 'max-size bodies with an unexpected answer').to.deep.equal([]);
      expect([...run.baseline.errors, ...run.reviews.errors], 'reviews that failed').to.deep.equal([]);
      expect(run.big.admitted.sent, 'admitted bodies actually parsed').to.be.greaterThan(0);
      expect(run.peakRss, 'peak RSS').to.be.lessThan(limit);
      expect(server.alive()).to.equal(true);
      writeTestResult(
        resultOfThisRun({
          benchmark: 'max-size',
          scenario: `${concurrency}-clients`,
          size: `${concurrency} clients sending ${Number(mib(maxRequestBytes))} MiB bodies back to back, reviews at 100/s`,
          command: 'BENCH_RESULTS=bench/results npx mocha --timeout 300000 test/integration/webhook/max-size.test.ts',
          load: run.load,
          figures: [
            { name: 'review p99 while the bodies arrive', value: Number(fmt(run.reviews.p99)), unit: 'ms', atMost: 5 },
            { name: 'review p99 alone', value: Number(fmt(run.baseline.p99)), unit: 'ms' },
            {
              name: 'reviews failed',
              value: run.baseline.errors.length + run.reviews.errors.length,
              unit: '',
              atMost: 0,
            },
            { name: 'server peak RSS', value: Number(mib(run.peakRss)), unit: 'MiB', atMost: Number(mib(limit)) },
          ],
        }),
      );
    });
  }
});
