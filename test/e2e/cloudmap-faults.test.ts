// Cloud Map failing a share of the calls while 50 exported services change, then recovering: every cluster converges
// to exactly what is exported, nothing is lost or duplicated, no cluster writes another's instances, and a call that
// keeps failing shows on the export (M4, M6, E8, I3, X4). One representative configuration (30 %: 10 % 500/503, 10 %
// throttled, 10 % stalled 5 s); the whole matrix is `npm run chaos -- --cloudmap` (docs/reliability.md). With
// BENCH_RESULTS=bench/results its figures replace bench/results/faults-cloudmap-30-percent.json.
import { expect } from 'chai';
import { FaultWorkload } from '../support/fault-workload.ts';
import { faultFigures } from '../support/fault-figures.ts';
import { withE2E } from '../support/e2e-harness.ts';
import { resultOfThisRun, writeTestResult } from '../../hack/results/result-file.ts';

const NS = 'e2e-cloudmap-faults';

describe('e2e: Cloud Map failing 30 % of calls while 50 exported services change (M4, M6, E8, X4)', function () {
  this.timeout(900_000);
  const e2e = withE2E({ namespaces: [NS] });

  it('converges exactly once the faults stop, loses and duplicates nothing, writes only its own instances, names a failing call on the export', async () => {
    const { cs, clusters, cloudMap } = e2e();
    const run = new FaultWorkload(clusters, cs.cloudMapControl, cloudMap, {
      namespace: NS,
      services: 50,
      faultMs: 60_000,
      rounds: 3,
      convergeTimeoutMs: 300_000,
      log: (line) => console.log(`      ${line}`),
    });
    const setUpMs = await run.setUp();
    console.log(`      50 services exported and imported in ${(setUpMs / 1000).toFixed(1)} s`);
    const result = await run.run({ errorRate: 0.1, throttleRate: 0.1, timeoutRate: 0.1, timeoutMs: 5_000 });
    console.log(
      `      converged ${(result.convergedMs / 1000).toFixed(1)} s after the faults stopped (${(result.sinceFirstChangeMs / 1000).toFixed(1)} s after the first change)`,
    );
    console.log(`      Cloud Map requests: ${JSON.stringify(result.requests)}`);
    console.log(
      `      Ready other than Exported seen: ${result.notReady.length}${result.notReady.length ? `, e.g. ${result.notReady[0]}` : ''}`,
    );
    const faulted = Object.values(result.requests).reduce((n, outcomes) => n + (outcomes.fault ?? 0), 0);
    expect(faulted, 'requests the fault switch failed').to.be.greaterThan(0);
    expect(result.foreignWrites, "writes of another cluster's instances (M4)").to.deep.equal([]);
    expect(result.duplicates, 'instances listed twice or counts off').to.deep.equal([]);
    expect(result.importsReplaced, 'ServiceImports deleted during the faults').to.deep.equal([]);
    expect(result.notExportedAtEnd, 'exports not Ready=Exported at the end').to.deep.equal([]);

    // Every RegisterInstance failing for 40 s: the changed export says so, naming the call, until it recovers.
    const outage = await run.outage({ errorRate: 1, apis: ['RegisterInstance'] }, 40_000);
    console.log(
      `      outage: Ready seen ${JSON.stringify(outage.seen)}; Exported again ${(outage.exportedAgainMs / 1000).toFixed(1)} s after it ended`,
    );
    expect(
      outage.seen.some((s) =>
        /^Unknown\/Failed: Cloud Map keeps failing \(Cloud Map RegisterInstance failed for /.test(s),
      ),
      'Ready=Unknown/Failed naming RegisterInstance',
    ).to.equal(true);
    writeTestResult(
      resultOfThisRun({
        benchmark: 'faults',
        scenario: 'cloudmap-30-percent',
        size: '10 % throttled, 10 % 500/503, 10 % stalled 5 s, for 60 s; 50 services',
        command: 'BENCH_RESULTS=bench/results npx mocha --timeout 120000 test/e2e/cloudmap-faults.test.ts',
        figures: [
          ...faultFigures(result),
          {
            name: 'Exported again after a 40 s RegisterInstance outage',
            value: Math.round(outage.exportedAgainMs / 100) / 10,
            unit: 's',
          },
        ],
      }),
    );
  });
});
