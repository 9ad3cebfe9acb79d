// The machine-readable record of `npm run conformance` (conformance/summary.json): per run, every case's result with
// its group (Required / Optional), and what the runs ran on (machine, date, commit, Kubernetes and CoreDNS versions).
import type { IpFamilyFlagValue } from '../testbed/network.ts';
import { countCases, type ConformanceCase, type Counts, type Implementation, type SuiteReport } from './report.ts';

/** Where the suite's sources came from, as far as the checkout says. */
export interface SuiteSource {
  /** e.g. kubernetes-sigs/mcs-api ded161af... (conformance/v0.5.0 plus two commits). */
  description: string;
  /** The released suite version a SIG Multicluster report is filed under, e.g. v0.5.0; "unknown" when not found. */
  conformanceVersion: string;
  /** Hash of the sources and Go version the binary was built from (its cache key). */
  sourcesHash: string;
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string;
  /** 1-minute load average when the first run started: the machine is shared. */
  loadAverage: number;
}

export interface Versions {
  kubernetes: string;
  coredns: string;
  go: string;
  node: string;
}

export interface RunSummary {
  run: number;
  startedAt: string;
  durationSeconds: number;
  counts: Counts;
  suiteFailure?: string;
  cases: ConformanceCase[];
}

export interface ConformanceSummary {
  date: string;
  commit: string;
  implementation: Implementation;
  suite: SuiteSource;
  /** workerEnv: the workers' settings beyond kustomize/base's ConfigMap. */
  /** ipFamilies: the ClusterSet's IP families (`--ip-families`), absent for IPv4. */
  testbed: {
    clusters: string[];
    clusterSetPerRun: boolean;
    labelFilter?: string;
    workerEnv?: Record<string, string>;
    ipFamilies?: IpFamilyFlagValue;
  };
  versions: Versions;
  machine: Machine;
  runs: RunSummary[];
}

export function runSummary(run: number, startedAt: Date, durationSeconds: number, report: SuiteReport): RunSummary {
  return {
    run,
    startedAt: startedAt.toISOString(),
    durationSeconds,
    counts: countCases(report.cases),
    ...(report.suiteFailure ? { suiteFailure: report.suiteFailure } : {}),
    cases: report.cases,
  };
}

/** A run failed when a case did not pass (skips aside), or when the suite could not start at all. */
export function runFailed(run: RunSummary): boolean {
  return run.counts.failed > 0 || run.suiteFailure !== undefined || run.cases.length === 0;
}

/** The closing line, e.g. `conformance: 27 passed, 0 failed`; several runs are added up and counted. */
export function closingLine(runs: readonly RunSummary[]): string {
  const sum = (k: keyof Counts) => runs.reduce((n, r) => n + r.counts[k], 0);
  const skipped = sum('skipped') > 0 ? `, ${sum('skipped')} skipped` : '';
  const suiteFailures = runs.filter((r) => r.suiteFailure !== undefined).length;
  const notStarted = suiteFailures > 0 ? `, ${suiteFailures} run(s) could not start` : '';
  const prefix = runs.length > 1 ? `${runs.length} runs, ` : '';
  return `conformance: ${prefix}${sum('passed')} passed, ${sum('failed')} failed${skipped}${notStarted}`;
}

/** The suite's commit and tag from its README (the pinned copy says both), or "unknown". */
export function suiteSourceFromReadme(readme: string): { commit?: string; tag?: string } {
  const commit = /commit\s+`([0-9a-f]{40})`/.exec(readme)?.[1];
  const tag = /tag\s+`(conformance\/v[^`]+)`/.exec(readme)?.[1];
  return { ...(commit ? { commit } : {}), ...(tag ? { tag } : {}) };
}

/** v0.5.0 from conformance/v0.5.0 (or from a describe output such as conformance/v0.5.0-2-gded161a). */
export function conformanceVersionOf(tag: string | undefined): string {
  return /conformance\/(v\d+\.\d+\.\d+)/.exec(tag ?? '')?.[1] ?? 'unknown';
}
