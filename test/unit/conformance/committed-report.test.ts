// docs/conformance.md is rendered from the committed report: it must say what conformance/report.yaml and
// conformance/summary.json say, and nothing they do not; so must the page of each other IP-family shape with a
// committed run (conformance/dual-stack/ → docs/conformance-dual-stack.md, conformance/ipv6/ → docs/conformance-ipv6.md).
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderFromResults, resultsLocation } from '../../../hack/conformance/doc.ts';
import { missingImplementationFields, parseSuiteReport } from '../../../hack/conformance/report.ts';
import type { ConformanceSummary } from '../../../hack/conformance/summary.ts';

const REPO = join(import.meta.dirname, '../../..');

for (const shape of ['IPv4', 'IPv6', 'dual'] as const) {
  const { dir, doc } = resultsLocation(shape);
  // The IPv4 record is always committed; the other shapes' once they have been run.
  if (shape !== 'IPv4' && !existsSync(join(REPO, dir, 'summary.json'))) continue;

  describe(`${doc} and the committed report in ${dir}/`, () => {
    const reportYaml = readFileSync(join(REPO, dir, 'report.yaml'), 'utf8');
    const report = parseSuiteReport(reportYaml);
    const summary = JSON.parse(readFileSync(join(REPO, dir, 'summary.json'), 'utf8')) as ConformanceSummary;
    const last = summary.runs[summary.runs.length - 1]!;

    it("agree: the summary's last run is the report, case for case, with the same implementation and IP families", () => {
      expect(last.cases.map((c) => [c.group, c.description, c.result])).to.deep.equal(
        report.cases.map((c) => [c.group, c.description, c.result]),
      );
      expect(summary.implementation).to.deep.equal(report.implementation);
      expect(missingImplementationFields(report.implementation), 'SIG Multicluster requires these').to.deep.equal([]);
      expect(summary.testbed.ipFamilies ?? 'IPv4').to.equal(shape);
    });

    it('the page is what they render to (run `npm run conformance -- --render-docs` after changing the renderer)', () => {
      expect(readFileSync(join(REPO, doc), 'utf8')).to.equal(renderFromResults(reportYaml, summary));
    });
  });
}
