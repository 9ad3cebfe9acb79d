// `npm run conformance` says plainly what is wrong before any testbed starts: the suite's sources missing, Go
// missing, or the suite failing to build (with the end of the build log). The full suite run is `npm run
// conformance` itself, not part of the test suite.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suiteBinary } from '../../../hack/conformance/suite-build.ts';

const SCRIPT = join(import.meta.dirname, '..', '..', '..', 'hack', 'conformance.ts');
const exec = promisify(execFile);

async function conformance(env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [SCRIPT], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('npm run conformance: setup errors', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcs-conformance-setup-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('names where it looked for the suite and how to point elsewhere', async () => {
    const { code, out } = await conformance({ MCS_CONFORMANCE_SUITE: dir });
    expect(code).to.equal(1);
    expect(out).to.contain(
      `conformance failed: the MCS API conformance suite is not at ${dir} (no conformance/go.mod)`,
    );
    expect(out).to.contain('set MCS_CONFORMANCE_SUITE');
    expect(out, 'a setup error is one line of advice, not a stack').to.not.match(/\n\s+at /);
  });

  it('says Go is needed when it is not on PATH', async () => {
    mkdirSync(join(dir, 'conformance'));
    writeFileSync(join(dir, 'conformance', 'go.mod'), 'module example.com/conformance\n\ngo 1.23\n');
    const { code, out } = await conformance({ MCS_CONFORMANCE_SUITE: dir, PATH: '/nonexistent' });
    expect(code).to.equal(1);
    expect(out).to.contain(
      'conformance failed: go is not on PATH; the conformance suite is a Go test binary built from source: install Go',
    );
  });

  it('fails a broken build with the end of its log, and caches nothing', async () => {
    const checkout = join(dir, 'suite');
    mkdirSync(join(checkout, 'conformance'), { recursive: true });
    writeFileSync(join(checkout, 'conformance', 'go.mod'), 'module example.com/conformance\n\ngo 1.23\n');
    writeFileSync(
      join(checkout, 'conformance', 'suite_test.go'),
      'package conformance\n\nfunc TestBroken(t *testing.T) { this is not Go }\n',
    );
    const cache = join(dir, 'cache');
    const before = process.env.MCS_CLOUDMAP_CACHE;
    process.env.MCS_CLOUDMAP_CACHE = cache;
    try {
      const lines: string[] = [];
      const error = await suiteBinary(checkout, (l) => lines.push(l)).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(error?.message).to.match(
        /^building the conformance suite failed \(exit code 1\); log .*build\.log, its end:\n/,
      );
      expect(error?.message).to.contain('suite_test.go:3');
      expect(lines[0]).to.match(/^building the conformance suite from /);
      const [built] = readdirSync(join(cache, 'conformance-suite'));
      expect(
        readdirSync(join(cache, 'conformance-suite', built!)),
        'only the log, no binary to be found next time',
      ).to.deep.equal(['build.log']);
    } finally {
      if (before === undefined) delete process.env.MCS_CLOUDMAP_CACHE;
      else process.env.MCS_CLOUDMAP_CACHE = before;
    }
  });
});
