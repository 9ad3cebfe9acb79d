// One run of the suite's test binary against a ClusterSet: its flags, and the process, whose whole output goes to a
// log while this prints a line a minute. The binary writes report.yaml (and report.html) into its working directory.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Implementation } from './report.ts';

export interface SuiteRunSpec {
  kubeconfig: string;
  contexts: readonly string[];
  implementation: Implementation;
  labelFilter?: string;
}

/** The suite's command line: verbose Ginkgo, JSON and JUnit reports in the working directory, our identity. */
export function suiteArgs(spec: SuiteRunSpec): string[] {
  const impl = spec.implementation;
  return [
    '-test.v',
    '-test.timeout',
    '90m',
    '-kubeconfig',
    spec.kubeconfig,
    '-contexts',
    spec.contexts.join(','),
    '-ginkgo.v',
    '-ginkgo.no-color',
    '-ginkgo.json-report',
    'report.json',
    '-ginkgo.junit-report',
    'junit.xml',
    '-organization',
    impl.organization,
    '-project',
    impl.project,
    '-version',
    impl.version,
    '-url',
    impl.url,
    ...(spec.labelFilter === undefined ? [] : ['-ginkgo.label-filter', spec.labelFilter]),
  ];
}

/** Cases Ginkgo has finished so far, from its verbose output: each ends with a line starting "•" or "S". */
export function finishedCases(output: string): number {
  return output.split('\n').filter((l) => /^(•|S \[SKIPPED\])/.test(l)).length;
}

export interface SuiteProcess {
  child: ChildProcess;
  /** Resolves with the exit code once the binary exits and report.yaml exists; rejects when it wrote no report. */
  done: Promise<number>;
}

export function startSuite(
  binary: string,
  spec: SuiteRunSpec,
  workDir: string,
  log: (line: string) => void,
): SuiteProcess {
  const logPath = join(workDir, 'suite.log');
  const out = createWriteStream(logPath);
  const child = spawn(binary, suiteArgs(spec), { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const collect = (d: Buffer) => {
    text += d.toString();
    out.write(d);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const started = Date.now();
  const ticker = setInterval(
    () =>
      log(
        `  still running after ${Math.round((Date.now() - started) / 1000)} s, ${finishedCases(text)} case(s) finished (log: ${logPath})`,
      ),
    60_000,
  );
  const done = new Promise<number>((resolve, reject) => {
    child.on('error', (err) => {
      clearInterval(ticker);
      reject(new Error(`could not start the suite binary ${binary}: ${err.message}`));
    });
    child.on('exit', (code, signal) => {
      clearInterval(ticker);
      out.end(() => {
        if (existsSync(join(workDir, 'report.yaml'))) return resolve(code ?? 1);
        const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-20).join('\n');
        reject(
          new Error(
            `the suite exited (${signal ?? `exit code ${code}`}) without writing report.yaml; log ${logPath}, its end:\n${tail}`,
          ),
        );
      });
    });
  });
  return { child, done };
}
