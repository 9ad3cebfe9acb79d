// What one run of the Cloud Map fault workload (fault-workload.ts) counts, as table cells and as the figures of its
// result file: shared by `npm run chaos -- --cloudmap` (the matrix) and test/e2e/cloudmap-faults.test.ts (one cell).
import type { Figure } from '../../hack/results/result-file.ts';
import type { FaultRunResult } from './fault-workload.ts';

export interface FaultCounts {
  /** Cloud Map requests from the first change to convergence, and those the fault switch failed. */
  requests: number;
  failedBySwitch: number;
  /** RegisterInstance and DeregisterInstance that succeeded. */
  instanceWrites: number;
  /** Distinct Ready=Unknown/Failed messages seen while the run lasted. */
  unknownFailed: number;
  /** Foreign writes, duplicates, imports replaced, exports not Exported at the end: must be none. */
  problems: string[];
}

export function faultCounts(r: FaultRunResult): FaultCounts {
  return {
    requests: Object.values(r.requests).reduce((n, o) => n + Object.values(o).reduce((a, b) => a + b, 0), 0),
    failedBySwitch: Object.values(r.requests).reduce((n, o) => n + (o.fault ?? 0), 0),
    instanceWrites: ['RegisterInstance', 'DeregisterInstance'].reduce((n, api) => n + (r.requests[api]?.ok ?? 0), 0),
    unknownFailed: r.notReady.filter((s) => /Unknown\/Failed/.test(s)).length,
    problems: [
      ...r.foreignWrites.map((w) => `foreign write: ${w}`),
      ...r.duplicates.map((d) => `duplicate: ${d}`),
      ...r.importsReplaced.map((i) => `import replaced: ${i}`),
      ...r.notExportedAtEnd.map((e) => `not Exported at the end: ${e}`),
    ],
  };
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** The figures of a fault run's result file (docs/reliability.md). */
export function faultFigures(r: FaultRunResult): Figure[] {
  const c = faultCounts(r);
  return [
    {
      name: 'every cluster exact after the faults stop',
      value: seconds(r.convergedMs),
      unit: 's',
      detail: `faults on ${seconds(r.faultMs)} s; ${seconds(r.sinceFirstChangeMs)} s after the first change`,
    },
    {
      name: 'lost, duplicated or foreign instances and replaced imports',
      value: c.problems.length,
      unit: '',
      atMost: 0,
    },
    {
      name: 'Cloud Map requests',
      value: c.requests,
      unit: '',
      detail: `${c.failedBySwitch.toLocaleString('en-US')} failed by the switch; ${c.instanceWrites.toLocaleString('en-US')} instance writes; ${c.unknownFailed} distinct Ready=Unknown/Failed messages seen`,
    },
  ];
}
