// `npm run conformance`: the upstream MCS API conformance suite against mcs-cloudmap on the data-path testbed. Builds
// the suite (cached by its sources' hash), starts a 2-cluster ClusterSet with a real node per cluster (IPv4, or
// `--ip-families IPv6|dual`, whose results go to a folder and page of their own), installs
// mcs-cloudmap and the ClusterProperties in each cluster, runs the suite (`--runs N` times; `--fresh` for a new
// ClusterSet each time), then writes conformance/ (report.yaml and junit.xml as the suite wrote them, summary.json)
// and docs/conformance.md from them, and ends with `conformance: N passed, M failed` (exit code 1 on a failure).
// `--render-docs` only rewrites docs/conformance.md from the committed conformance/.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { clusterProperties } from './demo/cluster-properties.ts';
import { parseConformanceArgs, type ConformanceArgs } from './conformance/args.ts';
import { renderFromResults, resultsLocation } from './conformance/doc.ts';
import { machine, versions } from './conformance/environment.ts';
import { currentCommit, identity } from './conformance/identity.ts';
import { mergeKubeconfigs } from './conformance/kubeconfig.ts';
import { caseDetails, parseSuiteReport, withDetails, type SuiteReport } from './conformance/report.ts';
import { startSuite } from './conformance/run-suite.ts';
import {
  ConformanceSetupError,
  goVersion,
  suiteBinary,
  suiteCheckout,
  type SuiteBinary,
} from './conformance/suite-build.ts';
import {
  closingLine,
  conformanceVersionOf,
  runFailed,
  runSummary,
  suiteSourceFromReadme,
  type ConformanceSummary,
  type RunSummary,
  type SuiteSource,
} from './conformance/summary.ts';
import { deployLocally, type LocalDeployment } from './local/deploy.ts';
import { missingDataPathPrerequisites, startClusterSet, type TestClusterSet } from './testbed/index.ts';
import { familiesOfFlag, type IpFamilyFlagValue } from './testbed/network.ts';
import { kubectlBinary } from './testbed/paths.ts';

const REPO = resolve(import.meta.dirname, '..');
/**
 * Settings of the workers beyond kustomize/base's ConfigMap. The suite makes a Kubernetes namespace, so a Cloud Map
 * namespace, for every case; kept once empty (the default), they reach the 50-namespace quota of an account (AWS's
 * default, which the emulator enforces) after 50 cases on one ClusterSet, and the next export fails with
 * ResourceLimitExceeded, as the second of two runs on one ClusterSet did.
 */
