// A test whose prerequisite is missing (a container runtime, a non-loopback address, a download): in CI (CI=true, as
// CI services set it) it fails with the reason, so a broken install cannot pass as "skipped"; only a developer's local
// run skips it, and the root hooks (hooks.ts) list every such skip again at the end of the run.
import type { Context } from 'mocha';

const skipped: string[] = [];

/** Why a test that puts a server of this machine behind a Service (hostAddress()) cannot run. */
export const NO_HOST_ADDRESS = 'this machine has no non-loopback IPv4 address to put in the Endpoints';

export function inCi(): boolean {
  return ['true', '1'].includes((process.env.CI ?? '').toLowerCase());
}

/** Returns when `missing` is undefined; otherwise fails the test in CI, or skips it locally saying so. */
export function requirePrerequisite(ctx: Context, what: string, missing: string | undefined): void {
  if (missing === undefined) return;
  if (inCi())
    throw new Error(
      `${what}: prerequisite missing in CI (CI=${process.env.CI}), failing instead of skipping: ${missing}`,
    );
  skipped.push(`${what}: ${missing}`);
  console.log(`      SKIPPED (a local run only; in CI this fails): ${missing}`);
  ctx.skip();
}

/** The skips of this run, loudly, for the end of the run. */
export function skippedPrerequisites(): string | undefined {
  if (skipped.length === 0) return undefined;
  const bar = '!'.repeat(100);
  return [
    bar,
    `!! ${skipped.length} test group(s) SKIPPED for a missing prerequisite; in CI (CI=true) these fail:`,
    ...skipped.map((s) => `!!   ${s}`),
    bar,
  ].join('\n');
}
