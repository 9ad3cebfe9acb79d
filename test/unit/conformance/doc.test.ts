// How docs/conformance.md lays out a report: a table per group (Required, Optional) with every case, the badge, the
// runs, where it ran and how to reproduce it.
import { expect } from 'chai';
import { badge, formatDuration, renderConformanceDoc } from '../../../hack/conformance/doc.ts';
import type { ConformanceCase, SuiteReport } from '../../../hack/conformance/report.ts';
import { runSummary, type ConformanceSummary } from '../../../hack/conformance/summary.ts';

function fixture(cases: ConformanceCase[]): { report: SuiteReport; summary: ConformanceSummary } {
  const report: SuiteReport = {
    cases,
    dnsDomain: 'clusterset.local',
    implementation: {
      organization: 'Example',
      project: 'mcs-cloudmap',
      version: '0.1.0+0123456789ab',
      url: 'https://example.com/mcs-cloudmap',
    },
  };
  const summary: ConformanceSummary = {
    date: '2026-12-07T03:10:00.000Z',
    commit: '0123456789abcdef0123456789abcdef01234567',
    implementation: report.implementation,
    suite: {
      description: 'kubernetes-sigs/mcs-api ded161af, conformance/v0.5.0 plus later commits',
      conformanceVersion: 'v0.5.0',
      sourcesHash: 'ab',
    },
    testbed: { clusters: ['cls1', 'cls2'], clusterSetPerRun: false },
    versions: {
      kubernetes: 'v1.33.13',
      coredns: 'CoreDNS-1.11.4',
      go: 'go version go1.26.8 linux/amd64',
      node: 'v24.21.0',
    },
    machine: { cpus: 2, cpuModel: 'Some CPU', memoryGiB: 24, kernel: '6.18.0', loadAverage: 7.25 },
    runs: [
      runSummary(1, new Date('2026-12-07T03:10:00Z'), 843, report),
      runSummary(2, new Date('2026-12-07T03:25:00Z'), 61, report),
    ],
  };
  return { report, summary };
}

const CASES: ConformanceCase[] = [
  {
    group: 'Required',
    description: 'Connectivity to a service that is not exported should be inaccessible',
    labels: [],
    result: 'passed',
    seconds: 9.5,
  },
  {
    group: 'Required',
    description: 'A ClusterIP service exported on two clusters with conflicting ports | x',
    labels: ['ClusterIP'],
    result: 'not conformant',
    message: 'no Conflict condition',
    failure: 'Expected <string>: a|b',
  },
  {
    group: 'Optional',
    description: 'A DNS SRV query of the <service>.<ns>.svc.clusterset.local domain',
    labels: ['ClusterIP', 'DNS'],
    result: 'passed',
  },
  { group: 'Optional', description: 'exported labels', labels: ['ExportedLabels'], result: 'skipped' },
];

describe('the conformance page', () => {
  it("lists every case once in its group's table, with its result, labels, message and time", () => {
    const { report, summary } = fixture(CASES);
    const doc = renderConformanceDoc(report, summary);
    const required = doc.slice(doc.indexOf('## Required tests'), doc.indexOf('## Optional tests'));
    expect(required).to.contain('Passed: 1/2');
    expect(required).to.contain(
      '| ✅ passed |  | Connectivity to a service that is not exported should be inaccessible | 9.5 s |',
    );
    expect(required).to.contain(
      '| ❌ not conformant | ClusterIP | A ClusterIP service exported on two clusters with conflicting ports \\| x<br>*no Conflict condition*<br>`Expected <string>: a\\|b` |  |',
    );
    const optional = doc.slice(doc.indexOf('## Optional tests'), doc.indexOf('## Every run'));
    expect(optional).to.contain('Passed: 1/2');
    expect(optional).to.contain('| ⏭️ skipped | ExportedLabels | exported labels |  |');
    expect(optional, 'no HTML tag that a Markdown viewer would swallow').to.contain(
      'A DNS SRV query of the &lt;service&gt;.&lt;ns&gt;.svc.clusterset.local domain',
    );
    expect(doc).to.contain('| result | Required 1/2, Optional 1/2 |');
    expect(doc).to.contain('| duration | 1 min 1 s (the last of 2 runs) |');
    expect(doc).to.contain('| 1 | 2026-12-07 03:10:00 | 14 min 3 s | 2 | 1 | 1 |');
    expect(doc).to.contain('git checkout 0123456789abcdef0123456789abcdef01234567');
    expect(doc).to.contain('reports/v0.5.0/mcs-cloudmap/0.1.0+0123456789ab.yaml');
    expect(doc, 'no worker settings, no line about them').to.not.contain('The workers run with');
    const cleanup = renderConformanceDoc(report, {
      ...summary,
      testbed: { ...summary.testbed, workerEnv: { MCS_NAMESPACE_CLEANUP: 'true' } },
    });
    expect(cleanup).to.contain(
      "- The workers run with `MCS_NAMESPACE_CLEANUP=true` besides kustomize/base's ConfigMap",
    );
  });

  it('shows a green badge only when every Required case passed', () => {
    const { report } = fixture(CASES);
    expect(badge(report, 'v0.5.0')).to.match(/-red\)$/);
    const allRequired = { ...report, cases: CASES.filter((c) => c.result !== 'not conformant') };
    expect(badge(allRequired, 'v0.5.0')).to.equal(
      '![MCS API conformance v0.5.0: Required 1/1, Optional 1/2](https://img.shields.io/badge/MCS%20API%20conformance%20v0.5.0-Required%201%2F1%2C%20Optional%201%2F2-brightgreen)',
    );
    expect(badge({ ...report, cases: [] }, 'v0.5.0'), 'no Required case ran').to.match(/-red\)$/);
  });

  it('says when the suite could not start, and when a label filter left a group out', () => {
    const { report, summary } = fixture([]);
    const failed = renderConformanceDoc({ ...report, suiteFailure: 'error listing ServiceExports' }, summary);
    expect(failed).to.contain('the suite could not start: error listing ServiceExports');
    expect(failed).to.contain('None ran: the suite could not start (above).');
    const filtered = renderConformanceDoc(
      { ...report, cases: CASES.filter((c) => c.group === 'Optional') },
      { ...summary, testbed: { ...summary.testbed, labelFilter: 'DNS' } },
    );
    expect(filtered).to.contain('## Required tests\n\nNone ran (see the label filter above).');
    expect(filtered).to.contain('| label filter | `DNS` |');
    expect(filtered).to.contain("npm run conformance -- --label-filter 'DNS'");
  });

  it('writes durations as a person reads them', () => {
    expect([formatDuration(48.4), formatDuration(60), formatDuration(843), formatDuration(3725)]).to.deep.equal([
      '48 s',
      '1 min 0 s',
      '14 min 3 s',
      '1 h 2 min 5 s',
    ]);
  });
});
