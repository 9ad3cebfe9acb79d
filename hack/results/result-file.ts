// The machine-readable result of one benchmark scenario: its figures with their goals, and what a reader needs to judge
// and repeat it (machine, load, date, commit, Node.js, the command). One file per scenario in bench/results, named
// `<benchmark>-<scenario>.json`; a new run replaces its file, so git holds the history. docs/benchmarks.md and
// docs/reliability.md render their tables from these files (hack/results/tables.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringOption } from '../../src/config/options.ts';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** Where the current results live, relative to the repository. */
export const RESULTS_DIR = 'bench/results';

/** The benchmarks' `--results` flag: an A/B run or a trial passes `--results=` (nothing written) or another directory. */
export const resultsOption = stringOption(
  'results',
  'BENCH_RESULTS',
  RESULTS_DIR,
  'Directory (relative to the repository) where the run writes its result file, replacing the one of the same benchmark and scenario; empty: write none (for an A/B run or a trial, which must not replace the current figures).',
);

export interface Figure {
  /** What was measured, in words: `export→import latency p99`. */
  name: string;
  value: number;
  /** Written after the value: `ms`, `s`, `MiB`, `×`, `calls/min`; empty for a count. */
  unit: string;
  /** The goal, when there is one: the value must be at most this. */
  atMost?: number;
  /** What else the run said about this figure, e.g. the samples' median or each cluster's value. */
  detail?: string;
}

export interface Machine {
  cpu?: string;
  cores?: number;
  memoryGiB?: number;
}

export interface BenchResult {
  /** The benchmark or test that measured it, e.g. `sync`, `chaos-cloudmap`; the file's first name part. */
  benchmark: string;
  /** Size and variant as a name part, e.g. `10000-services`; the file's second part. */
  scenario: string;
  /** Size and variant in words, for the table: `10,000 services, 3 clusters`. */
  size: string;
  figures: Figure[];
  /** ISO 8601 date, or date and time, of the run. */
  date: string;
  /** The commit measured (`-dirty` when the tree had changes); absent when not recorded. */
  commit?: string;
  machine: Machine;
  /** Load average as recorded: `0.5 at start, 1.5–17.0 during the sync, 1.9 at the end`. */
  load?: string;
  node?: string;
  /** The command that reproduces the run. */
  command: string;
  /** Anything a reader needs to read the figures right (a setting of this run, where a seeded figure came from). */
  note?: string;
}

export function resultFileName(benchmark: string, scenario: string): string {
  return `${benchmark}-${scenario}.json`;
}

/** This machine, as the tables show it. */
export function thisMachine(): Machine {
  return { cpu: cpus()[0]?.model.trim(), cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30) };
}

/** The 1, 5 and 15 minute load averages now. */
export function loadNow(): string {
  return loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
}

/** The checked-out commit, `-dirty` when the tree differs from it; undefined outside a git checkout. */
export function currentCommit(cwd: string = REPO): string | undefined {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = git('status', '--porcelain', '--untracked-files=no', '--', ':!bench/results') !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? '-dirty' : ''}`;
  } catch {
    return undefined;
  }
}

/** An argument as a POSIX shell reads it back. */
function shellWord(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** The command line that ran this process again: `npm run <script> -- <args>` under npm, else `node <script> <args>`. */
export function commandLine(
  args: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
  script: string = process.argv[1] ?? '',
): string {
  const rest = args.map(shellWord).join(' ');
  if (env.npm_lifecycle_event) return `npm run ${env.npm_lifecycle_event}${rest === '' ? '' : ` -- ${rest}`}`;
  return `node ${shellWord(script)}${rest === '' ? '' : ` ${rest}`}`;
}

/** A result of a run that ends now on this machine, with its commit, Node.js and load average. */
export function resultOfThisRun(
  r: Pick<BenchResult, 'benchmark' | 'scenario' | 'size' | 'figures'> &
    Partial<Pick<BenchResult, 'command' | 'load' | 'note'>>,
): BenchResult {
  return {
    ...r,
    date: new Date().toISOString().slice(0, 16) + 'Z',
    commit: currentCommit(),
    machine: thisMachine(),
    load: r.load ?? `${loadNow()} at the end`,
    node: process.version,
    command: r.command ?? commandLine(),
  };
}

/** Writes (or replaces) the scenario's file in `dir` (relative to the repository) and returns its path; an empty `dir` writes nothing. */
export function writeResult(result: BenchResult, dir: string = RESULTS_DIR): string | undefined {
  if (dir === '') return undefined;
  const path = join(resolve(REPO, dir), resultFileName(result.benchmark, result.scenario));
  mkdirSync(resolve(REPO, dir), { recursive: true });
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return path;
}

/** A test's result: written only when BENCH_RESULTS names a directory, so `npm test` leaves the tree as it was. */
export function writeTestResult(result: BenchResult, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return writeResult(result, env.BENCH_RESULTS ?? '');
}

const NAME_PART = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** A result file's content, checked: the fields the tables need, and a name that matches benchmark and scenario. */
export function parseResult(file: string, text: string): BenchResult {
  const r = JSON.parse(text) as BenchResult;
  const problems = [
    ...(['benchmark', 'scenario', 'size', 'date', 'command'] as const)
      .filter((k) => typeof r[k] !== 'string' || r[k] === '')
      .map((k) => `no ${k}`),
    ...(!Array.isArray(r.figures) || r.figures.length === 0 ? ['no figures'] : []),
    ...(r.figures ?? [])
      .filter((f) => typeof f.name !== 'string' || typeof f.value !== 'number' || typeof f.unit !== 'string')
      .map((f) => `figure ${JSON.stringify(f.name)} lacks a name, a numeric value or a unit`),
    ...(typeof r.machine !== 'object' || r.machine === null ? ['no machine'] : []),
    ...(typeof r.benchmark === 'string' && !NAME_PART.test(r.benchmark)
      ? [`benchmark "${r.benchmark}" is not lower-case words joined by -`]
      : []),
    ...(typeof r.scenario === 'string' && !NAME_PART.test(r.scenario)
      ? [`scenario "${r.scenario}" is not lower-case words joined by -`]
      : []),
  ];
  if (problems.length === 0 && file !== resultFileName(r.benchmark, r.scenario))
    problems.push(`should be named ${resultFileName(r.benchmark, r.scenario)}`);
  if (problems.length > 0) throw new Error(`${file}: ${problems.join('; ')}`);
  return r;
}

/** Every result file of `dir`, checked, in file-name order. */
export function readResults(dir: string = RESULTS_DIR): BenchResult[] {
  const at = resolve(REPO, dir);
  return readdirSync(at)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => parseResult(f, readFileSync(join(at, f), 'utf8')));
}
