// Cloud Map's asynchronous operations on the emulator in its realistic mode (each operation SUBMITTED, then PENDING,
// then SUCCESS a second later, its write visible only then), through the real AWS SDK: polling is batched, a restart
// finds and waits for what a previous process left pending, and a write to an instance busy with another operation
// waits for it (M6).
import { RegisterInstanceCommand, ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';
import { adapterFor, instanceOf, rawClient, registerAll } from './fixtures.ts';

describe('cloudmap operations on the emulator (M6)', function () {
  this.timeout(60_000);
  let moto: StandaloneMoto;
  let raw: ServiceDiscoveryClient;

  before(async () => {
    moto = await startStandaloneMoto({ operationDelayMs: 1000 });
    raw = rawClient(moto.endpoint);
  });
  after(async () => {
    raw?.destroy();
    await moto?.stop();
  });
  beforeEach(() => moto.reset());

  it('waits for a batch of registrations across services with a few ListOperations, not a GetOperation each', async () => {
    const { adapter, calls } = adapterFor(moto.endpoint, 'cls1');
    const ns = await adapter.ensureNamespace('demo');
    const services = await Promise.all(['a', 'b', 'c'].map((name) => adapter.ensureService(ns, name)));
    calls.reset();
    const started = Date.now();
    await Promise.all(
      services.map((svc, s) =>
        registerAll(
          adapter,
          svc,
          Array.from({ length: 10 }, (_, n) => instanceOf('cls1', `i-${s}-${n}`)),
        ),
      ),
    );
    const waitedMs = Date.now() - started;
    const counts = calls.byApi();
    console.log(`      30 registrations in 3 services: ${JSON.stringify(counts)} in ${waitedMs} ms`);
    expect(counts.RegisterInstance).to.equal(30);
    expect(counts.GetOperation ?? 0).to.equal(0);
    // The rounds back off from 50 ms to 1 s while the operations take a second: a handful of shared listings.
    expect(counts.ListOperations).to.be.within(1, 10);
    for (const [s, svc] of services.entries())
      expect((await adapter.listInstances(svc)).map((i) => i.id)).to.have.length(10, `service ${s}`);
  });

  it('a restarted writer waits for the registrations its predecessor left pending, then sees them all', async () => {
    const { adapter: before } = adapterFor(moto.endpoint, 'cls1');
    const svc = await before.ensureService(await before.ensureNamespace('demo'), 'web');
    // The predecessor submitted these and died before their operations completed (slow ones, so that a loaded
    // machine cannot let any finish before the successor looks).
    await moto.control.configure({ operationDelayMs: 5000 });
    try {
      await Promise.all(
        Array.from({ length: 40 }, (_, n) =>
          raw.send(
            new RegisterInstanceCommand({
              ServiceId: svc,
              InstanceId: `i-${n}`,
              Attributes: instanceOf('cls1', `i-${n}`).attributes,
            }),
          ),
        ),
      );
    } finally {
      await moto.control.configure({ operationDelayMs: 1000 });
    }
    expect((await before.discoverInstances('demo', 'web'))!.instances).to.have.length(0);

    const { adapter: after, calls } = adapterFor(moto.endpoint, 'cls1');
    const settled = await after.operations.settleInFlight(10_000);
    expect(settled.ids).to.have.length(40);
    expect(settled.failed).to.equal(0);
    expect((await after.discoverInstances('demo', 'web'))!.instances).to.have.length(40);
    expect(calls.count('GetOperation')).to.equal(0);
    // Nothing pending: one listing, no wait.
    calls.reset();
    expect((await after.operations.settleInFlight(10_000)).ids).to.deep.equal([]);
    expect(calls.byApi()).to.deep.equal({ ListOperations: 1 });
  });

  it('a write to an instance whose previous operation still runs waits for it and lands once more', async () => {
    const { adapter } = adapterFor(moto.endpoint, 'cls1');
    const svc = await adapter.ensureService(await adapter.ensureNamespace('demo'), 'web');
    const first = await adapter.registerInstance(svc, instanceOf('cls1', 'i-1', { READY: 'true' }));
    // Cloud Map answers DuplicateRequest while `first` runs; the adapter waits for it and sends the update again.
    const second = await adapter.registerInstance(svc, instanceOf('cls1', 'i-1', { READY: 'false' }));
    expect(second).to.not.equal(first);
    await adapter.waitForOperations([first, second]);
    const listed = await adapter.listInstances(svc);
    expect(listed.map((i) => [i.id, i.attributes.READY])).to.deep.equal([['i-1', 'false']]);
  });
});
