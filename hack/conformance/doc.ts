// docs/conformance.md, rendered from the committed report (conformance/report.yaml) and summary
// (conformance/summary.json), so the page cannot say anything the report does not: laid out as SIG Multicluster's
// published implementation reports are (implementation, suite version, Required and Optional cases with their
// labels), plus where it ran and the commands that reproduce it. Pure: data in, Markdown out.
import {
  countCases,
  detailsOf,
  parseSuiteReport,
  withDetails,
  type ConformanceCase,
  type SuiteReport,
} from './report.ts';
import type { ConformanceSummary, RunSummary } from './summary.ts';
import type { IpFamilyFlagValue } from '../testbed/network.ts';

/** What each IP-family shape of the testbed is called in paths and on the page. */
const SHAPES: Record<IpFamilyFlagValue, { slug: string; title: string; families: string }> = {
  IPv4: { slug: '', title: '', families: '' },
  IPv6: { slug: 'ipv6', title: ' on an IPv6-only ClusterSet', families: ", ipFamilies: ['IPv6']" },
  dual: { slug: 'dual-stack', title: ' on a dual-stack ClusterSet', families: ", ipFamilies: ['IPv4', 'IPv6']" },
};

/**
 * The files of a run in the repository, relative to its root: the IPv4 ClusterSet's (the default) at the top, the
 * other shapes' each in a folder and a page of their own, so one shape's run never overwrites another's record.
 */
export function resultsLocation(ipFamilies: IpFamilyFlagValue = 'IPv4'): { dir: string; doc: string } {
  const { slug } = SHAPES[ipFamilies];
  return slug === ''
    ? { dir: 'conformance', doc: 'docs/conformance.md' }
    : { dir: `conformance/${slug}`, doc: `docs/conformance-${slug}.md` };
}

const RESULT_MARK: Record<ConformanceCase['result'], string> = {
  passed: '✅ passed',
  failed: '❌ failed',
  'not conformant': '❌ not conformant',
  skipped: '⏭️ skipped',
};

/** Table cell text: a "|" would end the cell, and "<service>" would vanish as an HTML tag. */
function cell(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('|', '\\|')
    .replaceAll('\n', ' ');
}

/** 14 min 3 s, 48 s. */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return [h > 0 ? `${h} h` : '', `${m} min`, `${s % 60} s`].filter(Boolean).join(' ');
}

function passedOf(cases: readonly ConformanceCase[], group: string): string {
  const inGroup = cases.filter((c) => c.group === group);
  return `${countCases(inGroup).passed}/${inGroup.length}`;
}

/** A static shields badge: what a README can show, e.g. "MCS API conformance v0.5.0 | Required 14/14, Optional 13/13". */
export function badge(report: SuiteReport, conformanceVersion: string): string {
  const required = report.cases.filter((c) => c.group === 'Required');
  const allRequired = required.length > 0 && countCases(required).passed === required.length && !report.suiteFailure;
  const label = `MCS API conformance ${conformanceVersion}`;
  const message = `Required ${passedOf(report.cases, 'Required')}, Optional ${passedOf(report.cases, 'Optional')}`;
  // Shields reads "-" as its separator and "_" as a space: both are doubled to stand for themselves.
  const part = (s: string) => encodeURIComponent(s).replaceAll('-', '--').replaceAll('_', '__');
  return `![${label}: ${message}](https://img.shields.io/badge/${part(label)}-${part(message)}-${allRequired ? 'brightgreen' : 'red'})`;
}

function groupTable(report: SuiteReport, group: string): string[] {
  const cases = report.cases;
  const inGroup = cases.filter((c) => c.group === group);
  if (inGroup.length === 0)
    return [
      `## ${group} tests`,
      '',
      report.suiteFailure ? 'None ran: the suite could not start (above).' : 'None ran (see the label filter above).',
      '',
    ];
  return [
    `## ${group} tests`,
    '',
    `Passed: ${passedOf(cases, group)}`,
    '',
    '| result | labels | description | time |',
    '| --- | --- | --- | --- |',
    ...inGroup.map((c) => {
      const why = [
        c.message ? `<br>*${cell(c.message)}*` : '',
        c.failure ? `<br>\`${c.failure.replaceAll('`', "'").replaceAll('|', '\\|')}\`` : '',
      ].join('');
      const time = c.seconds === undefined ? '' : `${c.seconds.toFixed(1)} s`;
      return `| ${RESULT_MARK[c.result]} | ${cell(c.labels.join(', '))} | ${cell(c.description)}${why} | ${time} |`;
    }),
    '',
  ];
}

