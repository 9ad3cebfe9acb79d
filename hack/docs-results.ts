// `npm run docs:results [-- --check]`: renders the result tables of docs/benchmarks.md and docs/reliability.md from
// bench/results/*.json (hack/results/tables.ts). `--check` changes nothing and exits 1 when a page differs from what
// the result files give, or when a result file is shown by no page; test/unit/docs/results-tables.test.ts runs the same.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readResults, type BenchResult } from './results/result-file.ts';
import { renderPage, unshown } from './results/tables.ts';

export const RESULT_PAGES = ['benchmarks.md', 'reliability.md'].map((p) =>
  fileURLToPath(new URL(`../docs/${p}`, import.meta.url)),
);

/** What is wrong with the pages as they are: pages that differ from their rendering, result files no page shows. */
export function resultPageProblems(
  results: readonly BenchResult[] = readResults(),
  pages: readonly string[] = RESULT_PAGES,
): string[] {
  const texts = pages.map((p) => readFileSync(p, 'utf8'));
  return [
    ...pages
      .filter((p, i) => renderPage(texts[i]!, results) !== texts[i])
      .map((p) => `${p} differs from bench/results: run \`npm run docs:results\``),
    ...unshown(results, texts).map(
      (r) => `bench/results/${r}.json is shown by no page: add its benchmark to a "results:" marker`,
    ),
  ];
}

if (import.meta.main) {
  if (process.argv.includes('--check')) {
    const problems = resultPageProblems();
    for (const p of problems) console.error(p);
    process.exitCode = problems.length === 0 ? 0 : 1;
  } else {
    const results = readResults();
    for (const page of RESULT_PAGES) writeFileSync(page, renderPage(readFileSync(page, 'utf8'), results));
    for (const r of unshown(
      results,
      RESULT_PAGES.map((p) => readFileSync(p, 'utf8')),
    ))
      console.error(`bench/results/${r}.json is shown by no page`);
  }
}
