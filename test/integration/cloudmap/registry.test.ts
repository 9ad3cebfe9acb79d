// The Cloud Map adapter against the emulator (realistic mode: asynchronous operations, uniqueness, quotas) through the
// real AWS SDK: namespaces, services, instances, operations and the ownership guard.
import {
  CreateHttpNamespaceCommand,
  CreateServiceCommand,
  DeleteServiceCommand,
  DeregisterInstanceCommand,
  GetNamespaceCommand,
  GetServiceCommand,
  ListInstancesCommand,
  RegisterInstanceCommand,
  ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { OperationsFailedError, OwnershipError } from '../../../src/cloudmap/errors.ts';
import { NAMESPACE_OPERATION_POLL_MS } from '../../../src/cloudmap/registry.ts';
import { operationDone } from '../../support/cloudmap.ts';
import { RecordingClock } from '../../support/fake-clock.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';
import { adapterFor, instanceOf, rawClient, registerAll } from './fixtures.ts';

describe('cloudmap adapter on the emulator: registry and instances', function () {
  this.timeout(60_000);
  let moto: StandaloneMoto;
  let raw: ServiceDiscoveryClient;

  before(async () => {
    // S4 is about services past Cloud Map's 1,000 instances (registered before the quota, or by another tool): off here.
    moto = await startStandaloneMoto({ quotas: { instancesPerService: 0 } });
    raw = rawClient(moto.endpoint);
  });
  after(async () => {
    raw?.destroy();
    await moto?.stop();
  });
  beforeEach(() => moto.reset());

  it('M1: ensureNamespace and ensureService are idempotent and two concurrent creators converge on one', async () => {
    const a = adapterFor(moto.endpoint, 'cls1').adapter;
    const b = adapterFor(moto.endpoint, 'cls2').adapter;
    const [nsA, nsB] = await Promise.all([a.ensureNamespace('demo'), b.ensureNamespace('demo')]);
    expect(nsA).to.equal(nsB);
    expect(await a.ensureNamespace('demo')).to.equal(nsA);
    expect(await adapterFor(moto.endpoint, 'cls3').adapter.ensureNamespace('demo')).to.equal(nsA);

    const [svcA, svcB] = await Promise.all([a.ensureService(nsA, 'web'), b.ensureService(nsA, 'web')]);
    expect(svcA).to.equal(svcB);
    expect(await b.ensureService(nsA, 'web')).to.equal(svcA);
    expect((await a.listServices(nsA)).filter((s) => s.name === 'web').map((s) => s.id)).to.deep.equal([svcA]);
    // A same-named service in another namespace is a different service.
    const other = await a.ensureNamespace('other');
    expect(await a.ensureService(other, 'web')).to.not.equal(svcA);
    expect((await a.listServices(nsA)).map((s) => s.name)).to.deep.equal(['web']);
  });

  it("M1, M7: a new namespace is known from its creation's operation, polled closely, without a ListNamespaces", async () => {
    const clocks = { a: new RecordingClock(), b: new RecordingClock() };
    const a = adapterFor(moto.endpoint, 'cls1', { clock: clocks.a });
    const b = adapterFor(moto.endpoint, 'cls2', { clock: clocks.b });
    await Promise.all([a.adapter.listNamespaces(), b.adapter.listNamespaces()]); // both start knowing every namespace
    a.calls.reset();
    b.calls.reset();
    let waits = 0;
    // cls2 asks while cls1's creation runs: it waits for that operation (DuplicateRequest) instead of creating another.
    const [created, joined] = await Promise.all([
      a.adapter.ensureNamespace('fresh', () => waits++),
      b.adapter.ensureNamespace('fresh', () => waits++),
    ]);
    expect(joined).to.equal(created);
    expect(waits).to.equal(2);
    expect(a.calls.byApi()).to.not.have.property('ListNamespaces');
    expect(b.calls.byApi()).to.not.have.property('ListNamespaces');
    // Polled closely: each GetOperation after a wait of the close interval, not the shared rounds' backoff to 1 s.
    for (const [cluster, calls, clock] of [
      ['cls1', a.calls, clocks.a],
      ['cls2', b.calls, clocks.b],
    ] as const) {
      const polls = calls.count('GetOperation');
      expect(polls, `${cluster}: polls of the creation`).to.be.at.least(1);
      expect(clock.sleeps, `${cluster}: waits`).to.deep.equal(Array(polls).fill(NAMESPACE_OPERATION_POLL_MS));
    }
    // Known now: no wait reported, no call.
    a.calls.reset();
    expect(await a.adapter.ensureNamespace('fresh', () => waits++)).to.equal(created);
    expect(waits).to.equal(2);
    expect(a.calls.byApi()).to.deep.equal({});
  });

  it('M6: a new service costs one CreateService and no listing; a name another cluster created gives its id from ServiceAlreadyExists', async () => {
    const a = adapterFor(moto.endpoint, 'cls1');
    const ns = await a.adapter.ensureNamespace('demo');
    a.calls.reset();
    const created = await Promise.all(Array.from({ length: 8 }, (_, n) => a.adapter.ensureService(ns, `svc-${n}`)));
    expect(new Set(created).size).to.equal(8);
    // The namespace was created here, so it is known to have held nothing else.
    expect(a.calls.byApi()).to.deep.equal({ CreateService: 8 });

    // Cluster 2 listed the namespace once (its start), then cluster 1 creates a service it does not know of.
    const b = adapterFor(moto.endpoint, 'cls2');
    expect(await b.adapter.findNamespace('demo')).to.equal(ns);
    expect(await b.adapter.listServices(ns)).to.have.length(8);
    const late = await a.adapter.ensureService(ns, 'late');
    b.calls.reset();
    expect(await b.adapter.findService(ns, 'late')).to.equal(undefined); // it knows every service of the namespace: no call
    expect(await b.adapter.ensureService(ns, 'late')).to.equal(late);
    expect(await b.adapter.ensureService(ns, 'svc-3')).to.equal(created[3]);
    // The collision says cluster 1 is creating in the namespace: one listing learns what else it created.
    expect(b.calls.byApi()).to.deep.equal({ CreateService: 1, ListServices: 1 });
    expect((await a.adapter.listServices(ns)).filter((s) => s.name === 'late')).to.have.length(1);
  });

  it("M6: creations queued behind the rate limit are not sent once a collision's listing found their names", async () => {
    const a = adapterFor(moto.endpoint, 'cls1');
    const ns = await a.adapter.ensureNamespace('contended');
    // Cluster 2 knew the namespace empty (its start); at 0.2 CreateService a second it has a burst of 2.
    const b = adapterFor(moto.endpoint, 'cls2', { rateLimits: { CreateService: 0.2 } });
    expect(await b.adapter.findNamespace('contended')).to.equal(ns);
    expect(await b.adapter.listServices(ns)).to.have.length(0);
    const created = await Promise.all(Array.from({ length: 6 }, (_, n) => a.adapter.ensureService(ns, `api-${n}`)));
    b.calls.reset();
    const found = await Promise.all(created.map((_, n) => b.adapter.ensureService(ns, `api-${n}`)));
    expect(found).to.deep.equal(created);
    // The burst's two collide; their listing finds the other four, whose queued creations are not sent (without it:
    // six CreateService, four of them 5 s apart).
    expect(b.calls.byApi()).to.deep.equal({ CreateService: 2, ListServices: 1 });
  });

  it("M6: services known to exist (another cluster's instances were read) are found by one listing, not a CreateService each", async () => {
    const a = adapterFor(moto.endpoint, 'cls1');
    const ns = await a.adapter.ensureNamespace('shared');
    const b = adapterFor(moto.endpoint, 'cls2');
    expect(await b.adapter.findNamespace('shared')).to.equal(ns);
    expect(await b.adapter.listServices(ns)).to.have.length(0);
    const created = await Promise.all(Array.from({ length: 6 }, (_, n) => a.adapter.ensureService(ns, `web-${n}`)));
    b.calls.reset();
    const found = await Promise.all(created.map((_, n) => b.adapter.ensureService(ns, `web-${n}`, true)));
    expect(found).to.deep.equal(created);
    expect(b.calls.byApi()).to.deep.equal({ ListServices: 1 });
    // A name the listing does not find is still created.
    expect(await b.adapter.ensureService(ns, 'new-one', true)).to.be.a('string');
    expect(b.calls.byApi()).to.deep.equal({ ListServices: 2, CreateService: 1 });
  });

  it('M2/M5: registers, updates in place, reads back by ClusterSet and deregisters', async () => {
    const { adapter } = adapterFor(moto.endpoint, 'cls1');
    const svc = await adapter.ensureService(await adapter.ensureNamespace('demo'), 'web');
    await registerAll(adapter, svc, [instanceOf('cls1', 'i-1'), instanceOf('cls1', 'i-2')]);
    // Re-registering updates the instance in place.
    await registerAll(adapter, svc, [instanceOf('cls1', 'i-1', { READY: 'false' })]);
    const other = adapterFor(moto.endpoint, 'cls9', { clustersetId: 'another-set' }).adapter;
    await registerAll(other, svc, [
      { id: 'foreign', attributes: { CLUSTER_ID: 'cls9', CLUSTERSET_ID: 'another-set' } },
    ]);

    const listed = await adapter.listInstances(svc);
    expect(listed.map((i) => i.id).sort()).to.deep.equal(['foreign', 'i-1', 'i-2']);
    expect(listed.find((i) => i.id === 'i-1')!.attributes.READY).to.equal('false');
    const discovered = await adapter.discoverInstances('demo', 'web');
    expect(discovered!.instances.map((i) => i.id).sort()).to.deep.equal(['i-1', 'i-2']);
    expect(discovered!.instances.find((i) => i.id === 'i-1')!.attributes.READY).to.equal('false');

    await adapter.waitForOperations(
      (await Promise.all(['i-1', 'i-2'].map((id) => adapter.deregisterInstance(svc, id)))).flat(),
    );
    expect((await adapter.listInstances(svc)).map((i) => i.id)).to.deep.equal(['foreign']);
    expect((await adapter.discoverInstances('demo', 'web'))!.instances).to.deep.equal([]);
    expect(await adapter.deregisterInstance(svc, 'i-2')).to.deep.equal([]);
    expect(await adapter.discoverInstances('demo', 'missing')).to.equal(undefined);
    expect(await adapter.discoverInstances('missing', 'web')).to.equal(undefined);
  });

  it("M4: refuses to register or deregister another cluster's instance, and writes nothing", async () => {
    const a = adapterFor(moto.endpoint, 'cls1').adapter;
    const b = adapterFor(moto.endpoint, 'cls2').adapter;
    const svc = await a.ensureService(await a.ensureNamespace('demo'), 'web');
    await registerAll(b, svc, [instanceOf('cls2', 'tcp-10_0_0_5-80')]);

    const refusedRegister = await a
      .registerInstance(svc, instanceOf('cls2', 'tcp-10_0_0_5-80', { READY: 'false' }))
      .catch((e: unknown) => e);
    expect(refusedRegister).to.be.instanceOf(OwnershipError);
    expect((refusedRegister as Error).message).to.match(
      /refusing to register .*CLUSTER_ID="cls2".* this cluster is "cls1"/,
    );
    const refusedDeregister = await a.deregisterInstance(svc, 'tcp-10_0_0_5-80').catch((e: unknown) => e);
    expect(refusedDeregister).to.be.instanceOf(OwnershipError);
    expect(await a.deregisterInstances(svc, ['tcp-10_0_0_5-80']).catch((e: unknown) => e)).to.be.instanceOf(
      OwnershipError,
    );

    const left = await a.listInstances(svc);
    expect(left).to.have.length(1);
    expect(left[0]!.attributes).to.include({ CLUSTER_ID: 'cls2' });
    expect(left[0]!.attributes).to.not.have.property('READY');
  });

  it('S4: reads back every instance of a service with more than 1000', async () => {
    const { adapter, calls } = adapterFor(moto.endpoint, 'cls1', { rateLimits: { RegisterInstance: 10_000 } });
    const svc = await adapter.ensureService(await adapter.ensureNamespace('big'), 'many');
    const instances = Array.from({ length: 1234 }, (_, n) =>
      instanceOf('cls1', `i-${n}`, { AWS_INSTANCE_IPV4: `10.1.${n >> 8}.${n & 255}` }),
    );
    await moto.control.configure({ throttling: false }); // setting up quickly is not what this test is about
    try {
      await registerAll(adapter, svc, instances);
    } finally {
      await moto.control.configure({ throttling: true });
    }
    calls.reset();
    const discovered = await adapter.discoverInstances('big', 'many');
    expect(discovered!.instances).to.have.length(1234);
    expect(new Set(discovered!.instances.map((i) => i.id)).size).to.equal(1234);
    expect(calls.count('ListInstances')).to.be.at.least(13); // the DiscoverInstances page was full: paged fallback
    expect(await adapter.listInstances(svc)).to.have.length(1234);
  });

  it("reports an operation that failed with Cloud Map's reason", async () => {
    const { adapter } = adapterFor(moto.endpoint, 'cls1');
    const svc = await adapter.ensureService(await adapter.ensureNamespace('demo'), 'web');
    const op = await adapter.registerInstance(svc, instanceOf('cls1', 'orphan'));
    // The service goes while the registration is still pending: the operation fails.
    await raw.send(new DeleteServiceCommand({ Id: svc }));
    const err = await adapter.waitForOperations([op]).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OperationsFailedError);
    expect((err as Error).message).to.match(/instance "orphan".*ServiceNotFound/);
  });

  it('deletes a service or namespace only when it is empty', async () => {
    const { adapter } = adapterFor(moto.endpoint, 'cls1');
    const ns = await adapter.ensureNamespace('cleanup');
    const svc = await adapter.ensureService(ns, 'web');
    await registerAll(adapter, svc, [instanceOf('cls1', 'i-1')]);
    expect(await adapter.deleteServiceIfEmpty(svc)).to.equal(false);
    expect(await adapter.deleteNamespaceIfEmpty(ns)).to.equal(false);
    await adapter.waitForOperations(await adapter.deregisterInstances(svc, ['i-1']));
    expect(await adapter.deleteServiceIfEmpty(svc)).to.equal(true);
    expect(await adapter.deleteNamespaceIfEmpty(ns)).to.equal(true);
    expect(await adapter.findNamespace('cleanup')).to.equal(undefined);
    // Recreated after deletion: the cached ids were dropped.
    const again = await adapter.ensureNamespace('cleanup');
    expect(again).to.not.equal(ns);
    expect(await adapter.ensureService(again, 'web')).to.not.equal(svc);
  });

  it('never deletes a service or namespace it did not create, empty or not (one made by hand, by ECS or by the AWS controller)', async () => {
    // As the AWS controller v0.3.1 and a person with the CLI create them: no description.
    const { NAMESPACE: ns } = await operationDone(
      raw,
      (await raw.send(new CreateHttpNamespaceCommand({ Name: 'shared' }))).OperationId,
    );
    const empty = (await raw.send(new CreateServiceCommand({ Name: 'web', NamespaceId: ns }))).Service!.Id!;
    const busy = (await raw.send(new CreateServiceCommand({ Name: 'db', NamespaceId: ns }))).Service!.Id!;
    await operationDone(
      raw,
      (
        await raw.send(
          new RegisterInstanceCommand({
            ServiceId: busy,
            InstanceId: 'ecs-task-1',
            Attributes: { AWS_INSTANCE_IPV4: '10.9.0.1' },
          }),
        )
      ).OperationId,
    );

    const { adapter, calls } = adapterFor(moto.endpoint, 'cls1');
    expect(await adapter.ensureNamespace('shared')).to.equal(ns);
    expect(await adapter.ensureService(ns!, 'web')).to.equal(empty);
    expect(await adapter.deleteServiceIfEmpty(empty)).to.equal(false);
    expect(await adapter.deleteServiceIfEmpty(busy)).to.equal(false);
    expect(await adapter.deleteNamespaceIfEmpty(ns!)).to.equal(false);
    expect(calls.count('DeleteService') + calls.count('DeleteNamespace')).to.equal(0);
    expect((await raw.send(new GetServiceCommand({ Id: empty }))).Service?.Name).to.equal('web');
    expect((await raw.send(new ListInstancesCommand({ ServiceId: busy }))).Instances?.map((i) => i.Id)).to.deep.equal([
      'ecs-task-1',
    ]);

    // The namespace emptied by its owner: still not ours.
    await operationDone(
      raw,
      (await raw.send(new DeregisterInstanceCommand({ ServiceId: busy, InstanceId: 'ecs-task-1' }))).OperationId,
    );
    for (const id of [empty, busy]) await raw.send(new DeleteServiceCommand({ Id: id }));
    expect(await adapter.deleteNamespaceIfEmpty(ns!)).to.equal(false);
    expect(calls.count('DeleteNamespace')).to.equal(0);
    expect((await raw.send(new GetNamespaceCommand({ Id: ns }))).Namespace?.Name).to.equal('shared');
  });
});
