// A Cloud Map namespace shared with services that are not ours (made by hand, by ECS or by the AWS controller v0.3.1:
// no description). cls1 exports Services of the same names, so its worker registers into those services, then
// unexports them: its instances go, but neither the foreign empty service nor the foreign one with instances is
// deleted. A service the worker created itself in the same namespace is deleted, so the delete path did run
// (docs/design.md, "What the worker deletes"). The foreign instance is registered only after that delete: an instance
// without our markers anywhere makes the worker keep every empty service (M3, a writer that caches services).
//
// Shown to fail: without the description check in CloudMapRegistry.deleteServiceIfEmpty, the empty foreign service
// `web` is deleted and the first assertion after the unexport fails.
import {
  CreateHttpNamespaceCommand,
  CreateServiceCommand,
  ListInstancesCommand,
  ListServicesCommand,
  RegisterInstanceCommand,
  ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { cloudMapClientConfig, operationDone } from '../support/cloudmap.ts';
import { withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, exportReady, runApp } from '../support/workloads.ts';

const NS = 'e2e-foreign';
const FOREIGN_INSTANCE = 'ecs-task-1';

describe('e2e: Cloud Map services that are not ours are never deleted', function () {
  this.timeout(300_000);
  // A ClusterSet of its own: an instance without our markers left in the shared emulator by another suite would make
  // the worker keep its own empty service too (M3), and this test must see that delete happen.
  const e2e = withE2E({ namespaces: [NS], clusterSet: {} });
  let raw: ServiceDiscoveryClient;
  let namespaceId = '';
  const foreign: Record<'web' | 'db', string> = { web: '', db: '' };

  /** name → instance ids of every service of the namespace. */
  async function services(): Promise<Record<string, string[]>> {
    const listed =
      (
        await raw.send(
          new ListServicesCommand({ Filters: [{ Name: 'NAMESPACE_ID', Values: [namespaceId], Condition: 'EQ' }] }),
        )
      ).Services ?? [];
    const out: Record<string, string[]> = {};
    for (const s of listed)
      out[s.Name!] = ((await raw.send(new ListInstancesCommand({ ServiceId: s.Id! }))).Instances ?? [])
        .map((i) => i.Id!)
        .sort();
    return out;
  }

  before(async function () {
    this.timeout(180_000);
    raw = new ServiceDiscoveryClient(cloudMapClientConfig(e2e().cs));
    // As the AWS controller v0.3.1 and the AWS CLI create them: name only, no description.
    namespaceId = (await operationDone(raw, (await raw.send(new CreateHttpNamespaceCommand({ Name: NS }))).OperationId))
      .NAMESPACE!;
    for (const name of ['web', 'db'] as const)
      foreign[name] = (await raw.send(new CreateServiceCommand({ Name: name, NamespaceId: namespaceId }))).Service!.Id!;
    await createNamespaces(e2e().clusters, NS);
  });

  // The foreign objects go with the suite's own emulator, stopped by then.
  after(() => raw.destroy());

  it('uses same-named foreign services while exported, and leaves them (empty or not) when unexported; deletes its own', async () => {
    const { cls1 } = e2e();
    for (const name of ['web', 'db', 'api']) await runApp(cls1, NS, name, 1);
    for (const name of ['web', 'db', 'api']) await exportReady(cls1, NS, name);
    const exported = await services();
    expect(Object.keys(exported).sort()).to.deep.equal(['api', 'db', 'web']);
    expect(exported.web, 'cls1 registered into the foreign service web').to.have.length(1);

    cls1.kubectl(['delete', 'serviceexports', 'web', 'api', '-n', NS, '--timeout=60s']);
    // Our service `api` goes once empty: the same path that would have deleted `web`.
    await eventually('the worker to delete its own Cloud Map service api', async () => !('api' in (await services())));
    expect((await services()).web).to.deep.equal([]);
    expect(readFileSync(cls1.worker.proc.logPath, 'utf8')).to.contain(
      'empty Cloud Map service left in place: mcs-cloudmap did not create it',
    );

    // Another writer's instance beside ours in the foreign service db: unexporting db takes only ours away.
    await operationDone(
      raw,
      (
        await raw.send(
          new RegisterInstanceCommand({
            ServiceId: foreign.db,
            InstanceId: FOREIGN_INSTANCE,
            Attributes: { AWS_INSTANCE_IPV4: '10.99.0.1', AWS_INSTANCE_PORT: '5432' },
          }),
        )
      ).OperationId,
    );
    expect((await services()).db, 'cls1 registered beside the foreign instance')
      .to.have.length(2)
      .and.include(FOREIGN_INSTANCE);
    cls1.kubectl(['delete', 'serviceexports', 'db', '-n', NS, '--timeout=60s']);
    await eventually(
      "cls1's instance of db to be deregistered",
      async () => JSON.stringify((await services()).db) === JSON.stringify([FOREIGN_INSTANCE]),
    );
    expect(await services()).to.deep.equal({ web: [], db: [FOREIGN_INSTANCE] });
  });
});
