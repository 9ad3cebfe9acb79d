// The Cloud Map adapter across AWS accounts on the emulator (its accounts and RAM-style shares) through the real AWS
// SDK: a consumer uses the owner's namespaces by ARN and never creates one, and the owner's cluster never deregisters an
// instance that claims its cluster id but another account registered (C4, M4).
import { expect } from 'chai';
import { OwnershipError } from '../../../src/cloudmap/errors.ts';
import { NamespaceNotSharedError, sameResource } from '../../../src/cloudmap/shared-namespaces.ts';
import type { CloudMapAdapterOptions } from '../../../src/cloudmap/adapter.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';
import { adapterFor, instanceOf, REGION, registerAll, type TestAdapter } from './fixtures.ts';

const A = '111111111111';
const B = '222222222222';

describe('cloudmap adapter across accounts: shared namespaces on the emulator', function () {
  this.timeout(60_000);
  let moto: StandaloneMoto;

  before(async () => {
    moto = await startStandaloneMoto();
  });
  after(async () => {
    await moto?.stop();
  });
  beforeEach(() => moto.reset());

  /** Cluster `clusterId` acting as `account`; listing namespaces is not what these tests measure, so it is not rate limited. */
  function as(account: string, clusterId: string, extra: Partial<CloudMapAdapterOptions> = {}): TestAdapter {
    return adapterFor(moto.endpoint, clusterId, {
      client: { region: REGION, endpoint: moto.endpoint, credentials: moto.control.credentialsFor(account) },
      rateLimits: { ListNamespaces: 100 },
      ...extra,
    });
  }

  it("a consumer never creates a namespace; once shared it uses the owner's by ARN: creates its service, registers, discovers", async () => {
    const owner = as(A, 'cls1', { accountId: A }).adapter;
    const consumer = as(B, 'cls2', { namespaceOwner: A, accountId: B }).adapter;
    const namespaceId = await owner.ensureNamespace('demo');

    const refused = await consumer.ensureNamespace('demo').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(NamespaceNotSharedError);
    expect((refused as Error).message).to.include('"demo" of account 111111111111 is not shared');
    expect(await consumer.discoverInstances('demo', 'web')).to.equal(undefined); // not visible: no error, nothing read

    await moto.control.shareNamespace({ ownerAccount: A, region: REGION, namespaceId, withAccounts: [B] });
    const namespaceArn = await consumer.ensureNamespace('demo');
    expect(namespaceArn).to.match(/^arn:aws:servicediscovery:us-east-1:111111111111:namespace\//);
    expect(sameResource(namespaceArn, namespaceId)).to.equal(true);
    const serviceArn = await consumer.ensureService(namespaceArn, 'web');
    expect(serviceArn).to.match(/^arn:aws:servicediscovery:us-east-1:111111111111:service\//);
    // Its operations live in the owner's account: waited for with GetOperation and OwnerAccount.
    await registerAll(consumer, serviceArn, [instanceOf('cls2', 'tcp-10.0.0.2-80-b')]);
    expect((await consumer.discoverInstances('demo', 'web'))?.instances.map((i) => i.id)).to.deep.equal([
      'tcp-10.0.0.2-80-b',
    ]);

    // The owner finds the same service and sees the consumer's instance next to its own.
    const serviceId = await owner.ensureService(namespaceId, 'web');
    expect(sameResource(serviceArn, serviceId)).to.equal(true);
    await registerAll(owner, serviceId, [instanceOf('cls1', 'tcp-10.0.0.1-80-a')]);
    expect((await owner.discoverInstances('demo', 'web'))?.instances.map((i) => i.id).sort()).to.deep.equal([
      'tcp-10.0.0.1-80-a',
      'tcp-10.0.0.2-80-b',
    ]);
    for (const a of [owner, consumer]) a.destroy();
  });

  it("a consumer never deletes the owner's namespace, even emptied and with namespace clean-up on", async () => {
    const owner = as(A, 'cls1', { accountId: A }).adapter;
    const namespaceId = await owner.ensureNamespace('demo');
    await moto.control.shareNamespace({ ownerAccount: A, region: REGION, namespaceId, withAccounts: [B] });
    const { adapter: consumer, calls } = as(B, 'cls2', { namespaceOwner: A, accountId: B });
    const namespaceArn = await consumer.ensureNamespace('demo');
    expect(await consumer.deleteServiceIfEmpty(await consumer.ensureService(namespaceArn, 'web'))).to.equal(true);
    expect(await consumer.deleteNamespaceIfEmpty(namespaceArn)).to.equal(false);
    expect(calls.count('DeleteNamespace')).to.equal(0);
    expect((await owner.listNamespaces()).map((n) => n.name)).to.include('demo');
    for (const a of [owner, consumer]) a.destroy();
  });

  it("C4, M4: an instance claiming the owner's cluster id that another account registered is never deregistered by it", async () => {
    const owner = as(A, 'cls1', { accountId: A }).adapter;
    const namespaceId = await owner.ensureNamespace('demo');
    const serviceId = await owner.ensureService(namespaceId, 'web');
    await moto.control.shareNamespace({ ownerAccount: A, region: REGION, namespaceId, withAccounts: [B] });
    // A second cluster that claims the id cls1, in account B.
    const duplicate = as(B, 'cls1', { namespaceOwner: A }).adapter;
    const serviceArn = await duplicate.ensureService(await duplicate.ensureNamespace('demo'), 'web');
    await registerAll(duplicate, serviceArn, [instanceOf('cls1', 'tcp-10.0.0.9-80-x')]);

    const refused = await owner.deregisterInstances(serviceId, ['tcp-10.0.0.9-80-x']).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).to.be.instanceOf(OwnershipError);
    expect((refused as Error).message).to.match(
      /account 222222222222 registered it, not this cluster's account 111111111111.*C4/,
    );
    expect((await owner.listInstances(serviceId)).map((i) => i.id)).to.deep.equal(['tcp-10.0.0.9-80-x']);
    // Its own instances it still deregisters.
    await registerAll(owner, serviceId, [instanceOf('cls1', 'tcp-10.0.0.1-80-a')]);
    await owner.waitForOperations(await owner.deregisterInstances(serviceId, ['tcp-10.0.0.1-80-a']));
    expect((await owner.listInstances(serviceId)).map((i) => i.id)).to.deep.equal(['tcp-10.0.0.9-80-x']);
    for (const a of [owner, duplicate]) a.destroy();
  });
});
