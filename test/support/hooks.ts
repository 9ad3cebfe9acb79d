// Mocha root hooks (loaded with --require, see .mocharc.json): stop the shared ClusterSet after the run, keeping its
// logs when any test failed.
import type { Context } from 'mocha';
import { stopSharedClusterSet } from './clusterset.ts';

let failed = false;

export const mochaHooks = {
  afterEach(this: Context): void {
    if (this.currentTest?.state === 'failed') failed = true;
  },
  async afterAll(this: Context): Promise<void> {
    this.timeout(30_000);
    await stopSharedClusterSet(failed);
  },
};
