// Runs the mocha suites in parallel lanes (hack/test.sh, the README's `npm test`): each lane is one mocha process with
// its own shared ClusterSet (test/support/clusterset.ts), so lanes never share a cluster, a Cloud Map emulator or a
// data-path slot. Files are dealt to lanes longest first by the durations of an earlier run (test/durations.json), so
// the lanes end close together; a file missing from it counts as DEFAULT_SECONDS. Files listed in test/durations.json
// under "alone" assert what a loaded machine can break (latency windows, rates): they run after the lanes, one
// process, nothing beside them.
//
// Each lane's output is streamed with its name in front, and kept whole in the run's log folder; at the end every
// lane's counts and the slowest files are printed, and one closing line `tests: N passed, N failed` (N skipped).
// A run writes each file's measured seconds to <log folder>/durations.json: copy it over test/durations.json after
// adding or moving tests (`npm test -- --write-durations` does it).
//
// Usage: node hack/test-lanes.ts [--lanes N] [--write-durations] [FILE ...]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const DURATIONS = join(REPO, 'test/durations.json');
const SUITES = ['test/unit', 'test/integration', 'test/e2e'];
const DEFAULT_SECONDS = 30;
const DEFAULT_LANES = 3;
/** Each lane's testbeds take their ports from a range of its own, below the kernel's ephemeral ports (hack/testbed/ports.ts). */
const LANE_PORTS = { first: 20_000, last: 32_767 };

interface Durations {
  /** Run after the lanes, with nothing beside them. */
  alone: string[];
  /** Seconds per spec file, from an earlier run. */
  seconds: Record<string, number>;
}

interface LaneResult {
  name: string;
  files: string[];
  exitCode: number;
  passed: number;
  failed: number;
  skipped: number;
  seconds: number;
  fileSeconds: Record<string, number>;
}

function specFiles(): string[] {
  return SUITES.flatMap((dir) =>
    readdirSync(join(REPO, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `${dir}/${f}`),
  ).sort();
}

function readDurations(): Durations {
  try {
    return JSON.parse(readFileSync(DURATIONS, 'utf8')) as Durations;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { alone: [], seconds: {} };
    throw new Error(
      `cannot read ${relative(REPO, DURATIONS)}: ${(err as Error).message} (delete it to deal files evenly)`,
      { cause: err },
    );
  }
}

/** Longest first, each to the lane that ends earliest so far. */
export function dealLanes(files: readonly string[], seconds: Record<string, number>, lanes: number): string[][] {
  const cost = (f: string) => seconds[f] ?? DEFAULT_SECONDS;
  const out = Array.from({ length: lanes }, () => ({ files: [] as string[], total: 0 }));
  for (const f of [...files].sort((a, b) => cost(b) - cost(a) || a.localeCompare(b))) {
    const lane = out.reduce((min, l) => (l.total < min.total ? l : min));
    lane.files.push(f);
    lane.total += cost(f);
  }
  // Within a lane, unit tests first (quick, no ClusterSet), then the suites in the order a serial run would take them.
  return out.map((l) => l.files.sort()).filter((l) => l.length > 0);
}

/** mocha's spec reporter closes with "N passing (…)", "N pending", "N failing". */
function counts(text: string): { passed: number; failed: number; skipped: number } {
  const n = (word: string) => Number(new RegExp(`^\\s*(\\d+) ${word}\\b`, 'm').exec(text)?.[1] ?? 0);
  return { passed: n('passing'), failed: n('failing'), skipped: n('pending') };
}

/** The `index`-th of `count` equal slices of LANE_PORTS, as MCS_TESTBED_PORTS gives it. */
export function lanePorts(index: number, count: number): string {
  const size = Math.floor((LANE_PORTS.last - LANE_PORTS.first + 1) / count);
  const first = LANE_PORTS.first + index * size;
  return `${first}-${first + size - 1}`;
}

function runLane(name: string, files: string[], ports: string, logDir: string): Promise<LaneResult> {
  const started = Date.now();
  const durationsFile = join(logDir, `${name}.durations.json`);
  const child = spawn('npx', ['mocha', '--timeout', '120000', ...files], {
    cwd: REPO,
    env: { ...process.env, MCS_TEST_LANE: name, MCS_TEST_DURATIONS_FILE: durationsFile, MCS_TESTBED_PORTS: ports },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const kept: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      kept.push(line);
      process.stdout.write(`[${name}] ${line}\n`);
    });
  }
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      const text = kept.join('\n');
      writeFileSync(join(logDir, `${name}.log`), `${text}\n`);
      let fileSeconds: Record<string, number> = {};
      try {
        fileSeconds = JSON.parse(readFileSync(durationsFile, 'utf8')) as Record<string, number>;
      } catch {
        // A lane that died before its root hooks ran has no durations; its exit code says what happened.
      }
      resolve({
        name,
        files,
        ...counts(text),
        fileSeconds,
        exitCode: code ?? (signal ? 128 : 1),
        seconds: (Date.now() - started) / 1000,
      });
    });
  });
}

