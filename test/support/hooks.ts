// Mocha root hooks (loaded with --require, see .mocharc.json): stop the shared ClusterSet after the run, keeping its
// logs when any test failed, and repeat which tests a missing prerequisite skipped (prerequisites.ts).
import type { Context } from 'mocha';
import { stopSharedClusterSet } from './clusterset.ts';
import { skippedPrerequisites } from './prerequisites.ts';

let failed = false;

export const mochaHooks = {
  afterEach(this: Context): void {
    if (this.currentTest?.state === 'failed') failed = true;
  },
  async afterAll(this: Context): Promise<void> {
    this.timeout(30_000);
    await stopSharedClusterSet(failed);
    const skips = skippedPrerequisites();
    if (skips) console.log(`\n${skips}`);
  },
};
