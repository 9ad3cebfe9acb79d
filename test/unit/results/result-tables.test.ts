// docs/benchmarks.md and docs/reliability.md show bench/results/*.json: the pages' tables must be what the result files
// give (`npm run docs:results`), every result file must be shown, and the rendering must say where a figure misses
// its goal.
import { expect } from 'chai';
import { resultPageProblems } from '../../../hack/docs-results.ts';
import { readResults, type BenchResult } from '../../../hack/results/result-file.ts';
import { formatNumber, markedBenchmarks, renderPage, unshown } from '../../../hack/results/tables.ts';

function result(over: Partial<BenchResult> = {}): BenchResult {
  return {
    benchmark: 'sync',
    scenario: '300-services',
    size: '300 services',
    date: '2026-12-02T11:07Z',
    commit: 'abc1234',
    machine: { cpu: 'AMD EPYC', cores: 2, memoryGiB: 24 },
    load: '0.5',
    node: 'v24.21.0',
    command: 'npm run bench:sync -- --services=300',
    figures: [
      { name: 'initial sync', value: 1.25, unit: '×', atMost: 1.3, detail: '62.8 s' },
      { name: 'worker RSS peak', value: 92, unit: 'MiB', atMost: 85 },
    ],
    ...over,
  };
}

const PAGE = ['# Page', '', '<!-- results: sync -->', 'stale text', '<!-- end results -->', '', 'after'].join('\n');

describe('result tables: docs/benchmarks.md and docs/reliability.md from bench/results', () => {
  it('the pages are what the result files give, and every result file is shown', () => {
    expect(resultPageProblems()).to.deep.equal([]);
  });

  it('every result file has figures, a machine, a date and the command that repeats it', () => {
    for (const r of readResults()) {
      expect(r.figures.length, r.scenario).to.be.greaterThan(0);
      expect(r.command, r.scenario).to.match(/^(npm run |npx mocha |[A-Z0-9_]+=\S+ )/);
      expect(r.date, r.scenario).to.match(/^\d{4}-\d{2}-\d{2}/);
    }
  });

  it("renders one row per figure, the run's size, date and commit on its first, and a goal missed as **no**", () => {
    const page = renderPage(PAGE, [result()]);
    expect(page).to.not.contain('stale text');
    expect(page).to.contain(
      '| 300 services | initial sync | **1.25×** (62.8 s) | ≤ 1.3× | yes | 2026-12-02 | abc1234 |',
    );
    expect(page).to.contain('|  | worker RSS peak | **92 MiB** | ≤ 85 MiB | **no** |  |  |');
    expect(page).to.contain(
      '- 300 services: 2 cores (AMD EPYC), 24 GiB, Node v24.21.0, load average 0.5; `npm run bench:sync -- --services=300`',
    );
    expect(page.endsWith('<!-- end results -->\n\nafter')).to.equal(true);
    expect(renderPage(page, [result()]), 'rendering twice changes nothing').to.equal(page);
  });

  it('says unknown for what a seeded run did not record', () => {
    const page = renderPage(PAGE, [
      result({ commit: undefined, load: undefined, node: undefined, machine: { cores: 2 } }),
    ]);
    expect(page).to.contain('| 2026-12-02 | unknown |');
    expect(page).to.contain('2 cores (CPU model unknown), memory unknown, Node unknown, load average unknown;');
  });

  it("orders a group by the marker's benchmarks, then by scenario with numbers as numbers", () => {
    const page = renderPage('<!-- results: webhook, sync -->\n<!-- end results -->', [
      result({ scenario: '10000-services', size: 'ten thousand' }),
      result({ scenario: '300-services', size: 'three hundred' }),
      result({ benchmark: 'webhook', scenario: '10000-objects', size: 'the webhook' }),
    ]);
    const at = (s: string) => page.indexOf(`| ${s} |`);
    expect(at('the webhook')).to.be.lessThan(at('three hundred'));
    expect(at('three hundred')).to.be.lessThan(at('ten thousand'));
  });

  it('renders a by-scenario marker as one row per run with its figures side by side and its command', () => {
    const traffic = (scenario: string, figures: BenchResult['figures']) =>
      result({
        benchmark: 'traffic',
        scenario,
        size: `${scenario} happens`,
        command: `npm run bench:traffic -- --scenario=${scenario}`,
        figures,
      });
    const page = renderPage('<!-- results by scenario: traffic -->\n<!-- end results -->', [
      traffic('rollout', [
        { name: 'across clusters', value: 3, unit: '', detail: 'of 900' },
        { name: 'in-cluster', value: 0, unit: '' },
      ]),
      traffic('unexport', [{ name: 'across clusters', value: 0, unit: '' }]),
    ]);
    expect(page).to.contain('| scenario | what changes | across clusters | in-cluster | date | commit | command |');
    expect(page).to.contain(
      '| rollout | rollout happens | **3** (of 900) | **0** | 2026-12-02 | abc1234 | `npm run bench:traffic -- --scenario=rollout` |',
    );
    expect(page).to.contain(
      '| unexport | unexport happens | **0** | — | 2026-12-02 | abc1234 | `npm run bench:traffic -- --scenario=unexport` |',
    );
    expect(page).to.contain('- rollout: 2 cores (AMD EPYC), 24 GiB, Node v24.21.0, load average 0.5');
    expect(markedBenchmarks(page)).to.deep.equal([['traffic']]);
  });

  it('refuses a marker without its end, and a marker with no result file', () => {
    expect(() => renderPage('<!-- results: sync -->\nno end', [result()])).to.throw(/has no "<!-- end results -->"/);
    expect(() => renderPage(PAGE, [result({ benchmark: 'memory' })])).to.throw(/no result file of sync/);
  });

  it('finds result files no page shows', () => {
    expect(markedBenchmarks('<!-- results: sync, chaos-cloudmap -->')).to.deep.equal([['sync', 'chaos-cloudmap']]);
    expect(unshown([result(), result({ benchmark: 'memory', scenario: 'worker-300-services' })], [PAGE])).to.deep.equal(
      ['memory-worker-300-services'],
    );
  });

  it('writes numbers as the tables do', () => {
    expect(formatNumber(2511.6)).to.equal('2,511.6');
    expect(formatNumber(1.256)).to.equal('1.26');
    expect(formatNumber(-0.07)).to.equal('-0.07');
  });
});
