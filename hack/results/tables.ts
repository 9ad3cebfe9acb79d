// The tables of docs/benchmarks.md and docs/reliability.md, rendered from the result files (hack/results/result-file.ts)
// between marker comments of the page:
//   <!-- results: sync -->            the result files of benchmark `sync` (a comma-separated list names several)
//   ...generated, replaced on each run of `npm run docs:results`...
//   <!-- end results -->
// so a result file and the table that shows it cannot disagree. `<!-- results by scenario: traffic -->` renders one row
// per result file instead, one column per figure name (figures side by side) and the command of each row. Pure: text
// in, text out.
import type { BenchResult, Figure, Machine } from './result-file.ts';

const BEGIN = /^<!-- results( by scenario)?: ([a-z0-9, -]+) -->$/;
const END = '<!-- end results -->';

export function formatNumber(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

function withUnit(n: number, unit: string): string {
  if (unit === '') return formatNumber(n);
  return /^[×%]/.test(unit) ? `${formatNumber(n)}${unit}` : `${formatNumber(n)} ${unit}`;
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function result(f: Figure): string {
  return `**${withUnit(f.value, f.unit)}**${f.detail ? ` (${f.detail})` : ''}`;
}

function goal(f: Figure): [string, string] {
  if (f.atMost === undefined) return ['', ''];
  return [`≤ ${withUnit(f.atMost, f.unit)}`, f.value <= f.atMost ? 'yes' : '**no**'];
}

export function describeMachine(m: Machine): string {
  const cores = m.cores === undefined ? 'cores unknown' : `${m.cores} cores`;
  return [
    `${cores} (${m.cpu ?? 'CPU model unknown'})`,
    m.memoryGiB === undefined ? 'memory unknown' : `${m.memoryGiB} GiB`,
  ].join(', ');
}

/** The order of a group's files: by the order the marker names the benchmarks, then by scenario, numbers as numbers. */
function ordered(results: readonly BenchResult[], benchmarks: readonly string[]): BenchResult[] {
  return results
    .filter((r) => benchmarks.includes(r.benchmark))
    .sort(
      (a, b) =>
        benchmarks.indexOf(a.benchmark) - benchmarks.indexOf(b.benchmark) ||
        a.scenario.localeCompare(b.scenario, 'en', { numeric: true }),
    );
}

/** One table row per figure (the run's size, date and commit on its first row), then one line per run. */
export function renderGroup(results: readonly BenchResult[], benchmarks: readonly string[]): string[] {
  const runs = ordered(results, benchmarks);
  if (runs.length === 0) throw new Error(`no result file of ${benchmarks.join(', ')}`);
  const rows = runs.flatMap((r) =>
    r.figures.map((f, i) => {
      const [target, met] = goal(f);
      const first = i === 0;
      return `| ${[first ? r.size : '', f.name, result(f), target, met, first ? r.date.slice(0, 10) : '', first ? (r.commit ?? 'unknown') : ''].map(cell).join(' | ')} |`;
    }),
  );
  const lines = runs.map(
    (r) =>
      `- ${r.size}: ${describeMachine(r.machine)}, Node ${r.node ?? 'unknown'}, load average ${r.load ?? 'unknown'}; ` +
      `\`${r.command}\`${r.note ? `. ${r.note}${/[.!?]$/.test(r.note) ? '' : '.'}` : ''}`,
  );
  return [
    '| size | figure | result | goal | met | date | commit |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    'Machine, load average and the command of each run:',
    '',
    ...lines,
  ];
}

/**
 * One row per run (its size, then each figure name of the group as a column, so the figures of a scenario stand side
 * by side), with the date, commit and command of the run; a run without a column's figure shows a dash.
 */
export function renderByScenario(results: readonly BenchResult[], benchmarks: readonly string[]): string[] {
  const runs = ordered(results, benchmarks);
  if (runs.length === 0) throw new Error(`no result file of ${benchmarks.join(', ')}`);
  const columns = [...new Set(runs.flatMap((r) => r.figures.map((f) => f.name)))];
  const rows = runs.map((r) => {
    const figures = columns.map((name) => {
      const f = r.figures.find((x) => x.name === name);
      return f === undefined ? '—' : result(f);
    });
    return `| ${[r.scenario, r.size, ...figures, r.date.slice(0, 10), r.commit ?? 'unknown', `\`${r.command}\``].map(cell).join(' | ')} |`;
  });
  const lines = runs.map(
    (r) =>
      `- ${r.scenario}: ${describeMachine(r.machine)}, Node ${r.node ?? 'unknown'}, load average ${r.load ?? 'unknown'}${r.note ? `. ${r.note}${/[.!?]$/.test(r.note) ? '' : '.'}` : ''}`,
  );
  return [
    `| scenario | what changes | ${columns.map(cell).join(' | ')} | date | commit | command |`,
    `| --- | --- | ${columns.map(() => '---').join(' | ')} | --- | --- | --- |`,
    ...rows,
    '',
    'Machine and load average of each run:',
    '',
    ...lines,
  ];
}

/** The benchmarks each marker of a page names. */
export function markedBenchmarks(markdown: string): string[][] {
  return markdown.split('\n').flatMap((l) => {
    const m = BEGIN.exec(l);
    return m ? [m[2]!.split(',').map((b) => b.trim())] : [];
  });
}

/** The page with every marked section rendered from `results`. */
export function renderPage(markdown: string, results: readonly BenchResult[]): string {
  const out: string[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = BEGIN.exec(lines[i]!);
    out.push(lines[i]!);
    if (!m) continue;
    const end = lines.indexOf(END, i + 1);
    const next = lines.findIndex((l, j) => j > i && BEGIN.test(l));
    if (end < 0 || (next >= 0 && next < end))
      throw new Error(`"${lines[i]}" (line ${i + 1}) has no "${END}" before the next marker`);
    const benchmarks = m[2]!.split(',').map((b) => b.trim());
    out.push('', ...(m[1] ? renderByScenario(results, benchmarks) : renderGroup(results, benchmarks)), '', END);
    i = end;
  }
  return out.join('\n');
}

/** Result files no page shows, as `benchmark-scenario`. */
export function unshown(results: readonly BenchResult[], pages: readonly string[]): string[] {
  const shown = new Set(pages.flatMap(markedBenchmarks).flat());
  return results.filter((r) => !shown.has(r.benchmark)).map((r) => `${r.benchmark}-${r.scenario}`);
}
