// What one run of the upstream MCS conformance suite found, read from the files it writes: report.yaml (the form SIG
// Multicluster publishes: cases grouped Required / Optional, each passed, failed, skipped or not conformant) and
// Ginkgo's JSON report (how long each case took, and the whole failure message). Pure: text in, plain data out.
import { parse } from 'yaml';

/** The implementation as the suite's -organization, -project, -version and -url flags name it in report.yaml. */
export interface Implementation {
  organization: string;
  project: string;
  version: string;
  url: string;
}

/** `failed`: the case could not tell (an error got in the way); `not conformant`: it found behaviour against the spec. */
export type CaseResult = 'passed' | 'failed' | 'not conformant' | 'skipped';

export interface ConformanceCase {
  /** Required or Optional. */
  group: string;
  description: string;
  labels: string[];
  result: CaseResult;
  /** The suite's one-line reason for a result other than passed. */
  message?: string;
  /** From Ginkgo's JSON report, when it names the case. */
  seconds?: number;
  /** Ginkgo's failure message (what was expected and what came), on one line: report.yaml keeps only its first words. */
  failure?: string;
}

export interface SuiteReport {
  cases: ConformanceCase[];
  /** Set when the suite could not start (its BeforeSuite failed), e.g. no MCS CRDs in a cluster. */
  suiteFailure?: string;
  dnsDomain: string;
  implementation: Implementation;
}

interface YamlTest {
  desc?: string;
  labels?: string[] | null;
  passed?: boolean;
  failed?: boolean;
  skipped?: boolean;
  conformant?: boolean;
  message?: string;
}

/** Go's yaml.v3 writes exported struct fields with their names lower-cased. */
interface YamlReport {
  groups?: { name?: string; tests?: YamlTest[] | null }[] | null;
  suitefailure?: string;
  dnsdomain?: string;
  implementation?: Partial<Implementation>;
}

function resultOf(t: YamlTest): CaseResult {
  if (t.skipped) return 'skipped';
  if (t.failed) return 'failed';
  if (t.conformant === false) return 'not conformant';
  if (t.passed) return 'passed';
  throw new Error(`report.yaml: case "${t.desc}" is neither passed, failed, skipped nor non-conformant`);
}

/** The suite prefixes each message with " - " for its HTML table. */
function cleanMessage(message: string | undefined): string | undefined {
  const m = message?.replace(/^\s*-\s*/, '').trim();
  return m ? m : undefined;
}

export function parseSuiteReport(text: string): SuiteReport {
  const doc = parse(text) as YamlReport | null;
  if (!doc || typeof doc !== 'object' || !('groups' in doc))
    throw new Error('report.yaml: not a report of the MCS conformance suite (no groups)');
  const cases = (doc.groups ?? []).flatMap((g) =>
    (g.tests ?? []).map((t): ConformanceCase => {
      const message = cleanMessage(t.message);
      return {
        group: g.name ?? '',
        description: (t.desc ?? '').trim(),
        labels: t.labels ?? [],
        result: resultOf(t),
        ...(message ? { message } : {}),
      };
    }),
  );
  const i = doc.implementation ?? {};
  return {
    cases,
    ...(doc.suitefailure ? { suiteFailure: doc.suitefailure } : {}),
    dnsDomain: doc.dnsdomain ?? '',
    implementation: {
      organization: i.organization ?? '',
      project: i.project ?? '',
      version: i.version ?? '',
      url: i.url ?? '',
    },
  };
}

interface GinkgoSpec {
  ContainerHierarchyTexts?: string[] | null;
  LeafNodeText?: string;
  LeafNodeType?: string;
  State?: string;
  RunTime?: number;
  Failure?: { Message?: string };
}

/** Spaces collapsed: the suite joins empty container texts into its descriptions. */
function normalized(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export interface CaseDetail {
  seconds: number;
  failure?: string;
}

const FAILURE_CHARS = 400;

/** One line, without the build's temporary source directory (it differs on every machine). */
function failureLine(message: string): string {
  const line = normalized(message.replace(/\S*\/(conformance\/[\w.]+\.go:\d+)/g, '$1'));
  return line.length > FAILURE_CHARS ? `${line.slice(0, FAILURE_CHARS - 1)}…` : line;
}

/** Each case's (`It`'s) time and failure in Ginkgo's JSON report, by its full text. */
export function caseDetails(ginkgoJson: string): Map<string, CaseDetail> {
  const suites = JSON.parse(ginkgoJson) as { SpecReports?: GinkgoSpec[] | null }[];
  const out = new Map<string, CaseDetail>();
  for (const spec of suites.flatMap((s) => s.SpecReports ?? [])) {
    if (spec.LeafNodeType !== 'It') continue;
    const text = normalized([...(spec.ContainerHierarchyTexts ?? []), spec.LeafNodeText ?? ''].join(' '));
    const message = spec.State !== 'passed' && spec.State !== 'skipped' ? spec.Failure?.Message : undefined;
    out.set(text, {
      seconds: Math.round((spec.RunTime ?? 0) / 1e8) / 10,
      ...(message ? { failure: failureLine(message) } : {}),
    });
  }
  return out;
}

/** The details kept with cases (the summary's), looked up as caseDetails' are. */
export function detailsOf(cases: readonly ConformanceCase[]): Map<string, CaseDetail> {
  return new Map(
    cases.flatMap((c) =>
      c.seconds === undefined
        ? []
        : [
            [
              normalized(c.description),
              {
                seconds: c.seconds,
                ...(c.failure ? { failure: c.failure } : {}),
              },
            ] as const,
          ],
    ),
  );
}

export function withDetails(report: SuiteReport, details: ReadonlyMap<string, CaseDetail>): SuiteReport {
  return {
    ...report,
    cases: report.cases.map((c) => {
      const detail = details.get(normalized(c.description));
      return detail === undefined ? c : { ...c, ...detail };
    }),
  };
}

export interface Counts {
  passed: number;
  /** Failed and not conformant together: every case that did not pass and was not skipped. */
  failed: number;
  skipped: number;
}

export function countCases(cases: readonly ConformanceCase[]): Counts {
  return {
    passed: cases.filter((c) => c.result === 'passed').length,
    failed: cases.filter((c) => c.result === 'failed' || c.result === 'not conformant').length,
    skipped: cases.filter((c) => c.result === 'skipped').length,
  };
}

/** The implementation fields SIG Multicluster requires to be non-empty in a submitted report. */
export function missingImplementationFields(impl: Implementation): string[] {
  return (['organization', 'project', 'version', 'url'] as const).filter((k) => impl[k].trim() === '');
}
