// `npm run chaos -- --cloudmap`: the Cloud Map fault matrix on a 2-cluster testbed ClusterSet with mcs-cloudmap
// deployed as in the end-to-end tests. 50 services (by default) are exported, half from each cluster; then for each
// kind of fault (throttling, 500/503, a 5 s stall) and each share of calls (10 %, 30 %, 50 %) the emulator's fault
// switch is on for --cloudmap-fault-duration while every service changes its ports, endpoints and readiness
// --cloudmap-rounds times, and the run measures how long after the faults stop every cluster imports exactly what is
// exported (test/support/fault-workload.ts). Last, every RegisterInstance fails for 40 s and the export must say so.
// Prints Markdown, and writes bench/results/chaos-cloudmap-<kind>-<percent>-percent.json per cell and
// chaos-cloudmap-registerinstance-outage.json, the rows of docs/reliability.md; exits 1 when anything was lost,
// duplicated, written by the wrong cluster, or did not converge.
import { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { deployLocally } from '../hack/local/deploy.ts';
import type { CloudMapFaults } from '../hack/testbed/cloudmap-emulator.ts';
import { startClusterSet } from '../hack/testbed/index.ts';
import { FaultWorkload, type FaultRunResult } from '../test/support/fault-workload.ts';
import { faultCounts, faultFigures } from '../test/support/fault-figures.ts';
import { resultOfThisRun, writeResult } from '../hack/results/result-file.ts';
import { applyClusterProperties, E2ECluster } from '../test/support/e2e-harness.ts';
import { cloudMapClientConfig } from '../test/support/cloudmap.ts';
import { load } from '../test/support/chaos-runs.ts';

export const FAULT_KINDS = {
  throttle: (share: number): CloudMapFaults => ({ throttleRate: share }),
  error: (share: number): CloudMapFaults => ({ errorRate: share }),
  stall: (share: number): CloudMapFaults => ({ timeoutRate: share, timeoutMs: 5_000 }),
} as const;

export type FaultKind = keyof typeof FAULT_KINDS;

/** The kinds in words, for the result tables. */
const KIND_WORDS: Record<FaultKind, string> = {
  throttle: 'ThrottlingException',
  error: '500/503',
  stall: '5 s stall, then 504',
};

export interface MatrixOptions {
  services: number;
  faultMs: number;
  rounds: number;
  kinds: FaultKind[];
  percents: number[];
  /** Where the result files go (`--results`); empty: none. */
  results: string;
}

const seconds = (ms: number): string => (ms / 1000).toFixed(1);

function row(kind: string, percent: number, r: FaultRunResult, loadAfter: string): string {
  const c = faultCounts(r);
  return `| ${kind} | ${percent} % | ${seconds(r.faultMs)} s | **${seconds(r.convergedMs)} s** | ${seconds(r.sinceFirstChangeMs)} s | ${c.requests} / ${c.failedBySwitch} | ${c.instanceWrites} | ${c.unknownFailed} | ${c.problems.length === 0 ? 'nothing' : c.problems.length} | ${loadAfter} |`;
}

export async function cloudMapMatrix(opts: MatrixOptions): Promise<number> {
  const cs = await startClusterSet({});
  let failed = false;
  try {
    const deployment = await deployLocally(cs);
    const cloudMap = new ServiceDiscoveryClient(cloudMapClientConfig(cs));
    try {
      const clusters = cs.clusters.map((c, i) => new E2ECluster(c, deployment.installs[i]!));
      for (const c of clusters) applyClusterProperties(c, cs.clustersetId);
      const run = new FaultWorkload(clusters, cs.cloudMapControl, cloudMap, {
        namespace: 'chaos-cloudmap',
        services: opts.services,
        faultMs: opts.faultMs,
        rounds: opts.rounds,
        convergeTimeoutMs: 600_000,
        log: (line) => console.error(`[chaos] ${line}`),
      });
      console.log(
        `## Cloud Map faults: ${opts.services} services, ${opts.rounds} rounds of changes while the faults last (load ${load()})\n`,
      );
      console.log(
        `${opts.services} services exported (half from each cluster) and imported everywhere in ${seconds(await run.setUp())} s.\n`,
      );
      console.log(
        '| fault | share of calls | faults on | converged after they stop | after the first change | Cloud Map requests / failed by the switch | instance writes | Ready=Unknown/Failed seen (distinct messages) | lost, duplicated, foreign | load after |',
      );
      console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
      for (const kind of opts.kinds) {
        for (const percent of opts.percents) {
          const result = await run.run(FAULT_KINDS[kind](percent / 100));
          const loadAfter = load();
          console.log(row(kind, percent, result, loadAfter));
          writeResult(
            resultOfThisRun({
              benchmark: 'chaos-cloudmap',
              scenario: `${kind}-${percent}-percent`,
              size: `${KIND_WORDS[kind]} on ${percent} % of calls, ${opts.services} services, 2 clusters`,
              figures: faultFigures(result),
              load: `${loadAfter} after`,
            }),
            opts.results,
          );
          for (const p of faultCounts(result).problems) {
            failed = true;
            console.log(`PROBLEM (${kind} ${percent} %): ${p}`);
          }
        }
      }
      const outage = await run.outage({ errorRate: 1, apis: ['RegisterInstance'] }, 40_000);
      console.log(
        `\nEvery RegisterInstance failing for 40 s while one export changes: its Ready showed ${outage.seen.map((s) => `\`${s}\``).join(', ')}; Exported again ${seconds(outage.exportedAgainMs)} s after the outage ended (load ${load()}).`,
      );
      writeResult(
        resultOfThisRun({
          benchmark: 'chaos-cloudmap',
          scenario: 'registerinstance-outage',
          size: 'every RegisterInstance failing for 40 s while an export changes',
          figures: [
            {
              name: 'Exported again after the outage ends',
              value: Number(seconds(outage.exportedAgainMs)),
              unit: 's',
              detail: `Ready seen: ${outage.seen.map((s) => s.split(':')[0]).join(', ')}`,
            },
          ],
        }),
        opts.results,
      );
      if (!outage.seen.some((s) => s.startsWith('Unknown/Failed'))) {
        failed = true;
        console.log('PROBLEM: the export never showed Ready=Unknown/Failed during the outage');
      }
    } finally {
      cloudMap.destroy();
      await deployment.stop();
    }
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await cs.stop({ keepLogs: failed });
  }
  return failed ? 1 : 0;
}
