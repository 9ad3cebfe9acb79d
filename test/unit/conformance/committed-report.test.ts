// docs/conformance.md is rendered from the committed report: it must say what conformance/report.yaml and
// conformance/summary.json say, and nothing they do not.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOC_PATH, renderFromResults, RESULTS_DIR } from '../../../hack/conformance/doc.ts';
import { missingImplementationFields, parseSuiteReport } from '../../../hack/conformance/report.ts';
import type { ConformanceSummary } from '../../../hack/conformance/summary.ts';

const REPO = join(import.meta.dirname, '../../..');

describe('docs/conformance.md and the committed report', () => {
  const reportYaml = readFileSync(join(REPO, RESULTS_DIR, 'report.yaml'), 'utf8');
  const report = parseSuiteReport(reportYaml);
  const summary = JSON.parse(readFileSync(join(REPO, RESULTS_DIR, 'summary.json'), 'utf8')) as ConformanceSummary;
  const last = summary.runs[summary.runs.length - 1]!;

  it('agree: the summary\'s last run is the report, case for case, with the same implementation', () => {
    expect(last.cases.map((c) => [c.group, c.description, c.result])).to.deep.equal(report.cases.map((c) => [c.group, c.description, c.result]));
    expect(summary.implementation).to.deep.equal(report.implementation);
    expect(missingImplementationFields(report.implementation), 'SIG Multicluster requires these').to.deep.equal([]);
  });

  it('the page is what they render to (run `npm run conformance -- --render-docs` after changing the renderer)', () => {
    expect(readFileSync(join(REPO, DOC_PATH), 'utf8')).to.equal(renderFromResults(reportYaml, summary));
  });
});
