// `npm run demo -- --once` replays the tutorial on a fresh ClusterSet and resolves the clusterset name.
import { expectTutorialReplayed, runDemo } from './demo-replay.ts';

describe('demo: the tutorial replayed on a fresh ClusterSet', function () {
  this.timeout(240_000);

  it('replays the tutorial, resolves nginx-hello.demo.svc.clusterset.local to the ServiceImport IP, and leaves no process behind', async () => {
    const { code, out } = await runDemo();
    expectTutorialReplayed(code, out);
  });
});