function runsTable(runs: readonly RunSummary[]): string[] {
  if (runs.length < 2) return [];
  return [
    '## Every run',
    '',
    `${runs.length} runs in a row; the tables above are the last one's (\`conformance/report.yaml\`), every run's cases are in`,
    '`conformance/summary.json`.',
    '',
    '| run | started (UTC) | duration | passed | failed | skipped | not passed |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...runs.map((r) => {
      const notPassed = r.suiteFailure
        ? `suite could not start: ${r.suiteFailure}`
        : r.cases
            .filter((c) => c.result !== 'passed')
            .map((c) => `${c.description} (${c.result})`)
            .join('; ');
      return `| ${r.run} | ${r.startedAt.replace('T', ' ').replace(/\.\d+Z$/, '')} | ${formatDuration(r.durationSeconds)} | ${r.counts.passed} | ${r.counts.failed} | ${r.counts.skipped} | ${cell(notPassed)} |`;
    }),
    '',
  ];
}

function workerSettings(env: Readonly<Record<string, string>> | undefined): string[] {
  const entries = Object.entries(env ?? {});
  if (entries.length === 0) return [];
  return [
    `- The workers run with ${entries.map(([k, v]) => `\`${k}=${v}\``).join(', ')} besides kustomize/base's ConfigMap: the suite makes a`,
    "  namespace for every case, and empty Cloud Map namespaces kept (the default) reach the account's 50-namespace quota",
    '  after 50 cases on one ClusterSet, when the next export fails with `ResourceLimitExceeded`.',
  ];
}

