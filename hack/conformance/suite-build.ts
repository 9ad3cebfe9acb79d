// Builds the upstream MCS API conformance suite (a Go test binary) from its sources into the testbed cache, once per
// version of those sources: the binary's directory is named after a hash of every source file and of the Go version,
// so a warm run finds it and builds nothing. The sources are a test input that we run, never copy into the project.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { cacheDir } from '../testbed/paths.ts';

/** Where CI lays the shared inputs: beside the clone. `MCS_CONFORMANCE_SUITE` names another checkout. */
export const SUITE_ENV = 'MCS_CONFORMANCE_SUITE';
const REPO = resolve(import.meta.dirname, '../..');
const DEFAULT_SUITE = join(REPO, '..', 'shared', 'mcs-api-conformance');

export class ConformanceSetupError extends Error {
  override name = 'ConformanceSetupError';
}

/** The checkout holding the suite's Go module in `conformance/`; throws saying where it looked and how to point elsewhere. */
export function suiteCheckout(env: NodeJS.ProcessEnv = process.env): string {
  const dir = resolve(env[SUITE_ENV] || DEFAULT_SUITE);
  const module = join(dir, 'conformance', 'go.mod');
  if (!existsSync(module)) {
    throw new ConformanceSetupError(
      `the MCS API conformance suite is not at ${dir} (no conformance/go.mod): ` +
        `lay shared/mcs-api-conformance beside the repository, or set ${SUITE_ENV} to a checkout holding conformance/go.mod`,
    );
  }
  return dir;
}

/** The checkout's files, without git's own: an upstream clone's root module is part of the build (`replace => ..`). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f !== '.git' && !f.startsWith(`.git${sep}`) && statSync(join(dir, f)).isFile())
    .sort();
}

/** sha256 of every file of the checkout (path and content) and of the toolchain that builds it. */
export function sourcesHash(checkout: string, goVersion: string): string {
  const hash = createHash('sha256').update(`${goVersion}\n`);
  for (const f of filesUnder(checkout))
    hash
      .update(`${f}\n`)
      .update(readFileSync(join(checkout, f)))
      .update('\n');
  return hash.digest('hex');
}

/** `go version`, or a setup error naming what to install. */
export function goVersion(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return execFileSync('go', ['version'], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    const why =
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'go is not on PATH'
        : `"go version" failed: ${(err as Error).message}`;
    throw new ConformanceSetupError(
      `${why}; the conformance suite is a Go test binary built from source: install Go (1.23 or newer, the suite's go.mod; the testbed asks for 1.26)`,
    );
  }
}

export interface SuiteBinary {
  path: string;
  /** The hash that names the build, so a report says exactly which sources ran. */
  hash: string;
  built: boolean;
  buildSeconds?: number;
}

function lastLines(path: string, count: number): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-count).join('\n');
  } catch {
    return '(no build log)';
  }
}

function makeWritable(dir: string): void {
  for (const entry of ['', ...readdirSync(dir, { recursive: true, encoding: 'utf8' })]) {
    const path = join(dir, entry);
    chmodSync(path, statSync(path).mode | 0o200);
  }
}

/** `go test -c` of the suite in a writable copy, logging to `logPath`; rejects with the log's last lines. */
function goTestCompile(srcDir: string, out: string, logPath: string): Promise<void> {
  return new Promise((resolveBuild, reject) => {
    const log = createWriteStream(logPath);
    // -mod=mod: go.sum may need entries for the module proxy's sigs.k8s.io/mcs-api (the suite's README does the same).
    const go = spawn('go', ['test', '-c', '-o', out, '.'], {
      cwd: srcDir,
      env: { ...process.env, GOFLAGS: '-mod=mod', GOWORK: 'off' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    go.stdout.pipe(log);
    go.stderr.pipe(log);
    go.on('error', (err) => reject(new ConformanceSetupError(`could not start go: ${err.message}`)));
    go.on('exit', (code, signal) => {
      log.end(() => {
        if (code === 0) resolveBuild();
        else
          reject(
            new ConformanceSetupError(
              `building the conformance suite failed (${signal ?? `exit code ${code}`}); log ${logPath}, its end:\n${lastLines(logPath, 20)}`,
            ),
          );
      });
    });
  });
}

/** The suite's test binary for these sources, built into the cache unless it is there already. */
export async function suiteBinary(checkout: string, log: (line: string) => void): Promise<SuiteBinary> {
  const hash = sourcesHash(checkout, goVersion());
  const dir = join(cacheDir(), 'conformance-suite', hash.slice(0, 16));
  const path = join(dir, 'mcs-conformance.test');
  if (existsSync(path)) return { path, hash, built: false };
  mkdirSync(dir, { recursive: true });
  log(
    `building the conformance suite from ${relative(process.cwd(), checkout) || checkout} into ${dir} (about 3-4 minutes on 2 cores, Go modules from the module proxy)`,
  );
  const started = Date.now();
  // A copy of the checkout: it may be read-only, and -mod=mod may rewrite go.sum.
  const work = mkdtempSync(join(tmpdir(), 'mcs-conformance-src-'));
  try {
    for (const f of filesUnder(checkout)) {
      mkdirSync(dirname(join(work, f)), { recursive: true });
      cpSync(join(checkout, f), join(work, f));
    }
    makeWritable(work);
    const partial = `${path}.partial`;
    const ticker = setInterval(
      () => log(`  still building after ${Math.round((Date.now() - started) / 1000)} s`),
      60_000,
    );
    try {
      await goTestCompile(join(work, 'conformance'), partial, join(dir, 'build.log'));
    } finally {
      clearInterval(ticker);
    }
    renameSync(partial, path);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const buildSeconds = Math.round((Date.now() - started) / 1000);
  log(`built the conformance suite in ${buildSeconds} s`);
  return { path, hash, built: true, buildSeconds };
}
