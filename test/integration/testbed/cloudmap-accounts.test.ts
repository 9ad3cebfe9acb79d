// The testbed's Cloud Map emulator serves several AWS accounts (one access key per account), shares namespaces
// between them as an AWS RAM resource share does, and keeps Regions apart, as the Cloud Map developer guide
// ("Shared AWS Cloud Map namespaces") and API reference (OwnerAccount, ResourceOwner, CreatedByAccount) describe;
// checked through the real AWS SDK. docs/testbed.md lists what is emulated and what differs.
import {
  CreateHttpNamespaceCommand,
  CreateServiceCommand,
  DeleteNamespaceCommand,
  DiscoverInstancesCommand,
  DiscoverInstancesRevisionCommand,
  GetInstanceCommand,
  GetNamespaceCommand,
  GetOperationCommand,
  GetServiceCommand,
  ListInstancesCommand,
  DeregisterInstanceCommand,
  ListNamespacesCommand,
  ListServicesCommand,
  RegisterInstanceCommand,
  ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { DEFAULT_ACCOUNT } from '../../../hack/testbed/cloudmap-emulator.ts';
import { cloudMapClientConfig, failure, operationDone } from '../../support/cloudmap.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';

const OWNER = '111111111111';
const CONSUMER = '222222222222';
const OUTSIDER = '333333333333';
const EAST = 'us-east-1';
const WEST = 'eu-west-1';

describe('testbed Cloud Map emulator: accounts, shared namespaces and Regions through the AWS SDK', function () {
  this.timeout(60_000);
  let emulator: StandaloneMoto;
  const clients: ServiceDiscoveryClient[] = [];

  /** A client acting as `account` (default: the credentials every other test uses) in `region`. */
  function as(account: string | undefined, region = EAST): ServiceDiscoveryClient {
    const client = new ServiceDiscoveryClient(
      cloudMapClientConfig({ cloudMapEndpoint: emulator.endpoint, region }, { account }),
    );
    clients.push(client);
    return client;
  }

  before(async () => {
    emulator = await startStandaloneMoto();
  });
  after(async () => {
    for (const client of clients) client.destroy();
    await emulator?.stop();
  });
  beforeEach(async () => {
    await emulator.reset();
    // These tests list far more often than ListNamespaces' and ListServices' request quotas allow (0.5/s, 2/s),
    // which is not what they test.
    await emulator.control.configure({
      rates: { ListNamespaces: { rate: 100, burst: 100 }, ListServices: { rate: 100, burst: 100 } },
    });
  });

  /** Creates an HTTP namespace and waits for its operation; returns its id and ARN. */
  async function namespace(client: ServiceDiscoveryClient, name: string): Promise<{ id: string; arn: string }> {
    const { OperationId } = await client.send(new CreateHttpNamespaceCommand({ Name: name }));
    const id = (await operationDone(client, OperationId)).NAMESPACE!;
    const { Namespace } = await client.send(new GetNamespaceCommand({ Id: id }));
    return { id, arn: Namespace!.Arn! };
  }

  async function register(
    client: ServiceDiscoveryClient,
    serviceId: string,
    instanceId: string,
    ownerAccount?: string,
  ): Promise<void> {
    const { OperationId } = await client.send(
      new RegisterInstanceCommand({
        ServiceId: serviceId,
        InstanceId: instanceId,
        Attributes: { AWS_INSTANCE_IPV4: '10.0.0.1' },
      }),
    );
    await operationDone(client, OperationId, ownerAccount);
  }

  const names = async (client: ServiceDiscoveryClient, filters?: ListNamespacesCommand['input']['Filters']) =>
    ((await client.send(new ListNamespacesCommand({ Filters: filters }))).Namespaces ?? []).map((n) => [
      n.Name,
      n.ResourceOwner,
    ]);

  describe('accounts: one access key per account', () => {
    it("each account has its own namespaces; credentials not made by credentialsFor act as moto's default account", async () => {
      const owner = as(OWNER);
      const consumer = as(CONSUMER);
      const mine = await namespace(owner, 'team');
      const theirs = await namespace(consumer, 'team'); // names are unique per account and Region only
      expect(mine.arn).to.equal(`arn:aws:servicediscovery:${EAST}:${OWNER}:namespace/${mine.id}`);
      expect(theirs.arn).to.contain(`:${CONSUMER}:namespace/`);
      expect(await names(owner)).to.deep.equal([['team', OWNER]]);
      expect(await names(consumer)).to.deep.equal([['team', CONSUMER]]);
      expect(await names(as(undefined))).to.deep.equal([]);
      await namespace(as(undefined), 'default');
      expect(await names(as(DEFAULT_ACCOUNT))).to.deep.equal([['default', DEFAULT_ACCOUNT]]);
      expect((await failure(consumer.send(new GetNamespaceCommand({ Id: mine.id })))).name).to.equal(
        'NamespaceNotFound',
      );
      const calls = await emulator.control.calls();
      expect(Object.keys(calls.byAccount)).to.include.members([OWNER, CONSUMER, DEFAULT_ACCOUNT]);
    });

    it('request quotas are per account and Region: one drained does not throttle another', async () => {
      await emulator.control.configure({ rates: { ListServices: { rate: 1, burst: 2 } } });
      const owner = as(OWNER);
      for (let n = 0; n < 2; n++) await owner.send(new ListServicesCommand({}));
      expect((await failure(owner.send(new ListServicesCommand({})))).name).to.equal('ThrottlingException');
      await as(CONSUMER).send(new ListServicesCommand({}));
      await as(OWNER, WEST).send(new ListServicesCommand({}));
    });

    it('credentialsFor takes 12-digit account ids only, and needs no registration', async () => {
      expect(() => emulator.control.credentialsFor('1234')).to.throw(/12-digit/);
      const raw = new ServiceDiscoveryClient({
        ...cloudMapClientConfig({ cloudMapEndpoint: emulator.endpoint, region: EAST }),
        credentials: emulator.control.credentialsFor(OUTSIDER),
      });
      clients.push(raw);
      expect((await namespace(raw, 'outside')).arn).to.contain(`:${OUTSIDER}:namespace/`);
    });
  });

  describe('shared namespaces (developer guide: sharing, identifying, stop sharing; API reference: OwnerAccount)', () => {
    it('a consumer lists a namespace shared with it, with ResourceOwner set to the owner, only while it is shared', async () => {
      const owner = as(OWNER);
      const consumer = as(CONSUMER);
      const shared = await namespace(owner, 'clusterset');
      await namespace(consumer, 'local');
      expect(await names(consumer)).to.deep.equal([['local', CONSUMER]]);
      const shares = await emulator.control.shareNamespace({
        ownerAccount: OWNER,
        region: EAST,
        namespaceId: shared.arn,
        withAccounts: [CONSUMER],
      });
      expect(shares).to.deep.equal([
        { ownerAccount: OWNER, region: EAST, namespaceId: shared.id, withAccounts: [CONSUMER] },
      ]);
      const listed = (await consumer.send(new ListNamespacesCommand({}))).Namespaces ?? [];
      expect(listed.map((n) => [n.Name, n.ResourceOwner, n.Arn])).to.deep.equal([
        ['local', CONSUMER, listed[0]!.Arn],
        ['clusterset', OWNER, shared.arn],
      ]);
      expect(
        await names(consumer, [{ Name: 'RESOURCE_OWNER', Values: ['OTHER_ACCOUNTS'], Condition: 'EQ' }]),
      ).to.deep.equal([['clusterset', OWNER]]);
      expect(await names(consumer, [{ Name: 'RESOURCE_OWNER', Values: ['SELF'], Condition: 'EQ' }])).to.deep.equal([
        ['local', CONSUMER],
      ]);
      expect(await names(owner)).to.deep.equal([['clusterset', OWNER]]);
      expect(await names(as(OUTSIDER))).to.deep.equal([]);
      const got = await consumer.send(new GetNamespaceCommand({ Id: shared.arn }));
      expect([got.Namespace?.Id, got.Namespace?.ResourceOwner]).to.deep.equal([shared.id, OWNER]);

      await emulator.control.unshareNamespace({ ownerAccount: OWNER, region: EAST, namespaceId: shared.id });
      expect(await names(consumer)).to.deep.equal([['local', CONSUMER]]);
      expect(await emulator.control.shares()).to.deep.equal([]);
    });

    /** The owner's namespace `clusterset`, shared with the consumer, and service `web` the consumer created in it. */
    async function consumerService() {
      const owner = as(OWNER);
      const consumer = as(CONSUMER);
      const shared = await namespace(owner, 'clusterset');
      await emulator.control.shareNamespace({
        ownerAccount: OWNER,
        region: EAST,
        namespaceId: shared.id,
        withAccounts: [CONSUMER],
      });
      const { Service } = await consumer.send(new CreateServiceCommand({ Name: 'web', NamespaceId: shared.arn }));
      return { owner, consumer, shared, Service };
    }

    it('a consumer creates services and registers instances in it by ARN; CreatedByAccount records who did', async () => {
      const { owner, consumer, shared, Service } = await consumerService();
      expect(Service?.Arn).to.equal(`arn:aws:servicediscovery:${EAST}:${OWNER}:service/${Service?.Id}`);
      expect([Service?.NamespaceId, Service?.ResourceOwner, Service?.CreatedByAccount]).to.deep.equal([
        shared.id,
        OWNER,
        CONSUMER,
      ]);
      const exists = await failure(owner.send(new CreateServiceCommand({ Name: 'web', NamespaceId: shared.id })));
      expect([exists.name, exists.ServiceId, exists.ServiceArn]).to.deep.equal([
        'ServiceAlreadyExists',
        Service?.Id,
        Service?.Arn,
      ]);

      // The consumer's write is an operation in the owner's account: found only with OwnerAccount (API GetOperation).
      const { OperationId } = await consumer.send(
        new RegisterInstanceCommand({ ServiceId: Service!.Arn!, InstanceId: 'cls2-pod', Attributes: { A: '1' } }),
      );
      expect((await failure(consumer.send(new GetOperationCommand({ OperationId })))).name).to.equal(
        'OperationNotFound',
      );
      await operationDone(consumer, OperationId, OWNER);
      const { Operation } = await consumer.send(new GetOperationCommand({ OperationId, OwnerAccount: OWNER }));
      expect([Operation?.Status, Operation?.OwnerAccount]).to.deep.equal(['SUCCESS', OWNER]);
      await register(owner, Service!.Id!, 'cls1-pod');

      const byOwner = await owner.send(new ListInstancesCommand({ ServiceId: Service!.Id! }));
      const byConsumer = await consumer.send(new ListInstancesCommand({ ServiceId: Service!.Arn! }));
      for (const listed of [byOwner, byConsumer]) {
        expect(listed.ResourceOwner).to.equal(OWNER);
        expect(listed.Instances?.map((i) => [i.Id, i.CreatedByAccount])).to.deep.equal([
          ['cls2-pod', CONSUMER],
          ['cls1-pod', OWNER],
        ]);
      }
      expect((await owner.send(new GetServiceCommand({ Id: Service!.Id! }))).Service?.CreatedByAccount).to.equal(
        CONSUMER,
      );
      const got = await consumer.send(new GetInstanceCommand({ ServiceId: Service!.Arn!, InstanceId: 'cls1-pod' }));
      expect([got.ResourceOwner, got.Instance?.CreatedByAccount]).to.deep.equal([OWNER, OWNER]);
    });

    it("the request log names the cluster of an instance a consumer deregisters by the service's ARN", async () => {
      const { consumer, Service } = await consumerService();
      const registered = await consumer.send(
        new RegisterInstanceCommand({
          ServiceId: Service!.Arn!,
          InstanceId: 'cls2-pod',
          Attributes: { CLUSTER_ID: 'cls2' },
        }),
      );
      await operationDone(consumer, registered.OperationId, OWNER);
      const since = Date.now();
      const { OperationId } = await consumer.send(
        new DeregisterInstanceCommand({ ServiceId: Service!.Arn!, InstanceId: 'cls2-pod' }),
      );
      await operationDone(consumer, OperationId, OWNER);
      const log = await emulator.control.requests(since, ['DeregisterInstance']);
      expect(log.map((r) => [r.instanceId, r.clusterId, r.outcome])).to.deep.equal([['cls2-pod', 'cls2', 'ok']]);
    });

    it('the consumer reads with OwnerAccount or ARNs; plain ids and names mean its own account', async () => {
      const owner = as(OWNER);
      const consumer = as(CONSUMER);
      const shared = await namespace(owner, 'clusterset');
      await emulator.control.shareNamespace({
        ownerAccount: OWNER,
        region: EAST,
        namespaceId: shared.id,
        withAccounts: [CONSUMER, OUTSIDER],
      });
      const { Service } = await owner.send(new CreateServiceCommand({ Name: 'web', NamespaceId: shared.id }));
      await register(owner, Service!.Id!, 'cls1-pod');

      const discover = { NamespaceName: 'clusterset', ServiceName: 'web' };
      expect((await failure(consumer.send(new DiscoverInstancesCommand(discover)))).name).to.equal('NamespaceNotFound');
      const found = await consumer.send(new DiscoverInstancesCommand({ ...discover, OwnerAccount: OWNER }));
      expect(found.Instances?.map((i) => i.InstanceId)).to.deep.equal(['cls1-pod']);
      const revision = await consumer.send(new DiscoverInstancesRevisionCommand({ ...discover, OwnerAccount: OWNER }));
      expect(revision.InstancesRevision).to.equal(
        (await owner.send(new DiscoverInstancesRevisionCommand(discover))).InstancesRevision,
      );
      expect((await failure(consumer.send(new GetNamespaceCommand({ Id: shared.id })))).name).to.equal(
        'NamespaceNotFound',
      );
      expect((await failure(consumer.send(new GetServiceCommand({ Id: Service!.Id! })))).name).to.equal(
        'ServiceNotFound',
      );
      expect((await consumer.send(new GetServiceCommand({ Id: Service!.Arn! }))).Service?.ResourceOwner).to.equal(
        OWNER,
      );

      const services = async (filters: ListServicesCommand['input']['Filters']) =>
        ((await consumer.send(new ListServicesCommand({ Filters: filters }))).Services ?? []).map((s) => [
          s.Arn,
          s.ResourceOwner,
          s.CreatedByAccount,
        ]);
      const web = [[Service!.Arn, OWNER, OWNER]];
      expect(await services(undefined)).to.deep.equal(web);
      expect(await services([{ Name: 'NAMESPACE_ID', Values: [shared.arn], Condition: 'EQ' }])).to.deep.equal(web);
      expect(await services([{ Name: 'NAMESPACE_ID', Values: [shared.id], Condition: 'EQ' }])).to.deep.equal([]);
      expect(await services([{ Name: 'RESOURCE_OWNER', Values: ['OTHER_ACCOUNTS'], Condition: 'EQ' }])).to.deep.equal(
        web,
      );
      expect(await services([{ Name: 'RESOURCE_OWNER', Values: ['SELF'], Condition: 'EQ' }])).to.deep.equal([]);
    });

    it('a namespace not (or no longer) shared answers AccessDeniedException; what consumers created stays with the owner', async () => {
      const owner = as(OWNER);
      const consumer = as(CONSUMER);
      const shared = await namespace(owner, 'clusterset');
      expect(
        (await failure(consumer.send(new CreateServiceCommand({ Name: 'web', NamespaceId: shared.arn })))).name,
      ).to.equal('AccessDeniedException');
      await emulator.control.shareNamespace({
        ownerAccount: OWNER,
        region: EAST,
        namespaceId: shared.id,
        withAccounts: [CONSUMER],
      });
      const denied = await failure(consumer.send(new DeleteNamespaceCommand({ Id: shared.arn })));
      expect([denied.name, denied.$metadata?.httpStatusCode]).to.deep.equal(['AccessDeniedException', 400]);
      const { Service } = await consumer.send(new CreateServiceCommand({ Name: 'web', NamespaceId: shared.arn }));
      const { OperationId } = await consumer.send(
        new RegisterInstanceCommand({ ServiceId: Service!.Arn!, InstanceId: 'cls2-pod', Attributes: {} }),
      );
      await operationDone(consumer, OperationId, OWNER);
      expect((await failure(as(OUTSIDER).send(new ListInstancesCommand({ ServiceId: Service!.Arn! })))).name).to.equal(
        'AccessDeniedException',
      );

      await emulator.control.unshareNamespace({
        ownerAccount: OWNER,
        region: EAST,
        namespaceId: shared.id,
        withAccounts: [CONSUMER],
      });
      const refused = [
        () =>
          consumer.send(
            new RegisterInstanceCommand({ ServiceId: Service!.Arn!, InstanceId: 'cls2-pod', Attributes: { A: '2' } }),
          ),
        () => consumer.send(new ListInstancesCommand({ ServiceId: Service!.Arn! })),
        () =>
          consumer.send(
            new DiscoverInstancesCommand({ NamespaceName: 'clusterset', ServiceName: 'web', OwnerAccount: OWNER }),
          ),
        () => consumer.send(new GetOperationCommand({ OperationId, OwnerAccount: OWNER })),
        () => consumer.send(new GetNamespaceCommand({ Id: shared.arn })),
      ];
      for (const call of refused) expect((await failure(call())).name).to.equal('AccessDeniedException');
      expect((await consumer.send(new ListServicesCommand({}))).Services).to.deep.equal([]);
      const kept = await owner.send(new ListInstancesCommand({ ServiceId: Service!.Id! }));
      expect(kept.Instances?.map((i) => [i.Id, i.CreatedByAccount])).to.deep.equal([['cls2-pod', CONSUMER]]);
    });

    it('only the owner can share a namespace, and only one whose creation finished', async () => {
      const owner = as(OWNER);
      const shared = await namespace(owner, 'clusterset');
      const notOwner = emulator.control.shareNamespace({
        ownerAccount: CONSUMER,
        region: EAST,
        namespaceId: shared.id,
        withAccounts: [OUTSIDER],
      });
      expect((await failure(notOwner)).message).to.match(/HTTP 400.*has no namespace/);
      const wrongArn = emulator.control.shareNamespace({
        ownerAccount: CONSUMER,
        region: EAST,
        namespaceId: shared.arn,
        withAccounts: [OUTSIDER],
      });
      expect((await failure(wrongArn)).message).to.match(/HTTP 400.*not a namespace of account/);
      const { OperationId } = await owner.send(new CreateHttpNamespaceCommand({ Name: 'still-creating' }));
      const { Operation } = await owner.send(new GetOperationCommand({ OperationId }));
      const early = emulator.control.shareNamespace({
        ownerAccount: OWNER,
        region: EAST,
        namespaceId: Operation!.Targets!.NAMESPACE!,
        withAccounts: [CONSUMER],
      });
      expect((await failure(early)).message).to.match(/creation has not finished/);
    });
  });

  describe('Regions', () => {
    it('each Region has its own state, shares included', async () => {
      const east = as(OWNER, EAST);
      const west = as(OWNER, WEST);
      const inEast = await namespace(east, 'clusterset');
      const inWest = await namespace(west, 'clusterset');
      expect(inWest.arn).to.equal(`arn:aws:servicediscovery:${WEST}:${OWNER}:namespace/${inWest.id}`);
      expect((await east.send(new ListNamespacesCommand({}))).Namespaces?.map((n) => n.Id)).to.deep.equal([inEast.id]);
      expect((await west.send(new ListNamespacesCommand({}))).Namespaces?.map((n) => n.Id)).to.deep.equal([inWest.id]);
      expect((await failure(west.send(new GetNamespaceCommand({ Id: inEast.arn })))).name).to.equal('InvalidInput');
      await emulator.control.shareNamespace({
        ownerAccount: OWNER,
        region: WEST,
        namespaceId: inWest.id,
        withAccounts: [CONSUMER],
      });
      expect(await names(as(CONSUMER, WEST))).to.deep.equal([['clusterset', OWNER]]);
      expect(await names(as(CONSUMER, EAST))).to.deep.equal([]);
      expect(Object.keys((await emulator.control.calls()).byRegion).sort()).to.deep.equal([WEST, EAST].sort());
      expect((await failure(as(OWNER, 'xx-nowhere-1').send(new ListNamespacesCommand({})))).name).to.equal(
        'UnknownRegion',
      );
    });

    it('the fault switch switches a Region off (connections dropped, as an unreachable endpoint) and on again', async () => {
      const east = as(OWNER, EAST);
      const west = as(OWNER, WEST);
      const inWest = await namespace(west, 'clusterset');
      await emulator.control.setFaults({ regions: [WEST], disconnectRate: 1 });
      const err = await failure(west.send(new ListNamespacesCommand({})));
      // No HTTP answer: the SDK reports a network error, which its retry strategy treats as transient.
      expect([err.code, err.$metadata?.httpStatusCode]).to.deep.equal(['ECONNRESET', undefined]);
      expect((await failure(as(CONSUMER, WEST).send(new GetNamespaceCommand({ Id: inWest.id })))).code).to.equal(
        'ECONNRESET',
      );
      await namespace(east, 'still-up');
      await emulator.control.clearFaults();
      expect((await west.send(new ListNamespacesCommand({}))).Namespaces?.map((n) => n.Id)).to.deep.equal([inWest.id]);
      expect((await emulator.control.calls()).byApi.ListNamespaces).to.deep.include({ fault: 1 });
    });

    it('the fault switch can target one account', async () => {
      await emulator.control.setFaults({ accounts: [CONSUMER], errorRate: 1 });
      const err = await failure(as(CONSUMER).send(new ListNamespacesCommand({})));
      expect(err.$metadata?.httpStatusCode).to.be.oneOf([500, 503]);
      await as(OWNER).send(new ListNamespacesCommand({}));
    });
  });
});