export function renderConformanceDoc(report: SuiteReport, summary: ConformanceSummary): string {
  const last = summary.runs[summary.runs.length - 1];
  const impl = report.implementation;
  const filter = summary.testbed.labelFilter;
  const m = summary.machine;
  const shape = summary.testbed.ipFamilies ?? 'IPv4';
  const { dir } = resultsLocation(shape);
  const shapeFlag = shape === 'IPv4' ? '' : ` --ip-families ${shape}`;
  const flags = `${shapeFlag}${filter === undefined ? '' : ` --label-filter '${filter}'`}`;
  const runFlag = flags === '' ? '' : ` --${flags}`;
  return [
    `# MCS API conformance${SHAPES[shape].title}`,
    '',
    `<!-- Generated by \`npm run conformance\` from ${dir}/report.yaml and ${dir}/summary.json (\`npm run conformance -- --render-docs${shapeFlag}\``,
    'rewrites it from them). Do not edit: test/unit/conformance/committed-report.test.ts fails when it disagrees with them. -->',
    '',
    badge(report, summary.suite.conformanceVersion),
    '',
    'mcs-cloudmap against the upstream MCS API conformance suite (`sigs.k8s.io/mcs-api/conformance`), run by',
    "`npm run conformance` on the project's local data-path testbed. The report as the suite wrote it is",
    `[${dir}/report.yaml](../${dir}/report.yaml), with [${dir}/junit.xml](../${dir}/junit.xml) and the`,
    `summary [${dir}/summary.json](../${dir}/summary.json) (every run, machine, versions).`,
    '',
    '| | |',
    '| --- | --- |',
    `| organization | ${cell(impl.organization)} |`,
    `| project | ${cell(impl.project)} |`,
    `| implementation version | ${cell(impl.version)} |`,
    `| URL | ${cell(impl.url)} |`,
    `| MCS API conformance suite | ${summary.suite.conformanceVersion} (${cell(summary.suite.description)}) |`,
    `| date | ${summary.date.replace('T', ' ').replace(/\.\d+Z$/, '')} UTC |`,
    `| commit | \`${summary.commit}\` |`,
    `| result | Required ${passedOf(report.cases, 'Required')}, Optional ${passedOf(report.cases, 'Optional')}${report.suiteFailure ? `; the suite could not start: ${cell(report.suiteFailure)}` : ''} |`,
    `| duration | ${last ? formatDuration(last.durationSeconds) : '-'}${summary.runs.length > 1 ? ` (the last of ${summary.runs.length} runs)` : ''} |`,
    `| DNS domain | ${report.dnsDomain} |`,
    `| label filter | ${filter === undefined ? 'none: every case' : `\`${cell(filter)}\``} |`,
    '',
    ...groupTable(report, 'Required'),
    ...groupTable(report, 'Optional'),
    ...runsTable(summary.runs),
    '## Where it ran',
    '',
    `- Machine: ${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, Linux ${m.kernel}; load average`,
    `  ${m.loadAverage.toFixed(1)} when the run started (the machine is shared with other jobs).`,
    `- Kubernetes ${summary.versions.kubernetes} (kube-apiserver, controller-manager, scheduler, kubelet and kube-proxy built by`,
    `  \`hack/install-testbed.sh\`); cluster DNS ${summary.versions.coredns}; ${summary.versions.go}; Node.js ${summary.versions.node}.`,
    `- ${summary.testbed.clusters.length} clusters (${summary.testbed.clusters.join(', ')}) from \`startClusterSet({ dataPath: true${SHAPES[shape].families} })\``,
    `  ([testbed.md](testbed.md#data-path))${summary.testbed.clusterSetPerRun ? ', a fresh ClusterSet for each run' : ''}: each has a real node (kubelet, containerd, kube-proxy in`,
    "  iptables mode, CoreDNS serving `cluster.local` and `clusterset.local`) where the suite's pods run, and a pod network",
    "  routed between the clusters. AWS Cloud Map is the testbed's Cloud Map emulator (moto); mcs-cloudmap's webhook server",
    '  and reconcile worker run per cluster as host processes configured like the Deployments (`hack/local`).',
    ...workerSettings(summary.testbed.workerEnv),
    "- The suite's images `alpine/socat:1.7.4.4` and `nicolaka/netshoot:v0.15` are local stand-ins built by the testbed",
    '  ([testbed.md](testbed.md#images)), as no image registry is reachable there.',
    '',
    '## Reproduce',
    '',
    'As root on Linux with cgroup v1 (the real nodes need it), Go and Node.js ([README](../README.md) lists the',
    "prerequisites), with the suite's pinned copy as `shared/mcs-api-conformance` beside the clone:",
    '',
    '```bash',
    `git clone ${impl.url} mcs-cloudmap && cd mcs-cloudmap && git checkout ${summary.commit.replace(/-dirty$/, '')}`,
    'npm ci',
    "bash hack/install-testbed.sh   # the testbed: Kubernetes, CoreDNS, the real nodes' packages and images (about 20 min cold)",
    `npm run conformance${runFlag}`,
    '```',
    '',
    '`npm run conformance` builds the suite into `~/.cache/mcs-cloudmap/conformance-suite/` (once per version of its',
    'sources; `MCS_CONFORMANCE_SUITE=<dir>` points at another checkout, such as a clone of kubernetes-sigs/mcs-api),',
    'starts the ClusterSet, installs mcs-cloudmap and the ClusterProperties in each cluster, runs the suite with',
    `\`-contexts cls1,cls2\` and these implementation flags, writes \`${dir}/\` and this page, and prints`,
    '`conformance: N passed, M failed` (exit code 1 when a case failed). `--runs N` runs the suite N times in a row',
    '(`--fresh` starts a new ClusterSet for each), `--label-filter EXPR` passes a Ginkgo label filter on, `--ip-families',
    'IPv6|dual` runs on an IPv6-only or dual-stack ClusterSet and writes its own folder and page.',
    '',
    '## Submitting it to SIG Multicluster',
    '',
    `Copy \`${dir}/report.yaml\` to \`reports/${summary.suite.conformanceVersion}/mcs-cloudmap/${impl.version}.yaml\` in`,
    'kubernetes-sigs/sig-multicluster-site and open a pull request there; SIG Multicluster requires the',
    '`organization`, `project`, `version` and `url` of its `implementation` to be non-empty',
    '([Submitting a Conformance Report](https://multicluster.sigs.k8s.io/implementations/mcs-implementations/reports/)).',
    '',
  ].join('\n');
}

/** The page for report.yaml's text and the summary, whose last run gives the times and whole failures (report.yaml has neither). */
export function renderFromResults(reportYaml: string, summary: ConformanceSummary): string {
  const last = summary.runs[summary.runs.length - 1]?.cases ?? [];
  return renderConformanceDoc(withDetails(parseSuiteReport(reportYaml), detailsOf(last)), summary);
}