function fmt(s: number): string {
  return s >= 60 ? `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s` : `${s.toFixed(0)}s`;
}

async function main(argv: string[]): Promise<number> {
  let lanes = Number(process.env.MCS_TEST_LANES ?? DEFAULT_LANES);
  let writeDurations = false;
  const only: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--lanes') lanes = Number(argv[++i]);
    else if (arg === '--write-durations') writeDurations = true;
    else if (arg.startsWith('-'))
      throw new Error(
        `unknown option ${arg}: usage: node hack/test-lanes.ts [--lanes N] [--write-durations] [FILE ...]`,
      );
    else only.push(relative(REPO, join(process.cwd(), arg)));
  }
  if (!Number.isInteger(lanes) || lanes < 1)
    throw new Error(`--lanes (or MCS_TEST_LANES) must be a whole number from 1 up, got ${lanes}`);

  const files = only.length > 0 ? only : specFiles();
  if (files.length === 0) throw new Error(`no *.test.ts files under ${SUITES.join(', ')}`);
  const durations = readDurations();
  const alone = files.filter((f) => durations.alone.includes(f));
  const dealt = dealLanes(
    files.filter((f) => !alone.includes(f)),
    durations.seconds,
    lanes,
  );
  const logDir = mkdtempSync(join(tmpdir(), 'mcs-cloudmap-test-'));
  mkdirSync(logDir, { recursive: true });

  console.log(
    `[test] ${files.length} files in ${dealt.length} lane(s)${alone.length ? ` then ${alone.length} alone` : ''}; logs in ${logDir}`,
  );
  dealt.forEach((l, i) =>
    console.log(
      `[test] lane${i + 1}: ~${fmt(l.reduce((s, f) => s + (durations.seconds[f] ?? DEFAULT_SECONDS), 0))}, ${l.length} files`,
    ),
  );
  const started = Date.now();
  const ranges = dealt.length + (alone.length > 0 ? 1 : 0);
  const results = await Promise.all(dealt.map((l, i) => runLane(`lane${i + 1}`, l, lanePorts(i, ranges), logDir)));
  if (alone.length > 0) results.push(await runLane('alone', alone, lanePorts(dealt.length, ranges), logDir));

  const measured: Record<string, number> = {};
  for (const r of results) Object.assign(measured, r.fileSeconds);
  writeFileSync(
    join(logDir, 'durations.json'),
    `${JSON.stringify({ alone: durations.alone, seconds: sortedRecord(measured) }, null, 2)}\n`,
  );
  if (writeDurations) {
    writeFileSync(
      DURATIONS,
      `${JSON.stringify({ alone: durations.alone, seconds: sortedRecord({ ...durations.seconds, ...measured }) }, null, 2)}\n`,
    );
  }

  console.log(`\n[test] ${fmt((Date.now() - started) / 1000)} in all; per lane:`);
  for (const r of results) {
    console.log(
      `[test]   ${r.name}: ${fmt(r.seconds)}, ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped, exit ${r.exitCode} (${r.files.length} files, log ${join(logDir, `${r.name}.log`)})`,
    );
  }
  console.log('[test] slowest files:');
  for (const [f, s] of Object.entries(measured)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12))
    console.log(`[test]   ${fmt(s).padStart(6)} ${f}`);
  const total = results.reduce(
    (t, r) => ({ passed: t.passed + r.passed, failed: t.failed + r.failed, skipped: t.skipped + r.skipped }),
    { passed: 0, failed: 0, skipped: 0 },
  );
  const broken = results.filter((r) => r.exitCode !== 0 && r.failed === 0);
  for (const r of broken)
    console.log(`[test] ${r.name} exited ${r.exitCode} with no failing test counted: see its log`);
  console.log(`tests: ${total.passed} passed, ${total.failed + broken.length} failed, ${total.skipped} skipped`);
  return results.every((r) => r.exitCode === 0) ? 0 : 1;
}

function sortedRecord(r: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(r)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, Math.round(v)]),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(`[test] ${err.message}`);
      process.exit(2);
    },
  );
}
