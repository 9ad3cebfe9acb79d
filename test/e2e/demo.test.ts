// `npm run demo -- --once --beyond-kubernetes` replays the tutorial on a fresh ClusterSet with real nodes (the clusterset
// name resolves and a pod in cls2 reaches nginx in cls1 through it), then goes past Kubernetes (docs/non-kubernetes.md):
// a host outside every cluster resolves nginx-hello through Cloud Map's DNS records and curls it, and a pod in cls2
// reaches both tasks of an ECS service by its clusterset name. The plain demo's first run is demo-first-run.test.ts.
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { missingDataPathPrerequisites } from '../../hack/testbed/index.ts';
import { requirePrerequisite } from '../support/prerequisites.ts';
import { expectTutorialReplayed, runDemo } from './demo-replay.ts';

describe('demo: the tutorial replayed (E1, D1), then beyond Kubernetes (I9, the DNS namespaces)', function () {
  this.timeout(300_000);
  before(function () {
    const missing = missingDataPathPrerequisites();
    requirePrerequisite(this, "the demo's real nodes", missing.length === 0 ? undefined : missing.join('; '));
  });

  it('replays the tutorial up to the curl from a cls2 pod, then an outside host and an ECS service, and leaves nothing behind', async () => {
    const { code, out } = await runDemo(['--beyond-kubernetes']);
    expectTutorialReplayed(code, out);
    expect(out).to.match(
      /nginx-hello\.demo\.mcs\.demo\.internal → 10\.244\.\S+, 10\.244\.\S+, 10\.244\.\S+ \(the nginx pods of cls1/,
    );
    expect(out).to.match(/✓ Resolve nginx-hello\.demo\.mcs\.demo\.internal from the outside host and curl it/);
    expect(out).to.match(/status\.clusters: .*ecs\.demo-ecs/);
    expect(out).to.include('answered by task-1 and task-2, the ECS tasks');
    // The task servers and the bridge hosts went with the demo.
    const ps = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
    expect(ps).to.not.include("s.end('task=");
    const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    const bridge = /data path: bridge (\S+)/.exec(out)![1]!;
    expect(netns).to.not.include(`${bridge}-host`);
  });
});
