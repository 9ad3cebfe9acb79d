// `npm run demo -- --once` replays the tutorial on a fresh ClusterSet with real nodes: the clusterset name resolves and a
// pod in cls2 reaches nginx in cls1 through it.
import { missingDataPathPrerequisites } from '../../hack/testbed/index.ts';
import { requirePrerequisite } from '../support/prerequisites.ts';
import { expectTutorialReplayed, runDemo } from './demo-replay.ts';

describe('demo: the tutorial replayed (E1, D1)', function () {
  this.timeout(300_000);
  before(function () {
    const missing = missingDataPathPrerequisites();
    requirePrerequisite(this, "the demo's real nodes", missing.length === 0 ? undefined : missing.join('; '));
  });

  it('replays the tutorial, resolves nginx-hello.demo.svc.clusterset.local to the ServiceImport IP, curls it from a cls2 pod (answered by a cls1 pod), and leaves no process behind', async () => {
    const { code, out } = await runDemo();
    expectTutorialReplayed(code, out);
  });
});
