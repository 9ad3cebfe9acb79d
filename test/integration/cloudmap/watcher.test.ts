// Change detection (M6) against the real emulator: two pretend clusters share one Cloud Map; the watcher of one sees
// the other's changes after one marker poll, costs one call per poll while nothing changes, and its full resync
// catches writers that never bump the marker (the AWS controller v0.3.1).
import { expect } from 'chai';
import type { CloudMapWatcher, ServiceKey } from '../../../src/cloudmap/watcher.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';
import { adapterFor, eventually, instanceOf, registerAll, type TestAdapter } from './fixtures.ts';

const POLL_MS = 200;

interface Watching {
  watcher: CloudMapWatcher;
  events: ServiceKey[];
  calls: TestAdapter['calls'];
  /** Marker polls so far (DiscoverInstancesRevision calls on the marker service are all of them while idle). */
  eventsFor(namespace: string, service: string): number;
}

describe('cloudmap change detection on the emulator (M6)', function () {
  this.timeout(60_000);
  let moto: StandaloneMoto;
  const running: CloudMapWatcher[] = [];

  before(async () => {
    moto = await startStandaloneMoto();
  });
  after(() => moto?.stop());
  beforeEach(() => moto.reset());
  afterEach(async () => {
    await Promise.all(running.splice(0).map((w) => w.stop()));
  });

  function watch(clusterId: string, fullResyncIntervalMs = 3_600_000): Watching {
    const { adapter, calls } = adapterFor(moto.endpoint, clusterId);
    const events: ServiceKey[] = [];
    const watcher = adapter.watch({ onChange: (e) => events.push(e), pollIntervalMs: POLL_MS, fullResyncIntervalMs, recheckAfterMs: 1000 });
    running.push(watcher);
    return { watcher, events, calls, eventsFor: (ns, svc) => events.filter((e) => e.namespace === ns && e.service === svc).length };
  }

  /** Creates `count` services of 2 instances each in `namespace` for `clusterId`; returns their ids by name. */
  async function populate(t: TestAdapter, namespace: string, count: number, clusterId: string): Promise<Map<string, string>> {
    const ns = await t.adapter.ensureNamespace(namespace);
    const ids = new Map<string, string>();
    for (let n = 0; n < count; n++) {
      const svc = await t.adapter.ensureService(ns, `svc-${n}`);
      ids.set(`svc-${n}`, svc);
      await registerAll(t.adapter, svc, [instanceOf(clusterId, `${clusterId}-${n}-a`), instanceOf(clusterId, `${clusterId}-${n}-b`)]);
    }
    return ids;
  }

  it('reads every existing service at start and reports each once', async () => {
    const writer = adapterFor(moto.endpoint, 'cls2');
    await populate(writer, 'alpha', 3, 'cls2');
    await populate(writer, 'beta', 2, 'cls2');
    const a = watch('cls1');
    await a.watcher.start();
    expect(a.watcher.synced).to.equal(true);
    expect(a.events.map((e) => `${e.namespace}/${e.service}`).sort()).to.deep.equal(['alpha/svc-0', 'alpha/svc-1', 'alpha/svc-2', 'beta/svc-0', 'beta/svc-1']);
    expect(a.watcher.snapshot('alpha', 'svc-1').map((i) => i.id).sort()).to.deep.equal(['cls2-1-a', 'cls2-1-b']);
    expect(a.watcher.snapshot('alpha', 'nope')).to.deep.equal([]);
  });

  it('sees another cluster\'s marked change within one poll, reading only the changed service', async () => {
    const b = adapterFor(moto.endpoint, 'cls2');
    const ids = await populate(b, 'demo', 5, 'cls2');
    const bWatcher = b.adapter.watch({ onChange: () => {}, pollIntervalMs: POLL_MS });
    running.push(bWatcher);
    await bWatcher.start();
    // cls2's marker for demo exists before cls1 starts, as in a running ClusterSet (a first marker means "re-read all").
    await bWatcher.markChanged('demo', ['svc-0']);
    const a = watch('cls1');
    await a.watcher.start();
    const before = a.eventsFor('demo', 'svc-3');

    await registerAll(b.adapter, ids.get('svc-3')!, [instanceOf('cls2', 'cls2-3-c')]);
    a.calls.reset();
    await bWatcher.markChanged('demo', ['svc-3']);
    await eventually('the event for demo/svc-3', () => a.eventsFor('demo', 'svc-3') > before);

    // At most the poll in flight when the marker moved, plus the one that saw it.
    expect(a.calls.count('DiscoverInstancesRevision')).to.be.at.most(2);
    // One DiscoverInstances for the marker service, one for svc-3: no other service was read.
    expect(a.calls.count('DiscoverInstances')).to.equal(2);
    expect(a.watcher.snapshot('demo', 'svc-3').map((i) => i.id).sort()).to.deep.equal(['cls2-3-a', 'cls2-3-b', 'cls2-3-c']);
  });

  it('folds a burst of changes into a few marker bumps and still names every changed service', async () => {
    const b = adapterFor(moto.endpoint, 'cls2');
    const ids = await populate(b, 'demo', 12, 'cls2');
    const bWatcher = b.adapter.watch({ onChange: () => {}, pollIntervalMs: POLL_MS });
    running.push(bWatcher);
    await bWatcher.start();
    await bWatcher.markChanged('demo', ['svc-0']);
    const a = watch('cls1');
    await a.watcher.start();

    b.calls.reset();
    const scansBefore = a.watcher.stats.namespaceScans;
    await Promise.all([...ids].map(async ([name, svc], n) => {
      await registerAll(b.adapter, svc, [instanceOf('cls2', `cls2-${n}-burst`)]);
      await bWatcher.markChanged('demo', [name]);
    }));
    // 12 instance registrations plus the marker bumps: one at once, the rest folded into at most a couple more.
    expect(b.calls.count('RegisterInstance') - 12).to.be.within(1, 3);
    await eventually('every burst service to be seen', () => [...ids.keys()].every((name) => a.watcher.snapshot('demo', name).length === 3));
    // Read by name from the marker's history, never by scanning the namespace.
    expect(a.watcher.stats.namespaceScans).to.equal(scansBefore);
  });

  it('costs one DiscoverInstancesRevision per poll while nothing changes, whatever the number of services', async () => {
    const writer = adapterFor(moto.endpoint, 'cls2');
    await populate(writer, 'one', 10, 'cls2');
    await populate(writer, 'two', 10, 'cls2');
    const ws = writer.adapter.watch({ onChange: () => {}, pollIntervalMs: POLL_MS });
    running.push(ws);
    await ws.start();
    await ws.markChanged('one', ['svc-0']); // the marker exists, as in a live ClusterSet
    const a = watch('cls1');
    await a.watcher.start();
    await new Promise((r) => setTimeout(r, 1500)); // past the recheck of anything seen at start
    a.calls.reset();
    const pollsBefore = a.watcher.stats.polls;
    await eventually('8 idle polls', () => a.calls.count('DiscoverInstancesRevision') >= 8);
    await a.watcher.stop(); // lets a poll in flight finish, so calls and polls are counted alike
    const polls = a.watcher.stats.polls - pollsBefore;
    expect(a.calls.byApi()).to.deep.equal({ DiscoverInstancesRevision: polls });
  });

  it('catches a writer that never bumps the marker at the full resync, not before', async () => {
    const old = adapterFor(moto.endpoint, 'legacy'); // stands in for the AWS controller v0.3.1
    const ids = await populate(old, 'demo', 2, 'legacy');
    const resyncing = watch('cls1', 1500);
    const pollingOnly = watch('cls3');
    await Promise.all([resyncing.watcher.start(), pollingOnly.watcher.start()]);
    pollingOnly.calls.reset();

    await registerAll(old.adapter, ids.get('svc-1')!, [instanceOf('legacy', 'legacy-1-c')]);
    await eventually('the full resync to report demo/svc-1', () => resyncing.eventsFor('demo', 'svc-1') > 1);
    expect(resyncing.watcher.snapshot('demo', 'svc-1')).to.have.length(3);
    // Meanwhile the marker-only watcher polled several times and, rightly, learned nothing.
    await eventually('3 polls', () => pollingOnly.calls.count('DiscoverInstancesRevision') >= 3);
    expect(pollingOnly.eventsFor('demo', 'svc-1')).to.equal(1);
    expect(pollingOnly.watcher.snapshot('demo', 'svc-1')).to.have.length(2);
  });

  it('reports services that disappear, marked or found by the full resync', async () => {
    const b = adapterFor(moto.endpoint, 'cls2');
    const ids = await populate(b, 'demo', 2, 'cls2');
    const a = watch('cls1', 1500);
    await a.watcher.start();
    const bWatcher = b.adapter.watch({ onChange: () => {}, pollIntervalMs: POLL_MS });
    running.push(bWatcher);
    await bWatcher.start();

    await b.adapter.waitForOperations(await b.adapter.deregisterInstances(ids.get('svc-0')!, ['cls2-0-a', 'cls2-0-b']));
    await b.adapter.deleteServiceIfEmpty(ids.get('svc-0')!);
    await bWatcher.markChanged('demo', ['svc-0']);
    await eventually('demo/svc-0 to vanish', () => a.eventsFor('demo', 'svc-0') === 2);
    expect(a.watcher.snapshot('demo', 'svc-0')).to.deep.equal([]);

    // Unmarked: the whole Cloud Map service goes, instances and all.
    await b.adapter.waitForOperations(await b.adapter.deregisterInstances(ids.get('svc-1')!, ['cls2-1-a', 'cls2-1-b']));
    await b.adapter.deleteServiceIfEmpty(ids.get('svc-1')!);
    await eventually('demo/svc-1 to vanish at the full resync', () => a.eventsFor('demo', 'svc-1') === 2);
    expect(a.watcher.services()).to.deep.equal([]);
  });

  it('re-reads a whole namespace when a marker does not say which service changed', async () => {
    const b = adapterFor(moto.endpoint, 'cls2');
    const ids = await populate(b, 'demo', 4, 'cls2');
    const a = watch('cls1');
    await a.watcher.start();
    const bWatcher = b.adapter.watch({ onChange: () => {}, pollIntervalMs: POLL_MS });
    running.push(bWatcher);
    await bWatcher.start();

    await registerAll(b.adapter, ids.get('svc-2')!, [instanceOf('cls2', 'cls2-2-a', { READY: 'false' })]);
    await bWatcher.markChanged('demo');
    await eventually('the event for demo/svc-2', () => a.eventsFor('demo', 'svc-2') === 2);
    expect(a.watcher.snapshot('demo', 'svc-2').find((i) => i.id === 'cls2-2-a')!.attributes.READY).to.equal('false');
    expect(a.eventsFor('demo', 'svc-0')).to.equal(1);
  });
});
