// Reading what the upstream MCS conformance suite writes (report.yaml, Ginkgo's JSON report) and summing it up.
import { expect } from 'chai';
import {
  caseDetails,
  countCases,
  detailsOf,
  missingImplementationFields,
  parseSuiteReport,
  withDetails,
} from '../../../hack/conformance/report.ts';
import {
  closingLine,
  conformanceVersionOf,
  runFailed,
  runSummary,
  suiteSourceFromReadme,
} from '../../../hack/conformance/summary.ts';

// The shape Go's yaml.v3 gives the suite's report struct: field names lower-cased, messages prefixed " - ".
const REPORT = `groups:
    - name: Required
      tests:
        - desc: Connectivity to a service that is not exported should be inaccessible
          ref: ""
          labels: []
          passed: true
          failed: false
          skipped: false
          conformant: true
          message: ""
        - desc: '  A ClusterIP service exported on two clusters  should expose the union of the constituent service ports and raise a conflict'
          ref: https://github.com/kubernetes/enhancements/tree/master/keps/sig-multicluster/1645-multi-cluster-services-api#service-port
          labels:
            - ClusterIP
          passed: false
          failed: false
          skipped: false
          conformant: false
          message: ' - The ServiceImport ports should be the union'
    - name: Optional
      tests:
        - desc: Connectivity to an exported ClusterIP service should be accessible through DNS
          ref: ""
          labels:
            - ClusterIP
            - Connectivity
          passed: false
          failed: true
          skipped: false
          conformant: true
          message: ' - Error executing command: timed out'
        - desc: ' Only labels and annotations specified as exported in the ServiceExport should be propagated to the ServiceImport'
          ref: ""
          labels:
            - ExportedLabels
          passed: false
          failed: false
          skipped: true
          conformant: true
          message: ' - not supported'
suitefailure: ""
dnsdomain: clusterset.local
passed: 1
total: 4
implementation:
    organization: Example
    project: mcs-cloudmap
    version: 0.1.0+0123456789ab
    url: https://example.com/mcs-cloudmap
`;

