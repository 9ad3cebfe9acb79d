// The testbed's Cloud Map emulator behaves as the Cloud Map API reference and quotas pages document (docs/testbed.md
// cites each behaviour), checked through the real AWS SDK (M6: the rate limits and asynchronous writes the worker
// must survive).
import {
  CreateHttpNamespaceCommand,
  CreateServiceCommand,
  DeleteNamespaceCommand,
  DeleteServiceCommand,
  DeregisterInstanceCommand,
  DiscoverInstancesCommand,
  DiscoverInstancesRevisionCommand,
  GetOperationCommand,
  ListInstancesCommand,
  ListNamespacesCommand,
  ListOperationsCommand,
  ListServicesCommand,
  RegisterInstanceCommand,
  ServiceDiscoveryClient,
  type ServiceDiscoveryClientConfig,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { eventually } from '../../support/eventually.ts';
import { failure } from '../../support/cloudmap.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';

const REGION = 'us-east-1';
/** The realistic mode's operation delay. */
const DELAY_MS = 1000;

function client(
  endpoint: string,
  extra: Partial<ServiceDiscoveryClientConfig> = {},
  accessKeyId = 'testbed',
): ServiceDiscoveryClient {
  return new ServiceDiscoveryClient({
    endpoint,
    region: REGION,
    credentials: { accessKeyId, secretAccessKey: 'testbed' },
    disableHostPrefix: true,
    maxAttempts: 1,
    ...extra,
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('testbed Cloud Map emulator: the documented Cloud Map behaviour through the AWS SDK (M6)', function () {
  this.timeout(60_000);
  let emulator: StandaloneMoto;
  let sd: ServiceDiscoveryClient;

  before(async () => {
    emulator = await startStandaloneMoto();
    sd = client(emulator.endpoint);
  });
  after(async () => {
    sd?.destroy();
    await emulator?.stop();
  });
  beforeEach(() => emulator.reset());

  async function status(operationId: string | undefined): Promise<string | undefined> {
    return (await sd.send(new GetOperationCommand({ OperationId: operationId }))).Operation?.Status;
  }

  async function settled(operationId: string | undefined): Promise<string | undefined> {
    let last: string | undefined;
    await eventually(
      `operation ${operationId} to finish`,
      async () => {
        last = await status(operationId);
        return last === 'SUCCESS' || last === 'FAIL';
      },
      10_000,
    );
    return last;
  }

  async function namespace(name: string): Promise<string> {
    const { OperationId } = await sd.send(new CreateHttpNamespaceCommand({ Name: name }));
    expect(await settled(OperationId)).to.equal('SUCCESS');
    const { Operation } = await sd.send(new GetOperationCommand({ OperationId }));
    return Operation!.Targets!.NAMESPACE!;
  }

  async function service(namespaceId: string, name: string): Promise<string> {
    return (await sd.send(new CreateServiceCommand({ Name: name, NamespaceId: namespaceId }))).Service!.Id!;
  }

  async function register(serviceId: string, instanceId: string, attributes: Record<string, string>): Promise<void> {
    const { OperationId } = await sd.send(
      new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: instanceId, Attributes: attributes }),
    );
    expect(await settled(OperationId)).to.equal('SUCCESS');
  }

  describe('asynchronous operations (API reference: GetOperation, Operation.Status)', () => {
    it('a namespace creation is SUBMITTED, then PENDING, then SUCCESS, and the namespace is listed only then', async () => {
      // Listed many times a second here, far above ListNamespaces' request quota, which is not what is tested.
      await emulator.control.configure({ rates: { ListNamespaces: { rate: 100, burst: 100 } } });
      const { OperationId } = await sd.send(new CreateHttpNamespaceCommand({ Name: 'async-ns' }));
      const seen: (string | undefined)[] = [];
      while (seen.at(-1) !== 'SUCCESS') {
        // Listed first, status second: a namespace that is listed must belong to a finished operation.
        const listed = (await sd.send(new ListNamespacesCommand({}))).Namespaces ?? [];
        const now = await status(OperationId);
        if (listed.length > 0) expect(now).to.equal('SUCCESS');
        if (now !== seen.at(-1)) seen.push(now);
        await sleep(DELAY_MS / 10);
      }
      expect(seen).to.deep.equal(['SUBMITTED', 'PENDING', 'SUCCESS']);
      expect((await sd.send(new ListNamespacesCommand({}))).Namespaces?.map((n) => n.Name)).to.deep.equal(['async-ns']);
    });

    it('a registered instance is discovered only once its operation succeeded; a deregistered one stays until then', async () => {
      const serviceId = await service(await namespace('reads'), 'web');
      const discover = async () =>
        (await sd.send(new DiscoverInstancesCommand({ NamespaceName: 'reads', ServiceName: 'web' }))).Instances?.map(
          (i) => i.InstanceId,
        );
      // Read first, status second: what is read matches what the operation's status says.
      const readThen = async (operationId: string | undefined) => ({
        ids: await discover(),
        status: await status(operationId),
      });
      const registering = await sd.send(
        new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-1', Attributes: { READY: 'true' } }),
      );
      const early = await readThen(registering.OperationId);
      expect(early.ids).to.deep.equal(early.status === 'SUCCESS' ? ['i-1'] : []);
      await settled(registering.OperationId);
      expect(await discover()).to.deep.equal(['i-1']);
      const deregistering = await sd.send(new DeregisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-1' }));
      const late = await readThen(deregistering.OperationId);
      expect(late.ids).to.deep.equal(late.status === 'SUCCESS' ? [] : ['i-1']);
      await settled(deregistering.OperationId);
      expect(await discover()).to.deep.equal([]);
    });

    it('deleting a namespace that still holds a service fails with ResourceInUse; so does a service with instances', async () => {
      const namespaceId = await namespace('in-use');
      const serviceId = await service(namespaceId, 'web');
      await register(serviceId, 'i-1', {});
      expect((await failure(sd.send(new DeleteNamespaceCommand({ Id: namespaceId })))).name).to.equal('ResourceInUse');
      expect((await failure(sd.send(new DeleteServiceCommand({ Id: serviceId })))).name).to.equal('ResourceInUse');
    });

    it('in fast mode (for unit-like tests) every operation is SUCCESS at once', async () => {
      await emulator.control.configure({ mode: 'fast' });
      const { OperationId } = await sd.send(new CreateHttpNamespaceCommand({ Name: 'fast' }));
      expect(await status(OperationId)).to.equal('SUCCESS');
    });
  });

  describe('instances and idempotency (API reference: RegisterInstance, CreatorRequestId, DuplicateRequest)', () => {
    it('RegisterInstance with an existing InstanceId replaces the instance', async () => {
      const serviceId = await service(await namespace('replace'), 'web');
      await register(serviceId, 'i-1', { READY: 'true' });
      await register(serviceId, 'i-1', { READY: 'false' });
      const listed = await sd.send(new ListInstancesCommand({ ServiceId: serviceId }));
      expect(listed.Instances?.map((i) => [i.Id, i.Attributes?.READY])).to.deep.equal([['i-1', 'false']]);
    });

    it('AWS_INSTANCE_IPV4 and AWS_INSTANCE_IPV6 hold an address of their family, both on one instance if need be; anything else is InvalidInput', async () => {
      const serviceId = await service(await namespace('families'), 'web');
      await register(serviceId, 'v6', { AWS_INSTANCE_IPV6: 'fd00:10:244:10::5' });
      await register(serviceId, 'dual', { AWS_INSTANCE_IPV4: '10.244.10.5', AWS_INSTANCE_IPV6: 'fd00:10:244:10::5' });
      const listed = await sd.send(new ListInstancesCommand({ ServiceId: serviceId }));
      expect(
        listed.Instances?.map((i) => [i.Id, i.Attributes?.AWS_INSTANCE_IPV4, i.Attributes?.AWS_INSTANCE_IPV6]).sort(),
      ).to.deep.equal([
        ['dual', '10.244.10.5', 'fd00:10:244:10::5'],
        ['v6', undefined, 'fd00:10:244:10::5'],
      ]);
      for (const Attributes of [
        { AWS_INSTANCE_IPV6: '10.244.10.5' },
        { AWS_INSTANCE_IPV4: 'fd00::5' },
        { AWS_INSTANCE_IPV6: 'fd00::g' },
      ] as Record<string, string>[]) {
        const error = await failure(
          sd.send(new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'bad', Attributes })),
        );
        expect(error.name, JSON.stringify(Attributes)).to.equal('InvalidInput');
        expect(error.message).to.include(Object.keys(Attributes)[0]);
      }
    });

    it('a second write to an instance while its operation is in progress fails with DuplicateRequest naming that operation', async () => {
      const serviceId = await service(await namespace('busy'), 'web');
      const first = await sd.send(
        new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-1', Attributes: { READY: 'true' } }),
      );
      const err = await failure(
        sd.send(
          new RegisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-1', Attributes: { READY: 'false' } }),
        ),
      );
      expect(err.name).to.equal('DuplicateRequest');
      expect(err.DuplicateOperationId).to.equal(first.OperationId);
      expect(err.$metadata?.httpStatusCode).to.equal(400);
    });

    it('a retried request with the same CreatorRequestId gets the same operation; a different request reusing it gets DuplicateRequest', async () => {
      const serviceId = await service(await namespace('retry'), 'web');
      const send = (attributes: Record<string, string>) =>
        sd.send(
          new RegisterInstanceCommand({
            ServiceId: serviceId,
            InstanceId: 'i-1',
            CreatorRequestId: 'request-1',
            Attributes: attributes,
          }),
        );
      const first = await send({ READY: 'true' });
      expect((await send({ READY: 'true' })).OperationId).to.equal(first.OperationId);
      await settled(first.OperationId);
      const err = await failure(send({ READY: 'false' }));
      expect(err.name).to.equal('DuplicateRequest');
      expect(err.DuplicateOperationId).to.equal(first.OperationId);

      const created = await sd.send(new CreateHttpNamespaceCommand({ Name: 'retried-ns', CreatorRequestId: 'ns-1' }));
      expect(
        (await sd.send(new CreateHttpNamespaceCommand({ Name: 'retried-ns', CreatorRequestId: 'ns-1' }))).OperationId,
      ).to.equal(created.OperationId);

      const namespaceId = await namespace('retried-services');
      const createService = () =>
        sd.send(new CreateServiceCommand({ Name: 'web', NamespaceId: namespaceId, CreatorRequestId: 'svc-1' }));
      expect((await createService()).Service?.Id).to.equal((await createService()).Service?.Id); // not ServiceAlreadyExists
    });
  });

  describe('names are unique (API reference: NamespaceAlreadyExists, ServiceAlreadyExists)', () => {
    it('a second namespace of the same name fails with NamespaceAlreadyExists carrying the existing NamespaceId', async () => {
      const namespaceId = await namespace('unique');
      const err = await failure(sd.send(new CreateHttpNamespaceCommand({ Name: 'unique' })));
      expect(err.name).to.equal('NamespaceAlreadyExists');
      expect(err.NamespaceId).to.equal(namespaceId);
    });

    it('a namespace still being created answers DuplicateRequest to a second creation', async () => {
      const first = await sd.send(new CreateHttpNamespaceCommand({ Name: 'racing' }));
      const err = await failure(sd.send(new CreateHttpNamespaceCommand({ Name: 'racing' })));
      expect(err.name).to.equal('DuplicateRequest');
      expect(err.DuplicateOperationId).to.equal(first.OperationId);
    });

    it('CreateService with a name that exists in the namespace fails with ServiceAlreadyExists carrying the existing ServiceId', async () => {
      const namespaceId = await namespace('services');
      const serviceId = await service(namespaceId, 'web');
      const err = await failure(sd.send(new CreateServiceCommand({ Name: 'web', NamespaceId: namespaceId })));
      expect(err.name).to.equal('ServiceAlreadyExists');
      expect(err.ServiceId).to.equal(serviceId);
      expect(await service(await namespace('other'), 'web')).to.not.equal(serviceId);
    });
  });

  describe('filters and paging (API reference: ListNamespaces, ListServices, ListInstances, ListOperations)', () => {
    it('ListNamespaces and ListServices honour their Filters', async () => {
      const a = await namespace('filter-a');
      const b = await namespace('filter-b');
      await namespace('other');
      const byName = await sd.send(
        new ListNamespacesCommand({ Filters: [{ Name: 'NAME', Values: ['filter-a'], Condition: 'EQ' }] }),
      );
      expect(byName.Namespaces?.map((n) => n.Id)).to.deep.equal([a]);
      const byPrefix = await sd.send(
        new ListNamespacesCommand({ Filters: [{ Name: 'NAME', Values: ['filter-'], Condition: 'BEGINS_WITH' }] }),
      );
      expect(byPrefix.Namespaces?.map((n) => n.Id)).to.deep.equal([a, b]);
      await service(a, 'web');
      const inB = await service(b, 'web');
      const services = await sd.send(
        new ListServicesCommand({ Filters: [{ Name: 'NAMESPACE_ID', Values: [b], Condition: 'EQ' }] }),
      );
      expect(services.Services?.map((s) => s.Id)).to.deep.equal([inB]);
      expect(
        (
          await failure(
            sd.send(
              new ListServicesCommand({
                Filters: [{ Name: 'NAMESPACE_ID', Values: [a, b], Condition: 'BEGINS_WITH' }],
              }),
            ),
          )
        ).name,
      ).to.equal('InvalidInput');
    });

    it('List calls return at most MaxResults items (default 100) and a NextToken for the rest', async () => {
      await emulator.control.configure({ mode: 'fast' }); // 130 registrations: their timing is not what is tested here
      const serviceId = await service(await namespace('paged'), 'web');
      for (let n = 0; n < 130; n++) await register(serviceId, `i-${n}`, {});
      const first = await sd.send(new ListInstancesCommand({ ServiceId: serviceId }));
      expect(first.Instances).to.have.length(100);
      const rest = await sd.send(new ListInstancesCommand({ ServiceId: serviceId, NextToken: first.NextToken }));
      expect(rest.Instances).to.have.length(30);
      expect(rest.NextToken).to.equal(undefined);
      const small = await sd.send(
        new ListOperationsCommand({
          MaxResults: 7,
          Filters: [{ Name: 'SERVICE_ID', Values: [serviceId], Condition: 'EQ' }],
        }),
      );
      expect(small.Operations).to.have.length(7);
      expect(small.NextToken).to.be.a('string');
      const ids = (await sd.send(new ListInstancesCommand({ ServiceId: serviceId, MaxResults: 50 }))).Instances?.map(
        (i) => i.Id,
      );
      expect(ids).to.have.length(50);
    });
  });

  it("DiscoverInstancesRevision changes exactly when the service's instances change, and never goes back", async () => {
    const serviceId = await service(await namespace('revision'), 'web');
    const revision = async () =>
      (await sd.send(new DiscoverInstancesRevisionCommand({ NamespaceName: 'revision', ServiceName: 'web' })))
        .InstancesRevision!;
    const seen = [await revision()];
    const step = async (write: () => Promise<void>) => {
      await write();
      seen.push(await revision());
    };
    await step(() => register(serviceId, 'i-1', { READY: 'true' }));
    await step(() => register(serviceId, 'i-2', { READY: 'true' }));
    await step(() => register(serviceId, 'i-2', { READY: 'true' })); // same attributes: no change
    await step(() => register(serviceId, 'i-2', { READY: 'false' }));
    await step(async () => {
      const { OperationId } = await sd.send(new DeregisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'i-2' }));
      await settled(OperationId);
    });
    const [r0, r1, r2, r3, r4, r5] = seen as [number, number, number, number, number, number];
    expect(r1).to.be.above(r0);
    expect(r2).to.be.above(r1);
    expect(r3).to.equal(r2);
    expect(r4).to.be.above(r3);
    expect(r5).to.be.above(r4);
    const discovered = await sd.send(new DiscoverInstancesCommand({ NamespaceName: 'revision', ServiceName: 'web' }));
    expect(discovered.InstancesRevision).to.equal(r5);
  });

  it('discovery by names follows a service deleted and created again under the same name (a new ServiceId)', async () => {
    const namespaceId = await namespace('again');
    const discover = async () =>
      (await sd.send(new DiscoverInstancesCommand({ NamespaceName: 'again', ServiceName: 'web' }))).Instances!.map(
        (i) => i.InstanceId,
      );
    const first = await service(namespaceId, 'web');
    await register(first, 'i-old', {});
    expect(await discover()).to.deep.equal(['i-old']);
    const { OperationId } = await sd.send(new DeregisterInstanceCommand({ ServiceId: first, InstanceId: 'i-old' }));
    await settled(OperationId);
    await sd.send(new DeleteServiceCommand({ Id: first }));
    expect((await failure(discover())).name).to.equal('ServiceNotFound');
    const second = await service(namespaceId, 'web');
    await register(second, 'i-new', {});
    expect(await discover()).to.deep.equal(['i-new']);
  });

  it('discovery by names keeps services of the same name in two namespaces apart and names what is missing', async () => {
    const discover = async (NamespaceName: string, ServiceName: string) =>
      (await sd.send(new DiscoverInstancesCommand({ NamespaceName, ServiceName }))).Instances!.map((i) => i.InstanceId);
    const [a, b] = [await namespace('team-a'), await namespace('team-b')];
    await register(await service(a, 'web'), 'i-a', {});
    expect(await discover('team-a', 'web')).to.deep.equal(['i-a']);
    await register(await service(b, 'web'), 'i-b', {});
    expect(await discover('team-b', 'web')).to.deep.equal(['i-b']);
    expect(await discover('team-a', 'web')).to.deep.equal(['i-a']);
    expect((await failure(discover('team-a', 'api'))).name).to.equal('ServiceNotFound');
    expect((await failure(discover('team-c', 'web'))).name).to.equal('NamespaceNotFound');
  });

  describe('request quotas per account and Region (developer guide: throttling page, service quotas)', () => {
    it('defaults to the documented DiscoverInstances bucket (1,000/s, 2,000 burst) and DiscoverInstancesRevision rate', async () => {
      const { rates, throttling } = await emulator.control.config();
      expect(throttling).to.equal(true);
      expect(rates.DiscoverInstances).to.deep.equal({ rate: 1000, burst: 2000 });
      expect(rates.DiscoverInstancesRevision).to.deep.equal({ rate: 3000, burst: 3000 });
    });

    it('an empty bucket answers DiscoverInstances with RequestLimitExceeded and control-plane APIs with ThrottlingException (HTTP 400)', async () => {
      // Tiny buckets: this machine cannot send 2,000 requests within a second to drain the documented one.
      await emulator.control.configure({
        rates: { DiscoverInstances: { rate: 1, burst: 5 }, ListServices: { rate: 1, burst: 3 } },
      });
      await service(await namespace('quota'), 'web');
      for (let n = 0; n < 5; n++)
        await sd.send(new DiscoverInstancesCommand({ NamespaceName: 'quota', ServiceName: 'web' }));
      const discover = await failure(
        sd.send(new DiscoverInstancesCommand({ NamespaceName: 'quota', ServiceName: 'web' })),
      );
      expect([discover.name, discover.$metadata?.httpStatusCode]).to.deep.equal(['RequestLimitExceeded', 400]);
      for (let n = 0; n < 3; n++) await sd.send(new ListServicesCommand({}));
      const list = await failure(sd.send(new ListServicesCommand({})));
      expect([list.name, list.$metadata?.httpStatusCode]).to.deep.equal(['ThrottlingException', 400]);
      // Another access key of the same account shares the bucket; the refill lets one request through a second later.
      const other = client(emulator.endpoint, {}, 'cluster-2');
      expect((await failure(other.send(new ListServicesCommand({})))).name).to.equal('ThrottlingException');
      await sleep(1100);
      await other.send(new ListServicesCommand({}));
      other.destroy();
    });

    it('resource quotas: instances per service, instances per namespace, namespaces per Region answer ResourceLimitExceeded', async () => {
      await emulator.control.configure({
        quotas: { instancesPerService: 2, instancesPerNamespace: 3, namespacesPerRegion: 2 },
      });
      const namespaceId = await namespace('limits');
      const [web, api] = [await service(namespaceId, 'web'), await service(namespaceId, 'api')];
      await register(web, 'i-1', {});
      await register(web, 'i-2', {});
      await register(web, 'i-2', { READY: 'false' }); // an update needs no room
      expect(
        (await failure(sd.send(new RegisterInstanceCommand({ ServiceId: web, InstanceId: 'i-3', Attributes: {} }))))
          .name,
      ).to.equal('ResourceLimitExceeded');
      await register(api, 'i-1', {});
      expect(
        (await failure(sd.send(new RegisterInstanceCommand({ ServiceId: api, InstanceId: 'i-2', Attributes: {} }))))
          .name,
      ).to.equal('ResourceLimitExceeded');
      await namespace('second');
      expect((await failure(sd.send(new CreateHttpNamespaceCommand({ Name: 'third' })))).name).to.equal(
        'ResourceLimitExceeded',
      );
      await emulator.reset(); // back to the documented quotas
      const { quotas } = await emulator.control.config();
      expect(quotas).to.include({
        instancesPerService: 1000,
        instancesPerNamespace: 2000,
        namespacesPerRegion: 50,
        customAttributesPerInstance: 30,
      });
    });
  });

  describe('the fault switch and the call log', () => {
    it('answers a share of requests with 5xx errors, throttling errors or a timeout, and adds latency, until cleared', async () => {
      await emulator.control.setFaults({ errorRate: 1 });
      const error = await failure(sd.send(new ListNamespacesCommand({})));
      expect(error.name).to.be.oneOf(['InternalFailure', 'ServiceUnavailable']);
      expect(error.$metadata?.httpStatusCode).to.be.oneOf([500, 503]);
      await emulator.control.setFaults({ throttleRate: 1, apis: ['ListServices'] });
      expect((await failure(sd.send(new ListServicesCommand({})))).name).to.equal('ThrottlingException');
      await sd.send(new ListNamespacesCommand({})); // other APIs unaffected
      await emulator.control.setFaults({ latencyMs: 300 });
      const started = Date.now();
      await sd.send(new ListNamespacesCommand({}));
      expect(Date.now() - started).to.be.at.least(300);
      await emulator.control.setFaults({ timeoutRate: 1, timeoutMs: 1000 });
      const impatient = client(emulator.endpoint, {
        requestHandler: { requestTimeout: 200, throwOnRequestTimeout: true },
      });
      expect((await failure(impatient.send(new ListNamespacesCommand({})))).name).to.equal('TimeoutError');
      impatient.destroy();
      await emulator.control.clearFaults();
      await sd.send(new ListNamespacesCommand({}));
    });

    it('counts every request at the wire, per API and outcome and per access key', async () => {
      await emulator.control.resetCalls();
      await emulator.control.configure({ rates: { ListServices: { rate: 1, burst: 1 } } });
      const other = client(emulator.endpoint, {}, 'cluster-2');
      await sd.send(new ListNamespacesCommand({}));
      await sd.send(new ListServicesCommand({}));
      await failure(other.send(new ListServicesCommand({})));
      await failure(other.send(new GetOperationCommand({ OperationId: 'nope' })));
      other.destroy();
      const calls = await emulator.control.calls();
      expect(calls.total).to.equal(4);
      expect(calls.byApi).to.deep.equal({
        ListNamespaces: { ok: 1 },
        ListServices: { ok: 1, throttled: 1 },
        GetOperation: { OperationNotFound: 1 },
      });
      expect(calls.byAccessKey).to.deep.equal({
        testbed: { ListNamespaces: 1, ListServices: 1 },
        'cluster-2': { ListServices: 1, GetOperation: 1 },
      });
    });

    it("logs each request: when, which client (the user agent's app id), which instance of which cluster, outcome", async () => {
      const serviceId = await service(await namespace('log'), 'web');
      const since = Date.now();
      await register(serviceId, 'a', { CLUSTER_ID: 'cls1', AWS_INSTANCE_IPV4: '10.0.0.1' });
      const replica = client(emulator.endpoint, { userAgentAppId: 'cls2-standby' });
      const { OperationId } = await replica.send(
        new DeregisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'a' }),
      );
      expect(await settled(OperationId)).to.equal('SUCCESS');
      await failure(replica.send(new DeregisterInstanceCommand({ ServiceId: serviceId, InstanceId: 'a' })));
      replica.destroy();
      const writes = await emulator.control.requests(since, ['RegisterInstance', 'DeregisterInstance']);
      expect(writes.map((r) => [r.api, r.app, r.instanceId, r.clusterId, r.outcome])).to.deep.equal([
        ['RegisterInstance', '', 'a', 'cls1', 'ok'],
        ['DeregisterInstance', 'cls2-standby', 'a', 'cls1', 'ok'],
        ['DeregisterInstance', 'cls2-standby', 'a', '', 'InstanceNotFound'],
      ]);
      expect(writes.every((r) => r.serviceId === serviceId && r.start * 1000 >= since && r.end >= r.start)).to.equal(
        true,
      );
      expect((await emulator.control.requests(since)).some((r) => r.api === 'GetOperation')).to.equal(true);
    });
  });
});

describe('testbed Cloud Map emulator in the shared ClusterSet', function () {
  const testbed = withClusterSet();

  it('runs in the realistic mode by default (1 s operations, request quotas on)', async () => {
    const config = await testbed().cloudMapControl.config();
    expect({
      mode: config.mode,
      operationDelayMs: config.operationDelayMs,
      throttling: config.throttling,
    }).to.deep.equal({ mode: 'realistic', operationDelayMs: 1000, throttling: true });
  });
});
