// Mocha root hooks (loaded with --require, see .mocharc.json): stop the shared ClusterSet after the run, keeping its
// logs when any test failed, and repeat which tests a missing prerequisite skipped (prerequisites.ts). Under the lane
// runner (hack/test-lanes.ts) they also write how long each spec file took, to deal the next run's lanes evenly.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Context } from 'mocha';
import { stopSharedClusterSet } from './clusterset.ts';
import { skippedPrerequisites } from './prerequisites.ts';

let failed = false;
/** Seconds per spec file: the time from the previous file's last test to this file's last, so its hooks count too. */
const fileSeconds: Record<string, number> = {};
let lastTestEnded = Date.now();

export const mochaHooks = {
  afterEach(this: Context): void {
    if (this.currentTest?.state === 'failed') failed = true;
    const file = this.currentTest?.file;
    const now = Date.now();
    if (file) {
      const key = relative(process.cwd(), file);
      fileSeconds[key] = (fileSeconds[key] ?? 0) + (now - lastTestEnded) / 1000;
    }
    lastTestEnded = now;
  },
  async afterAll(this: Context): Promise<void> {
    this.timeout(30_000);
    await stopSharedClusterSet(failed);
    if (process.env.MCS_TEST_DURATIONS_FILE)
      writeFileSync(process.env.MCS_TEST_DURATIONS_FILE, JSON.stringify(fileSeconds));
    const skips = skippedPrerequisites();
    if (skips) console.log(`\n${skips}`);
  },
};