const WORKER_ENV = { MCS_NAMESPACE_CLEANUP: 'true' };
const started = Date.now();
const say = (line: string) =>
  process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(7)}s] ${line}\n`);

function suiteSource(checkout: string, binary: SuiteBinary): SuiteSource {
  let readme = '';
  try {
    readme = readFileSync(join(checkout, 'README.md'), 'utf8');
  } catch {
    /* a clone of the upstream repository has its own */
  }
  const { commit, tag } = suiteSourceFromReadme(readme);
  const description = commit
    ? `kubernetes-sigs/mcs-api ${commit}${tag ? `, ${tag} plus later commits` : ''}`
    : `sources at ${checkout}`;
  return { description, conformanceVersion: conformanceVersionOf(tag), sourcesHash: binary.hash };
}

/** The ClusterSet with mcs-cloudmap installed as the e2e tests install it, and the ClusterProperties (C1) set. */
async function startTestbed(
  ipFamilies: IpFamilyFlagValue,
): Promise<{ set: TestClusterSet; deployment: LocalDeployment }> {
  say(`starting a 2-cluster ${ipFamilies} ClusterSet with a real node per cluster and the Cloud Map emulator`);
  const set = await startClusterSet({
    dataPath: true,
    ipFamilies: familiesOfFlag(ipFamilies),
    log: (l) => say(`  ${l}`),
  });
  say(`ClusterSet ready in ${(set.startupMs / 1000).toFixed(1)} s (${set.dir})`);
  try {
    const deployment = await deployLocally(set, { log: (l) => say(`  ${l}`), configEnv: WORKER_ENV });
    for (const c of set.clusters) {
      execFileSync(kubectlBinary(), ['--kubeconfig', c.kubeconfigPath, 'apply', '-f', '-'], {
        input: clusterProperties(c.id, set.clustersetId),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    }
    say('mcs-cloudmap installed in every cluster (webhook server and worker on the host), ClusterProperties set');
    return { set, deployment };
  } catch (err) {
    await set.stop({ keepLogs: true });
    throw err;
  }
}

function readRun(dir: string): SuiteReport {
  const report = parseSuiteReport(readFileSync(join(dir, 'report.yaml'), 'utf8'));
  // Ginkgo's JSON report only adds each case's time and whole failure: a run whose JSON is missing or cut short still counts.
  try {
    return withDetails(report, caseDetails(readFileSync(join(dir, 'report.json'), 'utf8')));
  } catch {
    return report;
  }
}

function printRun(run: RunSummary): void {
  if (run.suiteFailure) say(`  the suite could not start: ${run.suiteFailure}`);
  for (const c of run.cases)
    say(`  ${c.result.padEnd(14)} [${c.group}] ${c.description}${c.message ? ` — ${c.message}` : ''}`);
  say(`  run ${run.run}: ${closingLine([run]).replace('conformance: ', '')} in ${run.durationSeconds} s`);
}

/** conformance/ (or the shape's folder) in the repository: the last run's report.yaml and junit.xml, each run's when there were several. */
function writeResults(workDir: string, summary: ConformanceSummary): void {
  const out = join(REPO, resultsLocation(summary.testbed.ipFamilies).dir);
  mkdirSync(out, { recursive: true });
  for (const entry of readdirSync(out)) if (/^run-\d+$/.test(entry)) rmSync(join(out, entry), { recursive: true });
  const last = summary.runs.length;
  for (const file of ['report.yaml', 'junit.xml']) copyFileSync(join(workDir, `run-${last}`, file), join(out, file));
  if (summary.runs.length > 1) {
    for (const r of summary.runs) {
      mkdirSync(join(out, `run-${r.run}`));
      for (const file of ['report.yaml', 'junit.xml'])
        copyFileSync(join(workDir, `run-${r.run}`, file), join(out, `run-${r.run}`, file));
    }
  }
  writeFileSync(join(out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
}

function renderDocs(ipFamilies: IpFamilyFlagValue): { dir: string; doc: string } {
  const where = resultsLocation(ipFamilies);
  const summary = JSON.parse(readFileSync(join(REPO, where.dir, 'summary.json'), 'utf8')) as ConformanceSummary;
  writeFileSync(
    join(REPO, where.doc),
    renderFromResults(readFileSync(join(REPO, where.dir, 'report.yaml'), 'utf8'), summary),
  );
  return where;
}

async function conformance(args: ConformanceArgs): Promise<boolean> {
  const checkout = suiteCheckout();
  goVersion();
  const missing = missingDataPathPrerequisites();
  if (missing.length > 0) {
    throw new ConformanceSetupError(
      `this machine cannot run the data-path testbed the suite needs (its pods must run and reach each other); missing:\n  - ${missing.join('\n  - ')}`,
    );
  }
  const binary = await suiteBinary(checkout, say);
  say(`suite binary ${binary.path}${binary.built ? '' : ' (cached)'}`);
  const commit = currentCommit();
  const { implementation, placeholders } = identity(commit);
  if (placeholders.length > 0)
    say(`note: placeholder ${placeholders.join(' and ')}: set them in package.json before submitting the report`);
  const workDir = mkdtempSync(join(tmpdir(), 'mcs-cloudmap-conformance-'));
  say(`suite output under ${workDir}`);
  const date = new Date();
  const load = machine();
  const runs: RunSummary[] = [];
  let testbed: { set: TestClusterSet; deployment: LocalDeployment } | undefined;
  let clusterVersions: ConformanceSummary['versions'] | undefined;
  let clusters: string[] = [];
  let failed = false;
  const stopTestbed = async () => {
    await testbed?.deployment.stop();
    await testbed?.set.stop({ keepLogs: args.keepLogs || failed });
    if ((args.keepLogs || failed) && testbed) say(`testbed logs kept in ${testbed.set.dir}`);
    testbed = undefined;
  };
  let interrupted = false;
  let current: ReturnType<typeof startSuite> | undefined;
  const interrupt = () => {
    interrupted = true;
    current?.child.kill('SIGINT');
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    for (let run = 1; run <= args.runs && !interrupted; run++) {
      if (testbed && args.fresh) await stopTestbed();
      testbed ??= await startTestbed(args.ipFamilies);
      const { set } = testbed;
      clusterVersions ??= versions(set.clusters);
      clusters = set.clusters.map((c) => c.id);
      const kubeconfig = join(set.dir, 'conformance.kubeconfig');
      writeFileSync(kubeconfig, mergeKubeconfigs(set.clusters.map((c) => readFileSync(c.kubeconfigPath, 'utf8'))), {
        mode: 0o600,
      });
      const dir = join(workDir, `run-${run}`);
      mkdirSync(dir);
      say(
        `run ${run} of ${args.runs}: the suite against ${set.clusters.map((c) => c.context).join(', ')}${args.labelFilter === undefined ? '' : ` (label filter ${args.labelFilter})`}`,
      );
      const runStarted = new Date();
      current = startSuite(
        binary.path,
        {
          kubeconfig,
          contexts: set.clusters.map((c) => c.context),
          implementation,
          ...(args.labelFilter === undefined ? {} : { labelFilter: args.labelFilter }),
        },
        dir,
        say,
      );
      await current.done;
      const summaryOfRun = runSummary(
        run,
        runStarted,
        Math.round((Date.now() - runStarted.getTime()) / 1000),
        readRun(dir),
      );
      runs.push(summaryOfRun);
      printRun(summaryOfRun);
      failed ||= runFailed(summaryOfRun);
    }
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
    await stopTestbed();
  }
  if (interrupted)
    throw new Error(
      `interrupted after ${runs.length} complete run(s); nothing written to ${resultsLocation(args.ipFamilies).dir}/`,
    );
  const summary: ConformanceSummary = {
    date: date.toISOString(),
    commit,
    implementation,
    suite: suiteSource(checkout, binary),
    testbed: {
      clusters,
      clusterSetPerRun: args.fresh,
      workerEnv: WORKER_ENV,
      ...(args.labelFilter === undefined ? {} : { labelFilter: args.labelFilter }),
      ...(args.ipFamilies === 'IPv4' ? {} : { ipFamilies: args.ipFamilies }),
    },
    versions: clusterVersions!,
    machine: load,
    runs,
  };
  writeResults(workDir, summary);
  const where = renderDocs(args.ipFamilies);
  say(`wrote ${where.dir}/ and ${where.doc}`);
  process.stdout.write(`${closingLine(runs)}\n`);
  return !failed;
}

let args: ConformanceArgs;
try {
  args = parseConformanceArgs(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}
let passed = false;
try {
  if (args.renderDocs) {
    const where = renderDocs(args.ipFamilies);
    process.stdout.write(`rewrote ${where.doc} from ${where.dir}/\n`);
    passed = true;
  } else {
    passed = await conformance(args);
  }
} catch (err) {
  const message = err instanceof ConformanceSetupError ? err.message : ((err as Error).stack ?? String(err));
  process.stderr.write(`conformance failed: ${message}\n`);
}
// The testbed's host processes are stopped; a leftover handle must not keep a finished run waiting.
process.exit(passed ? 0 : 1);
