// A proxy in front of cls1's worker that accepts Cloud Map requests and never answers them (a hung NAT entry, a
// half-open TCP session): every call has a deadline, so while a share of requests is held cls1 keeps exporting and its
// watcher keeps importing what cls2 changes; when every request is held the changed export says so
// (Ready=Unknown/Failed naming the timed-out call), /healthz stays ok because the loops still make progress, SIGTERM
// stops the worker within the Deployment's grace period, and everything converges once the proxy answers again (M6).
// MCS_E2E_STALL_MS sets how long a share is held (default 75 s, several call deadlines; docs/reliability.md has a
// 5-minute run). With BENCH_RESULTS=bench/results the figures replace bench/results/cloudmap-stall-<N>s-held.json.
import { expect } from 'chai';
import { resultOfThisRun, writeTestResult } from '../../hack/results/result-file.ts';
import { sleep } from '../../src/runtime/backoff.ts';
import { startCuttableProxy, type CuttableProxy } from '../support/proxy.ts';
import { FaultWorkload, serviceName } from '../support/fault-workload.ts';
import { condition, withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';

const NS = 'e2e-cloudmap-stall';
const SERVICES = 10;
const STALL_MS = Number(process.env.MCS_E2E_STALL_MS ?? 75_000);
/** Share of cls1's requests held while the rounds of changes run. */
const HOLD_SHARE = 0.2;
/** Short deadlines, so that one stall outlasts many of them; 8 attempts of 3 s give up after 25-47 s. */
const WORKER_ENV = { MCS_CLOUDMAP_CALL_TIMEOUT: '3s', MCS_CLOUDMAP_CONNECT_TIMEOUT: '1s', MCS_PROGRESS_TIMEOUT: '60s' };
/** The worker Deployment's terminationGracePeriodSeconds (kustomize/base/worker.yaml). */
const GRACE_MS = 30_000;
/** How long a round of changes may take to reach every cluster while requests are held. */
const ROUND_TIMEOUT_MS = 90_000;

const seconds = (ms: number): string => (ms / 1000).toFixed(1);

describe('e2e: Cloud Map requests of one cluster accepted and never answered (M6)', function () {
  this.timeout(1_200_000);
  let proxy: CuttableProxy | undefined;
  // First of the suite's hooks, whatever happened: a listening proxy would keep mocha from exiting.
  after(() => proxy?.close());
  const e2e = withE2E({ namespaces: [NS] });

  it('keeps reconciling and detecting changes, reports a persistent stall on the export, stops within its grace period, converges once answered', async () => {
    const { cs, cls1, clusters, cloudMap, stopWorker, killWorker, startWorker } = e2e();
    const log = (line: string) => console.log(`      ${line}`);
    /** SIGTERM, and SIGKILL if the worker has not exited within the grace period (as the kubelet does): whether it had. */
    const stopWithinGrace = async (): Promise<boolean> => {
      const stopped = await Promise.race([stopWorker(cls1).then(() => true), sleep(GRACE_MS).then(() => false)]);
      if (!stopped) await killWorker(cls1);
      return stopped;
    };
    proxy = await startCuttableProxy(cs.cloudMapEndpoint);
    await stopWorker(cls1);
    await startWorker(cls1, WORKER_ENV, { endpoint: proxy.url });
    let sampling = true;
    try {
      const run = new FaultWorkload(clusters, cs.cloudMapControl, cloudMap, {
        namespace: NS,
        services: SERVICES,
        faultMs: STALL_MS,
        rounds: 0,
        convergeTimeoutMs: ROUND_TIMEOUT_MS,
      });
      log(`${SERVICES} services exported (half from each cluster) and imported in ${seconds(await run.setUp())} s`);

      // /healthz of cls1's worker, sampled every second: the loops keep making progress, so it must stay ok.
      const unhealthy: string[] = [];
      const sampler = (async () => {
        while (sampling) {
          const res = await fetch(`${cls1.worker.healthUrl}/healthz`).catch((err: unknown) => ({
            ok: false,
            status: 0,
            text: async () => String(err),
          }));
          if (!res.ok) unhealthy.push(`${res.status} ${(await res.text()).trim()}`);
          await sleep(1000);
        }
      })();

      // A share of requests held: every round of changes, made in both clusters, reaches every cluster meanwhile.
      proxy.hold(HOLD_SHARE);
      const stallStart = Date.now();
      let heldFor = 0;
      const rounds: string[] = [];
      while (Date.now() - stallStart < STALL_MS) {
        const changed = Date.now();
        run.change();
        await run.converged(`round ${rounds.length + 1} with ${HOLD_SHARE * 100} % of cls1's requests held`);
        rounds.push(seconds(Date.now() - changed));
      }
      proxy.up();
      heldFor = Date.now() - stallStart;
      const timeouts = await cls1.metric('mcs_cloudmap_cloudmap_calls_total', 'outcome="timeout"');
      log(
        `${HOLD_SHARE * 100} % held for ${seconds(heldFor)} s: ${proxy.held} requests held, ${timeouts} calls counted timeout; ${rounds.length} rounds of changes, each imported everywhere in ${rounds.join(', ')} s`,
      );
      expect(rounds.length, 'rounds of changes during the stall').to.be.at.least(2);
      expect(proxy.held, 'requests the proxy held').to.be.greaterThan(0);
      expect(timeouts, 'calls ended by their deadline (outcome="timeout")').to.be.greaterThan(0);

      // Every request held: the changed export names the call that timed out, once it has used up its attempts.
      const heldAll = proxy.held;
      proxy.hold(1);
      const allStart = Date.now();
      run.change([0]);
      let failing: string | undefined;
      const exportOfCls1 = serviceName(0);
      while (failing === undefined && Date.now() - allStart < 120_000) {
        const ready = condition(await cls1.serviceExport(NS, exportOfCls1), 'Ready');
        if (ready?.status === 'Unknown' && ready.reason === 'Failed') failing = ready.message;
        else await sleep(500);
      }
      const failingAfter = Date.now() - allStart;
      log(`every request held: ${exportOfCls1} Ready=Unknown/Failed after ${seconds(failingAfter)} s: ${failing}`);
      expect(failing, `${exportOfCls1}'s Ready=Unknown/Failed`).to.match(
        /^Cloud Map keeps failing \(Cloud Map \w+ failed for .*TimeoutError: no complete answer within 3000 ms.*\(gave up after 8 attempts \(timed out\)/,
      );

      // SIGTERM while calls hang: the worker leaves within the grace period Kubernetes gives it.
      await sleep(2000);
      sampling = false;
      await sampler;
      const stopping = Date.now();
      const stopped = await stopWithinGrace();
      const stopMs = Date.now() - stopping;
      log(
        `SIGTERM with ${proxy.held - heldAll} requests held: exited after ${stopMs} ms; /healthz not ok ${unhealthy.length} times${unhealthy.length ? `: ${unhealthy[0]}` : ''}`,
      );
      expect(stopped, `cls1's worker to exit within ${GRACE_MS / 1000} s of SIGTERM`).to.equal(true);
      expect(unhealthy, '/healthz answers while the loops make progress').to.deep.equal([]);

      // The proxy answers again: everything converges, the export is Exported again.
      proxy.up();
      const answered = Date.now();
      await startWorker(cls1, WORKER_ENV, { endpoint: proxy.url });
      await run.converged('after the proxy answers again');
      const converged = seconds(Date.now() - answered);
      // The imports see the registration as soon as Cloud Map holds it; the export's status follows its operation's end.
      await eventually(
        `${exportOfCls1} Ready=True/Exported`,
        async () => condition(await cls1.serviceExport(NS, exportOfCls1), 'Ready')?.reason === 'Exported',
        30_000,
      );
      log(
        `proxy answering again: every cluster exact ${converged} s later (worker restart included); ${exportOfCls1} Ready=True/Exported ${seconds(Date.now() - answered)} s later`,
      );
      writeTestResult(
        resultOfThisRun({
          benchmark: 'cloudmap-stall',
          scenario: `${STALL_MS / 1000}s-held`,
          size: `${HOLD_SHARE * 100} % of cls1's Cloud Map requests held for ${STALL_MS / 1000} s, ${SERVICES} services`,
          command: `BENCH_RESULTS=bench/results${STALL_MS === 75_000 ? '' : ` MCS_E2E_STALL_MS=${STALL_MS}`} npx mocha --timeout 120000 test/e2e/cloudmap-stall.test.ts`,
          note: `worker with ${Object.entries(WORKER_ENV)
            .map(([k, v]) => `${k}=${v}`)
            .join(' ')}`,
          figures: [
            {
              name: 'rounds of changes imported exactly while requests were held',
              value: rounds.length,
              unit: '',
              detail: `held for ${seconds(heldFor)} s; each round ${rounds.join(', ')} s`,
            },
            { name: 'all requests held: Ready=Unknown/Failed after', value: Number(seconds(failingAfter)), unit: 's' },
            { name: 'SIGTERM to exit', value: stopMs / 1000, unit: 's', atMost: GRACE_MS / 1000 },
            { name: '/healthz failures', value: unhealthy.length, unit: '', atMost: 0 },
            {
              name: 'exact after the proxy answers',
              value: Number(converged),
              unit: 's',
              detail: "the worker's restart included",
            },
          ],
        }),
      );
    } finally {
      sampling = false;
      // The proxy runs in this process, which the suite's clean-up blocks in synchronous kubectl calls while the
      // workers withdraw: cls1's worker goes back to the emulator itself first. (The test's own synchronous kubectl
      // applies pause the proxy briefly too, every request alike: the deadlines make that harmless.)
      proxy.up();
      await stopWithinGrace();
      await startWorker(cls1);
    }
  });
});
