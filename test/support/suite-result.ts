// The result file of a suite whose figures come from several tests: written once every test of the suite has passed
// (and only with BENCH_RESULTS set, writeTestResult), so a failed or partial run never replaces a row of the docs.
import { resultOfThisRun, writeTestResult, type BenchResult, type Figure } from '../../hack/results/result-file.ts';

type Described = Pick<BenchResult, 'benchmark' | 'scenario' | 'size' | 'command'>;

/** Call inside a `describe`: the figures its tests push are written by an `after` hook if every one of them passed. */
export function suiteResult(described: Described): Figure[] {
  const figures: Figure[] = [];
  after(function () {
    if (this.test?.parent?.tests.every((t) => t.state === 'passed'))
      writeTestResult(resultOfThisRun({ ...described, figures }));
  });
  return figures;
}
