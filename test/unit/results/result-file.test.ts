// The result files the benchmarks write (hack/results/result-file.ts): named by benchmark and scenario, checked when
// read, and carrying the command that repeats the run.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  commandLine,
  parseResult,
  readResults,
  resultFileName,
  resultOfThisRun,
  writeResult,
  writeTestResult,
} from '../../../hack/results/result-file.ts';

const figures = [{ name: 'p99', value: 1.5, unit: 'ms', atMost: 5 }];

describe('result files: bench/results/<benchmark>-<scenario>.json', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'results-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a run writes its scenario's file with this machine, Node.js, date and load, and a later run replaces it", () => {
    const first = resultOfThisRun({
      benchmark: 'webhook',
      scenario: '10000-objects',
      size: '10,000 objects',
      figures,
      command: 'npm run bench:webhook',
    });
    expect(first.machine.cores).to.be.greaterThan(0);
    expect(first.node).to.equal(process.version);
    expect(first.date).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}Z$/);
    expect(first.load).to.match(/^\d+\.\d \d+\.\d \d+\.\d at the end$/);
    expect(writeResult(first, dir)).to.equal(join(dir, 'webhook-10000-objects.json'));
    writeResult({ ...first, figures: [{ ...figures[0]!, value: 2.5 }] }, dir);
    expect(readdirSync(dir)).to.deep.equal(['webhook-10000-objects.json']);
    expect(readResults(dir)[0]!.figures[0]!.value).to.equal(2.5);
  });

  it('an empty directory writes nothing (an A/B run); a test writes only when BENCH_RESULTS names one', () => {
    const run = resultOfThisRun({ benchmark: 'sync', scenario: '300-services', size: '300', figures });
    expect(writeResult(run, '')).to.equal(undefined);
    expect(writeTestResult(run, {})).to.equal(undefined);
    expect(readdirSync(dir)).to.deep.equal([]);
    expect(writeTestResult(run, { BENCH_RESULTS: dir })).to.equal(join(dir, 'sync-300-services.json'));
  });

  it('refuses a file whose name is not its benchmark and scenario, or that lacks what a table needs', () => {
    const ok = {
      benchmark: 'sync',
      scenario: '300-services',
      size: '300',
      date: '2026-12-02',
      machine: {},
      command: 'npm run bench:sync',
      figures,
    };
    expect(parseResult(resultFileName('sync', '300-services'), JSON.stringify(ok)).scenario).to.equal('300-services');
    expect(() => parseResult('sync-1000-services.json', JSON.stringify(ok))).to.throw(
      /should be named sync-300-services.json/,
    );
    expect(() => parseResult('sync-300-services.json', JSON.stringify({ ...ok, figures: [] }))).to.throw(/no figures/);
    expect(() => parseResult('sync-300-services.json', JSON.stringify({ ...ok, command: undefined }))).to.throw(
      /no command/,
    );
    expect(() =>
      parseResult('sync-300-services.json', JSON.stringify({ ...ok, figures: [{ name: 'x', value: '1', unit: 's' }] })),
    ).to.throw(/numeric value/);
    expect(() => parseResult('sync-300 services.json', JSON.stringify({ ...ok, scenario: '300 services' }))).to.throw(
      /lower-case words/,
    );
    writeFileSync(join(dir, 'sync-1000-services.json'), JSON.stringify(ok));
    expect(() => readResults(dir)).to.throw(/sync-1000-services.json: should be named/);
  });

  it('the command repeats the run: npm run <script> -- <args> under npm, quoted for the shell', () => {
    expect(
      commandLine(['--services=300', '--worker-env=MCS_A=1;MCS_B=2'], { npm_lifecycle_event: 'bench:sync' }),
    ).to.equal("npm run bench:sync -- --services=300 '--worker-env=MCS_A=1;MCS_B=2'");
    expect(commandLine([], { npm_lifecycle_event: 'bench:webhook' })).to.equal('npm run bench:webhook');
    expect(commandLine(["--node-args=--a 'b'"], {}, 'bench/webhook.ts')).to.equal(
      `node bench/webhook.ts '--node-args=--a '\\''b'\\'''`,
    );
  });
});