describe('conformance report', () => {
  it('reads each case with its group, labels and result, telling a failure from non-conformance', () => {
    const report = parseSuiteReport(REPORT);
    expect(report.cases.map((c) => [c.group, c.result, c.labels])).to.deep.equal([
      ['Required', 'passed', []],
      ['Required', 'not conformant', ['ClusterIP']],
      ['Optional', 'failed', ['ClusterIP', 'Connectivity']],
      ['Optional', 'skipped', ['ExportedLabels']],
    ]);
    expect(report.cases[1]!.message).to.equal('The ServiceImport ports should be the union');
    expect(report.cases[0]).to.not.have.property('message');
    expect(report.cases[3]!.description).to.equal(
      'Only labels and annotations specified as exported in the ServiceExport should be propagated to the ServiceImport',
    );
    expect(report.dnsDomain).to.equal('clusterset.local');
    expect(report.implementation).to.deep.equal({
      organization: 'Example',
      project: 'mcs-cloudmap',
      version: '0.1.0+0123456789ab',
      url: 'https://example.com/mcs-cloudmap',
    });
    expect(report).to.not.have.property('suiteFailure');
  });

  it('counts not conformant as failed and skips apart', () => {
    expect(countCases(parseSuiteReport(REPORT).cases)).to.deep.equal({ passed: 1, failed: 2, skipped: 1 });
  });

  it('reads a suite that could not start: no groups, the BeforeSuite failure', () => {
    const report = parseSuiteReport(
      'groups: []\nsuitefailure: \'error listing ServiceExports on context cls1: not found. Is the MCS API installed?\'\ndnsdomain: clusterset.local\nimplementation:\n    organization: ""\n    project: ""\n    version: ""\n    url: ""\n',
    );
    expect(report.cases).to.deep.equal([]);
    expect(report.suiteFailure).to.match(/Is the MCS API installed/);
    expect(missingImplementationFields(report.implementation)).to.deep.equal([
      'organization',
      'project',
      'version',
      'url',
    ]);
    const run = runSummary(1, new Date(0), 3, report);
    expect(runFailed(run), 'a run that never started is a failure').to.equal(true);
    expect(closingLine([run])).to.equal('conformance: 0 passed, 0 failed, 1 run(s) could not start');
  });

  it("refuses a file that is not the suite's report, and a case with no result", () => {
    expect(() => parseSuiteReport('kind: Config\n')).to.throw(/not a report of the MCS conformance suite/);
    expect(() => parseSuiteReport('groups:\n  - name: Required\n    tests:\n      - desc: x\n')).to.throw(
      /case "x" is neither/,
    );
  });

  it("takes each case's time and whole failure from Ginkgo's JSON report, matching texts whatever the spacing", () => {
    const json = JSON.stringify([
      {
        SpecReports: [
          { LeafNodeType: 'BeforeSuite', State: 'passed', RunTime: 5e9 },
          {
            ContainerHierarchyTexts: ['', 'A ClusterIP service exported on two clusters', ''],
            LeafNodeText: 'should expose the union of the constituent service ports and raise a conflict',
            LeafNodeType: 'It',
            State: 'failed',
            RunTime: 12_345_678_901,
            Failure: {
              Message:
                'Timed out after 200.001s.\n\nThe function passed to Eventually failed at /tmp/mcs-conformance-src-f7vlaK/conformance/conformance_suite.go:372 with:\nCommand output\nExpected\n    <string>: pod ip 10.245.10.34\r\r\n    \nto contain substring\n    <string>: 10.244.10.55',
            },
          },
          {
            ContainerHierarchyTexts: ['', 'Connectivity to a service that is not exported'],
            LeafNodeText: 'should be inaccessible',
            LeafNodeType: 'It',
            State: 'passed',
            RunTime: 40_000_000,
            Failure: { Message: 'retried, then passed' },
          },
        ],
      },
    ]);
    const details = caseDetails(json);
    expect(details.size).to.equal(2);
    const detailed = withDetails(parseSuiteReport(REPORT), details);
    expect(detailed.cases.map((c) => c.seconds)).to.deep.equal([0, 12.3, undefined, undefined]);
    expect(detailed.cases[1]!.failure).to.equal(
      'Timed out after 200.001s. The function passed to Eventually failed at conformance/conformance_suite.go:372 with: Command output Expected <string>: pod ip 10.245.10.34 to contain substring <string>: 10.244.10.55',
    );
    expect(detailed.cases[0], 'a passed case keeps no failure').to.not.have.property('failure');
    // What the summary keeps is found again the same way (the page is rendered from the summary).
    expect(withDetails(parseSuiteReport(REPORT), detailsOf(detailed.cases)).cases).to.deep.equal(detailed.cases);
  });

  it('cuts a very long failure to 400 characters', () => {
    const json = JSON.stringify([
      {
        SpecReports: [
          {
            ContainerHierarchyTexts: [],
            LeafNodeText: 'x',
            LeafNodeType: 'It',
            State: 'failed',
            RunTime: 0,
            Failure: { Message: 'y'.repeat(1000) },
          },
        ],
      },
    ]);
    const failure = caseDetails(json).get('x')!.failure!;
    expect(failure).to.have.length(400);
    expect(failure.endsWith('…')).to.equal(true);
  });

  it('adds up several runs in the closing line and fails on any failed case', () => {
    const report = parseSuiteReport(REPORT);
    const runs = [runSummary(1, new Date(0), 600, report), runSummary(2, new Date(0), 610, report)];
    expect(closingLine(runs)).to.equal('conformance: 2 runs, 2 passed, 4 failed, 2 skipped');
    expect(runFailed(runs[0]!)).to.equal(true);
    const clean = { ...report, cases: report.cases.filter((c) => c.result === 'passed' || c.result === 'skipped') };
    expect(runFailed(runSummary(3, new Date(0), 1, clean))).to.equal(false);
    expect(closingLine([runSummary(3, new Date(0), 1, clean)])).to.equal('conformance: 1 passed, 0 failed, 1 skipped');
  });

  it("finds the pinned suite's commit and released version in its README", () => {
    const readme =
      'is the Go module from kubernetes-sigs/mcs-api at commit\n`ded161af6ea9596cd9e878c61ed4f4e8d5cf8401` (tag `conformance/v0.5.0` plus two commits, 2026-05-07)';
    const source = suiteSourceFromReadme(readme);
    expect(source).to.deep.equal({ commit: 'ded161af6ea9596cd9e878c61ed4f4e8d5cf8401', tag: 'conformance/v0.5.0' });
    expect(conformanceVersionOf(source.tag)).to.equal('v0.5.0');
    expect(conformanceVersionOf('conformance/v0.5.1-2-gded161a')).to.equal('v0.5.1');
    expect(conformanceVersionOf(undefined)).to.equal('unknown');
    expect(suiteSourceFromReadme('# mcs-api')).to.deep.equal({});
  });
});
