// Change detection (M6) against the real emulator: two pretend clusters share one Cloud Map; the watcher of one sees
// the other's changes after one marker poll, costs one call per poll while nothing changes, and its full resync
// catches writers that never bump the marker (the AWS controller v0.3.1).
import { DiscoverInstancesCommand, ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { MARKER_SERVICE, markerNamespaceName } from '../../../src/change-detection/change-marker.ts';
import { watchCloudMap, type CloudMapWatcher } from '../../../src/change-detection/cloudmap-watcher.ts';
import type { ServiceKey } from '../../../src/change-detection/service-cache.ts';
import type { CloudMapWatcherOptions } from '../../../src/change-detection/watch-options.ts';
import { clusterTag } from '../../../src/core/instance-id.ts';
import {
  adapterFor,
  CLUSTERSET,
  instanceOf,
  REGION,
  registerAll,
  withEmulator,
  type TestAdapter,
} from '../cloudmap/fixtures.ts';
import { eventually } from '../../support/eventually.ts';

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
  const { moto, running } = withEmulator();

  function watch(clusterId: string, fullResyncIntervalMs = 3_600_000): Watching {
    const { adapter, calls } = adapterFor(moto().endpoint, clusterId);
    const events: ServiceKey[] = [];
    const watcher = watchCloudMap(adapter, {
      onChange: (e) => events.push(e),
      pollIntervalMs: POLL_MS,
      fullResyncIntervalMs,
      rechecksAfterMs: [1000],
    });
    running.push(watcher);
    return {
      watcher,
      events,
      calls,
      eventsFor: (ns, svc) => events.filter((e) => e.namespace === ns && e.service === svc).length,
    };
  }

  /** Creates `count` services of 2 instances each in `namespace` for `clusterId`; returns their ids by name. */
  async function populate(
    t: TestAdapter,
    namespace: string,
    count: number,
    clusterId: string,
  ): Promise<Map<string, string>> {
    const ns = await t.adapter.ensureNamespace(namespace);
    const ids = new Map<string, string>();
    for (let n = 0; n < count; n++) {
      const svc = await t.adapter.ensureService(ns, `svc-${n}`);
      ids.set(`svc-${n}`, svc);
      await registerAll(t.adapter, svc, [
        instanceOf(clusterId, `${clusterId}-${n}-a`),
        instanceOf(clusterId, `${clusterId}-${n}-b`),
      ]);
    }
    return ids;
  }

  /** Writer cluster `cls2` with `count` services in `namespace`, its watcher started (for markChanged). */
  async function writer(
    namespace: string,
    count: number,
    extra: Partial<CloudMapWatcherOptions> = {},
  ): Promise<TestAdapter & { ids: Map<string, string>; marker: CloudMapWatcher }> {
    const t = adapterFor(moto().endpoint, 'cls2');
    const ids = await populate(t, namespace, count, 'cls2');
    const marker = watchCloudMap(t.adapter, { onChange: () => {}, pollIntervalMs: POLL_MS, ...extra });
    running.push(marker);
    await marker.start();
    return { ...t, ids, marker };
  }

  /** A writer whose marker for `namespace` exists before cls1's watcher starts, as in a running ClusterSet. */
  async function writerThenReader(namespace: string, count: number) {
    const b = await writer(namespace, count);
    await b.marker.markChanged(namespace, ['svc-0']);
    const a = watch('cls1');
    await a.watcher.start();
    return { a, b };
  }

  it('reads every existing service at start and reports each once', async () => {
    const writer = adapterFor(moto().endpoint, 'cls2');
    await populate(writer, 'alpha', 3, 'cls2');
    await populate(writer, 'beta', 2, 'cls2');
    const a = watch('cls1');
    await a.watcher.start();
    expect(a.watcher.synced).to.equal(true);
    expect(a.events.map((e) => `${e.namespace}/${e.service}`).sort()).to.deep.equal([
      'alpha/svc-0',
      'alpha/svc-1',
      'alpha/svc-2',
      'beta/svc-0',
      'beta/svc-1',
    ]);
    expect(
      a.watcher
        .snapshot('alpha', 'svc-1')
        .map((i) => i.id)
        .sort(),
    ).to.deep.equal(['cls2-1-a', 'cls2-1-b']);
    expect(a.watcher.snapshot('alpha', 'nope')).to.deep.equal([]);

    // Stopped and started again (a worker losing and regaining leadership): reads everything again, reports nothing new.
    await a.watcher.stop();
    const resyncs = a.watcher.stats.fullResyncs;
    await a.watcher.start();
    expect(a.watcher.stats.fullResyncs).to.equal(resyncs + 1);
    expect(a.events).to.have.length(5);
  });

  it('reads the services it is told of at start, but none of a namespace Cloud Map does not have', async () => {
    await writer('known', 2);
    const { adapter, calls } = adapterFor(moto().endpoint, 'cls1');
    const knownServices = () => [
      { namespace: 'known', service: 'svc-0' },
      { namespace: 'known', service: 'svc-1' },
      ...Array.from({ length: 20 }, (_, n) => ({ namespace: 'not-in-cloud-map', service: `svc-${n}` })),
    ];
    const watcher = watchCloudMap(adapter, { onChange: () => {}, pollIntervalMs: POLL_MS, knownServices });
    running.push(watcher);
    await watcher.start();
    expect(
      watcher
        .snapshot('known', 'svc-1')
        .map((i) => i.id)
        .sort(),
    ).to.deep.equal(['cls2-1-a', 'cls2-1-b']);
    // The two known services, and the markers once.
    expect(calls.count('DiscoverInstances')).to.be.at.most(3);
  });

  it('M9: lists the namespaces and loads its checkpoints while the services it knows of are still being learnt', async () => {
    await writer('later', 1);
    const { adapter, calls } = adapterFor(moto().endpoint, 'cls1');
    let loads = 0;
    const checkpoints = { load: async () => (loads++, []), save: async () => {} };
    let tell!: (keys: readonly ServiceKey[]) => void;
    const told = new Promise<readonly ServiceKey[]>((resolve) => (tell = resolve));
    let asked = 0;
    const watcher = watchCloudMap(adapter, {
      onChange: () => {},
      pollIntervalMs: POLL_MS,
      checkpoints,
      knownServices: () => (asked++, told),
    });
    running.push(watcher);
    const first = watcher.start();
    await eventually('the first read to wait for the known services', () => asked === 1);
    expect(calls.count('ListNamespaces')).to.be.at.least(1);
    expect(loads).to.equal(1);
    expect(watcher.synced).to.equal(false);
    // Waiting on the caller's lists is not a stuck loop: liveness must not restart the worker for a slow list.
    expect(watcher.progress.busy).to.equal(false);

    tell([{ namespace: 'later', service: 'svc-0' }]);
    await first;
    expect(
      watcher
        .snapshot('later', 'svc-0')
        .map((i) => i.id)
        .sort(),
    ).to.deep.equal(['cls2-0-a', 'cls2-0-b']);
    expect(loads).to.equal(1);
    expect(watcher.progress.busy).to.equal(true);
  });

  it('M9: stops while the services it knows of are never given, without waiting for them', async () => {
    const { adapter } = adapterFor(moto().endpoint, 'cls1');
    let asked = 0;
    const watcher = watchCloudMap(adapter, {
      onChange: () => {},
      pollIntervalMs: POLL_MS,
      knownServices: () => (asked++, new Promise<readonly ServiceKey[]>(() => {})),
    });
    void watcher.start();
    await eventually('the first read to wait for the known services', () => asked === 1);
    const stopped = await Promise.race([
      watcher.stop().then(() => true),
      new Promise((resolve) => setTimeout(() => resolve(false), 5_000)),
    ]);
    expect(stopped, 'stop() resolved within 5 s').to.equal(true);
    expect(watcher.synced).to.equal(false);
  });

  it("sees another cluster's marked change within one poll, reading only the changed service", async () => {
    const { a, b } = await writerThenReader('demo', 5);
    const before = a.eventsFor('demo', 'svc-3');

    await registerAll(b.adapter, b.ids.get('svc-3')!, [instanceOf('cls2', 'cls2-3-c')]);
    a.calls.reset();
    const started = Date.now();
    await b.marker.markChanged('demo', ['svc-3']);
    await eventually('the event for demo/svc-3', () => a.eventsFor('demo', 'svc-3') > before);

    // One poll per interval while the marker's write was in progress (asynchronous in Cloud Map), plus the one in
    // flight when it moved: polling does not speed up with changes.
    expect(a.calls.count('DiscoverInstancesRevision')).to.be.at.most(Math.ceil((Date.now() - started) / POLL_MS) + 1);
    // One DiscoverInstances for the marker service, one for svc-3: no other service was read.
    expect(a.calls.count('DiscoverInstances')).to.equal(2);
    expect(
      a.watcher
        .snapshot('demo', 'svc-3')
        .map((i) => i.id)
        .sort(),
    ).to.deep.equal(['cls2-3-a', 'cls2-3-b', 'cls2-3-c']);
  });

  it('M7: reads only the named service of a namespace new to it, whose marker is new too, without listing anything', async () => {
    const { a, b } = await writerThenReader('demo', 1);
    a.calls.reset();
    const scansBefore = a.watcher.stats.namespaceScans;
    await populate(b, 'fresh', 1, 'cls2');
    await b.marker.markChanged('fresh', ['svc-0']);
    await eventually('the event for fresh/svc-0', () => a.eventsFor('fresh', 'svc-0') > 0);
    expect(
      a.watcher
        .snapshot('fresh', 'svc-0')
        .map((i) => i.id)
        .sort(),
    ).to.deep.equal(['cls2-0-a', 'cls2-0-b']);
    // The marker's first bump names its services: no ListNamespaces, no ListServices, no scan of the namespace.
    expect(a.watcher.stats.namespaceScans).to.equal(scansBefore);
    expect(a.calls.count('ListNamespaces') + a.calls.count('ListServices')).to.equal(0);
  });

  it("M7: a peer's notice of a coming change has it poll the marker closely for as long as the notice asks, once per notice", async () => {
    // The writer asks for a minute; the reader caps it at 5 s.
    const b = await writer('demo', 2, { closeWatchMaxMs: 60_000 });
    await b.marker.markChanged('demo', ['svc-0']);
    const { adapter, calls } = adapterFor(moto().endpoint, 'cls1');
    const events: ServiceKey[] = [];
    // Regular polls 6 s apart, so a change seen sooner was seen by a close poll.
    const watcher = watchCloudMap(adapter, {
      onChange: (e) => events.push(e),
      pollIntervalMs: 6000,
      closeWatchIntervalMs: 100,
      closeWatchMaxMs: 5000,
      rechecksAfterMs: [],
    });
    running.push(watcher);
    await watcher.start();
    const regularPolls = () => watcher.stats.polls - watcher.stats.closePolls;

    b.marker.announceComing();
    await eventually('cls1 to start polling closely', () => watcher.stats.closePolls > 0, 15_000);
    const regularBefore = regularPolls();
    const seen = (service: string) => events.filter((e) => e.service === service).length;
    const svc1Before = seen('svc-1');
    await registerAll(b.adapter, b.ids.get('svc-1')!, [instanceOf('cls2', 'cls2-1-c')]);
    await b.marker.markChanged('demo', ['svc-1']);
    await eventually('the event for demo/svc-1', () => seen('svc-1') > svc1Before, 15_000);
    expect(regularPolls() - regularBefore, 'regular polls between the change and its sighting').to.be.at.most(1);
    expect(watcher.snapshot('demo', 'svc-1').map((i) => i.id)).to.include('cls2-1-c');
    expect(b.marker.stats.closePolls, 'a cluster does not act on its own notice').to.equal(0);

    // The window ends; the notice met again at later reads of the marker service (a bump of svc-0) opens no other.
    await new Promise((r) => setTimeout(r, 5500));
    const closeAfter = watcher.stats.closePolls;
    const svc0Before = seen('svc-0');
    await registerAll(b.adapter, b.ids.get('svc-0')!, [instanceOf('cls2', 'cls2-0-c')]);
    await b.marker.markChanged('demo', ['svc-0']);
    await eventually('the event for demo/svc-0', () => seen('svc-0') > svc0Before, 15_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(watcher.stats.closePolls, 'close polls after the window').to.equal(closeAfter);
    expect(calls.count('DiscoverInstancesRevision')).to.equal(watcher.stats.polls);
  });

  it('folds a burst of changes into a few marker bumps and still names every changed service', async () => {
    const { a, b } = await writerThenReader('demo', 12);

    b.calls.reset();
    const scansBefore = a.watcher.stats.namespaceScans;
    await Promise.all(
      [...b.ids].map(async ([name, svc], n) => {
        await registerAll(b.adapter, svc, [instanceOf('cls2', `cls2-${n}-burst`)]);
        await b.marker.markChanged('demo', [name]);
      }),
    );
    // 12 instance registrations plus the marker bumps: one at once, the rest folded into at most a couple more.
    expect(b.calls.count('RegisterInstance') - 12).to.be.within(1, 3);
    await eventually('every burst service to be seen', () =>
      [...b.ids.keys()].every((name) => a.watcher.snapshot('demo', name).length === 3),
    );
    // Read by name from the marker's history, never by scanning the namespace.
    expect(a.watcher.stats.namespaceScans).to.equal(scansBefore);
  });

  it('costs one DiscoverInstancesRevision per poll while nothing changes, whatever the number of services', async () => {
    const b = await writer('one', 10);
    await populate(b, 'two', 10, 'cls2');
    await b.marker.markChanged('one', ['svc-0']); // the marker exists, as in a live ClusterSet
    const a = watch('cls1');
    await a.watcher.start();
    a.calls.reset();
    const pollsBefore = a.watcher.stats.polls;
    await eventually('8 idle polls', () => a.calls.count('DiscoverInstancesRevision') >= 8);
    await a.watcher.stop(); // lets a poll in flight finish, so calls and polls are counted alike
    const polls = a.watcher.stats.polls - pollsBefore;
    expect(a.calls.byApi()).to.deep.equal({ DiscoverInstancesRevision: polls });
  });

  it('a marker bump that failed is tried again, so the change reaches readers without waiting for the resync', async () => {
    const { a, b } = await writerThenReader('demo', 3);
    const before = a.eventsFor('demo', 'svc-1');
    await registerAll(b.adapter, b.ids.get('svc-1')!, [instanceOf('cls2', 'cls2-1-c')]);
    await moto().control.setFaults({ errorRate: 1, apis: ['RegisterInstance'] });
    const bump = await b.marker.markChanged('demo', ['svc-1']).then(
      () => 'landed',
      (err: unknown) => String(err),
    );
    expect(bump, 'the bump while every RegisterInstance fails').to.not.equal('landed');
    await moto().control.clearFaults();
    // The reader's full resync is an hour away: only the writer's retry can tell it.
    await eventually('the reader to see demo/svc-1 change', () => a.eventsFor('demo', 'svc-1') > before, 20_000);
    expect(a.watcher.snapshot('demo', 'svc-1').map((i) => i.id)).to.include('cls2-1-c');
  });

  it("M8: a marker refused at the marker service's instance quota takes the place of this cluster's marker bumped longest ago, never another cluster's", async () => {
    const b = adapterFor(moto().endpoint, 'cls2');
    const markerIds = async () => {
      const sdk = new ServiceDiscoveryClient({
        region: REGION,
        endpoint: moto().endpoint,
        disableHostPrefix: true,
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      });
      const out = await sdk
        .send(
          new DiscoverInstancesCommand({
            NamespaceName: markerNamespaceName(CLUSTERSET),
            ServiceName: MARKER_SERVICE,
            HealthStatus: 'ALL',
            MaxResults: 100,
          }),
        )
        .catch((err: unknown) =>
          err instanceof Error && /NotFound/.test(err.name) ? { Instances: [] } : Promise.reject(err),
        );
      return (out.Instances ?? []).map((i) => i.InstanceId!).sort();
    };
    const ids = new Map<string, string>();
    for (const namespace of ['q-0', 'q-1']) ids.set(namespace, (await populate(b, namespace, 1, 'cls2')).get('svc-0')!);
    const marker = watchCloudMap(b.adapter, {
      onChange: () => {},
      pollIntervalMs: POLL_MS,
      markerEvictionMinAgeMs: 500,
    });
    running.push(marker);
    await marker.start();
    const a = watch('cls1');
    await a.watcher.start();
    // A writer that never bumped announces its namespaces after its first read.
    let announced: string[] = [];
    const markersOf = (list: string[]) => JSON.stringify(announced) === JSON.stringify(list);
    await eventually(
      'the markers of q-0 and q-1 only',
      async () => {
        announced = await markerIds();
        return markersOf(['cls2/q-0', 'cls2/q-1']) || JSON.stringify(announced);
      },
      10_000,
    );
    expect(announced).to.deep.equal(['cls2/q-0', 'cls2/q-1']);
    ids.set('q-2', (await populate(b, 'q-2', 1, 'cls2')).get('svc-0')!);
    // cls1's marker is the oldest of all; then cls2's of q-0, then q-1.
    await a.watcher.markChanged('q-9');
    await marker.markChanged('q-0', ['svc-0']);
    await marker.markChanged('q-1', ['svc-0']);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // past the minimum age, and read back by cls2's watcher
    const before = await markerIds();
    expect(before).to.deep.equal(['cls1/q-9', 'cls2/q-0', 'cls2/q-1']);
    await moto().control.configure({ quotas: { instancesPerService: before.length } });

    const seen = a.eventsFor('q-2', 'svc-0');
    await registerAll(b.adapter, ids.get('q-2')!, [instanceOf('cls2', 'cls2-q2-c')]);
    await marker.markChanged('q-2', ['svc-0']);
    expect(await markerIds()).to.deep.equal(['cls1/q-9', 'cls2/q-1', 'cls2/q-2']);
    await eventually('the reader to see q-2/svc-0 change', () => a.eventsFor('q-2', 'svc-0') > seen);
    expect(a.watcher.snapshot('q-2', 'svc-0').map((i) => i.id)).to.include('cls2-q2-c');

    // A new process of cls2 that polls seldom, so that it knows the markers only as read at its start, makes room twice
    // in a row: a marker it deregistered is not taken again, and cls1's, still the oldest, is never taken.
    await marker.stop();
    const restarted = watchCloudMap(b.adapter, {
      onChange: () => {},
      pollIntervalMs: 60_000,
      markerEvictionMinAgeMs: 500,
    });
    running.push(restarted);
    await restarted.start();
    await new Promise((resolve) => setTimeout(resolve, 600));
    await restarted.markChanged('q-3', ['svc-0']);
    expect(await markerIds()).to.deep.equal(['cls1/q-9', 'cls2/q-2', 'cls2/q-3']);
    await restarted.markChanged('q-4', ['svc-0']);
    expect(await markerIds()).to.deep.equal(['cls1/q-9', 'cls2/q-3', 'cls2/q-4']);
  });

  it('catches a writer that never bumps the marker at the full resync, not before', async () => {
    const old = adapterFor(moto().endpoint, 'legacy'); // stands in for the AWS controller v0.3.1
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

  it('sees every write of a writer that never bumps the marker within one resync interval, services it creates included', async () => {
    const INTERVAL_MS = 4000;
    // Started as a worker on an empty Cloud Map: nothing known, nothing listed (its first listing finds no service).
    const { adapter, calls } = adapterFor(moto().endpoint, 'cls1');
    const events: ServiceKey[] = [];
    const seen = (service: string, id: string) =>
      events.some((e) => e.service === service) && a.snapshot('demo', service).some((i) => i.id === id);
    const gone = (service: string, id: string) => !a.snapshot('demo', service).some((i) => i.id === id);
    const a = watchCloudMap(adapter, {
      onChange: (e) => events.push(e),
      pollIntervalMs: POLL_MS,
      fullResyncIntervalMs: INTERVAL_MS,
      rechecksAfterMs: [1000],
      knownServices: () => [],
    });
    running.push(a);
    await a.start();
    const old = adapterFor(moto().endpoint, 'legacy'); // stands in for the AWS controller v0.3.1
    const b = await writer('other', 1);
    // How late a write is seen, in rounds of the resync rather than in ms: a round is one listing of the services, or
    // one check of each known service; a loaded machine slows the rounds, not what each round sees.
    const rounds: Record<string, number> = {};
    const measure = async (what: string, check: () => boolean) => {
      const before = a.stats;
      await eventually(what, check, 3 * INTERVAL_MS);
      const checked = (a.stats.resyncChecks - before.resyncChecks) / Math.max(1, a.services().length);
      rounds[what] = Math.max(a.stats.resyncListings - before.resyncListings, Math.ceil(checked));
    };

    // A new export, mid-way through the first interval.
    await new Promise((r) => setTimeout(r, INTERVAL_MS / 3));
    const ns = await old.adapter.ensureNamespace('demo');
    const created = await old.adapter.ensureService(ns, 'created');
    await registerAll(old.adapter, created, [instanceOf('legacy', 'legacy-c-1'), instanceOf('legacy', 'legacy-c-2')]);
    await measure('new service', () => seen('created', 'legacy-c-2'));

    // A service first read in the middle of the others, because a marking writer created it; right after, the
    // non-marking writer exports it too (both clusters exporting one service).
    const shared = await b.adapter.ensureService(ns, 'shared');
    await registerAll(b.adapter, shared, [instanceOf('cls2', 'cls2-s-1')]);
    await b.marker.markChanged('demo', ['shared']);
    await eventually('the marked service', () => seen('shared', 'cls2-s-1'));
    await registerAll(old.adapter, shared, [instanceOf('legacy', 'legacy-s-1')]);
    await measure('both exporting', () => seen('shared', 'legacy-s-1'));

    // A scale-down, then an unexport, of the non-marking writer's service.
    await old.adapter.waitForOperations(await old.adapter.deregisterInstances(created, ['legacy-c-2']));
    await measure('scale-down', () => gone('created', 'legacy-c-2'));
    await old.adapter.waitForOperations(await old.adapter.deregisterInstances(created, ['legacy-c-1']));
    await old.adapter.deleteServiceIfEmpty(created);
    await measure('unexport', () => a.snapshot('demo', 'created').length === 0);

    console.log(
      `      resync interval ${INTERVAL_MS} ms, non-marking writes seen after (rounds): ${JSON.stringify(rounds)}; ${a.stats.resyncListings} listings, ${a.stats.resyncChecks} checks; calls ${JSON.stringify(calls.byApi())}`,
    );
    // Within one interval: the round under way when the write completed may miss it, the next one sees it.
    for (const [what, n] of Object.entries(rounds)) expect(n, what).to.be.at.most(2);
  });

  it('M3: tells whether a controller that does not announce its writes (v0.3.1) has instances in this Cloud Map', async () => {
    const t = adapterFor(moto().endpoint, 'cls2');
    const ns = await t.adapter.ensureNamespace('demo');
    const ours = { K8S_CONTROLLER: 'mcs-cloudmap v1.0.0' };
    const id = (ip: string) => `tcp-${ip}-80-${clusterTag({ clusterId: 'cls2', clustersetId: CLUSTERSET })}`;
    await registerAll(t.adapter, await t.adapter.ensureService(ns, 'web'), [instanceOf('cls2', id('10.0.0.1'), ours)]);
    const a = watch('cls1', 1000);
    await a.watcher.start();
    expect(a.watcher.nonAnnouncingWriterSeen()).to.equal(false);

    const old = adapterFor(moto().endpoint, 'legacy');
    const v031 = { K8S_CONTROLLER: 'aws-cloud-map-mcs-controller-for-k8s d07e680 (d07e680)', HOSTNAME: '' };
    await registerAll(old.adapter, await old.adapter.ensureService(ns, 'api'), [
      instanceOf('legacy', 'tcp-10_244_2_0-8080', v031),
    ]);
    await eventually('the v0.3.1 instance to be seen', () => a.watcher.nonAnnouncingWriterSeen());
    await old.adapter.waitForOperations(
      await old.adapter.deregisterInstances(await old.adapter.ensureService(ns, 'api'), ['tcp-10_244_2_0-8080']),
    );
    await eventually('it to be gone', () => !a.watcher.nonAnnouncingWriterSeen());
  });

  it('watches the namespaces of a writer that never bumps the marker closely, and only those', async () => {
    const FAST_MS = 1000;
    const old = adapterFor(moto().endpoint, 'legacy'); // v0.3.1: no markers, no bumps
    const ids = await populate(old, 'legacy-ns', 2, 'legacy');
    await populate(old, 'legacy-ns2', 1, 'legacy');
    const t = adapterFor(moto().endpoint, 'cls2');
    const ours = (n: number) =>
      instanceOf('cls2', `tcp-10.0.0.${n}-80-${clusterTag({ clusterId: 'cls2', clustersetId: CLUSTERSET })}`, {
        K8S_CONTROLLER: 'mcs-cloudmap v1.0.0',
      });
    const quiet = await t.adapter.ensureNamespace('ours-only');
    for (const name of ['a', 'b', 'c'])
      await registerAll(t.adapter, await t.adapter.ensureService(quiet, name), [ours(1)]);
    const shared = await t.adapter.ensureService(await t.adapter.ensureNamespace('legacy-ns'), 'shared');
    await registerAll(t.adapter, shared, [ours(2)]);

    const { adapter, calls } = adapterFor(moto().endpoint, 'cls1');
    const events: ServiceKey[] = [];
    const a = watchCloudMap(adapter, {
      onChange: (e) => events.push(e),
      pollIntervalMs: POLL_MS,
      fullResyncIntervalMs: 3_600_000,
      nonAnnouncingPollIntervalMs: FAST_MS,
    });
    running.push(a);
    await a.start();
    // How late a write is seen, in rounds of close checks (each lists one namespace): load slows rounds, not what they see.
    const rounds: Record<string, number> = {};
    const measure = async (what: string, check: () => boolean) => {
      const before = a.stats.nonAnnouncingListings;
      await eventually(what, check, 10 * FAST_MS);
      rounds[what] = a.stats.nonAnnouncingListings - before;
    };

    // Idle: one DiscoverInstancesRevision per poll, one per service of the namespaces v0.3.1 writes in per interval, and
    // one ListServices per interval, of those namespaces in turn.
    calls.reset();
    const before = a.stats;
    const started = Date.now();
    await eventually(
      '6 rounds of close checks',
      () => a.stats.nonAnnouncingListings - before.nonAnnouncingListings >= 6,
      30 * FAST_MS,
    );
    const seconds = (Date.now() - started) / 1000;
    const polls = a.stats.polls - before.polls;
    const checks = a.stats.nonAnnouncingChecks - before.nonAnnouncingChecks;
    const listings = a.stats.nonAnnouncingListings - before.nonAnnouncingListings;
    console.log(
      `      ${seconds.toFixed(1)} s idle, 4 services of v0.3.1's 2 namespaces and 3 of ours: ${polls} polls, ${checks} close checks, ${listings} listings; calls ${JSON.stringify(calls.byApi())}`,
    );
    expect(calls.byApi()).to.deep.equal({ DiscoverInstancesRevision: polls + checks, ListServices: listings });
    // Each round checks the 4 services and lists one namespace; rounds are an interval apart, never closer (a loaded
    // machine only spaces them further): bounds on the time they took, not on what fits in a window.
    expect(checks, 'the 4 services checked each round').to.be.within(4 * (listings - 1), 4 * (listings + 1));
    expect(seconds, 'seconds the rounds took, one interval apart').to.be.at.least(((listings - 2) * FAST_MS) / 1000);

    // Its writes, unannounced: a scale-down, an export of a service another cluster exports, an unexport.
    await old.adapter.waitForOperations(await old.adapter.deregisterInstances(ids.get('svc-0')!, ['legacy-0-b']));
    await measure('scale-down', () => !a.snapshot('legacy-ns', 'svc-0').some((i) => i.id === 'legacy-0-b'));
    await registerAll(old.adapter, shared, [instanceOf('legacy', 'tcp-10_244_2_0-8080')]);
    await measure('both exporting', () => a.snapshot('legacy-ns', 'shared').length === 2);
    await old.adapter.waitForOperations(
      await old.adapter.deregisterInstances(ids.get('svc-1')!, ['legacy-1-a', 'legacy-1-b']),
    );
    await measure('unexport', () => a.snapshot('legacy-ns', 'svc-1').length === 0);
    // A service it creates: no marker names it, the listing of its namespace finds it (M3).
    await registerAll(
      old.adapter,
      await old.adapter.ensureService(await old.adapter.ensureNamespace('legacy-ns'), 'new-svc'),
      [instanceOf('legacy', 'tcp-10_244_2_9-8080')],
    );
    await measure('new service', () => a.snapshot('legacy-ns', 'new-svc').length === 1);
    await registerAll(
      old.adapter,
      await old.adapter.ensureService(await old.adapter.ensureNamespace('legacy-ns2'), 'new-svc'),
      [instanceOf('legacy', 'tcp-10_244_2_8-8080')],
    );
    await measure('new service, second namespace', () => a.snapshot('legacy-ns2', 'new-svc').length === 1);
    console.log(`      checked every ${FAST_MS} ms, v0.3.1's writes seen after (rounds): ${JSON.stringify(rounds)}`);
    // A change by the round after the one under way; a new service once its namespace's turn to be listed comes (the
    // two namespaces in turn).
    for (const [what, n] of Object.entries(rounds))
      expect(n, what).to.be.at.most(what.startsWith('new service') ? 3 : 2);
  });

  it("M3: finds what a writer that never bumps the marker registers where it has no instance, a new namespace included, through the account's operations", async () => {
    const INTERVAL_MS = 1000;
    const t = adapterFor(moto().endpoint, 'cls2');
    const ours = instanceOf('cls2', `tcp-10.0.0.1-80-${clusterTag({ clusterId: 'cls2', clustersetId: CLUSTERSET })}`, {
      K8S_CONTROLLER: 'mcs-cloudmap v1.0.0',
    });
    const quiet = await t.adapter.ensureNamespace('ours-only');
    await registerAll(t.adapter, await t.adapter.ensureService(quiet, 'web'), [ours]);
    const { adapter, calls } = adapterFor(moto().endpoint, 'cls1');
    // Neither the resync nor the watch of namespaces where such a writer was seen: the operations alone.
    const a = watchCloudMap(adapter, {
      onChange: () => {},
      pollIntervalMs: POLL_MS,
      fullResyncIntervalMs: 3_600_000,
      nonAnnouncingPollIntervalMs: 0,
      operationsPollIntervalMs: INTERVAL_MS,
    });
    running.push(a);
    await a.start();
    // Past the first listings, which reach back to cls2's registration above.
    await new Promise((r) => setTimeout(r, 2 * INTERVAL_MS));

    // Idle: one ListOperations per interval besides the marker polls, and nothing looked up (nobody registers).
    calls.reset();
    const before = a.stats;
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 5 * INTERVAL_MS));
    const seconds = (Date.now() - started) / 1000;
    const listings = a.stats.operationListings - before.operationListings;
    console.log(
      `      ${seconds.toFixed(1)} s idle: ${listings} operation listings; calls ${JSON.stringify(calls.byApi())}`,
    );
    expect(listings, 'one listing per interval').to.be.within(Math.floor(seconds) - 1, Math.ceil(seconds) + 1);
    expect(calls.byApi().ListOperations ?? 0).to.be.within(listings - 1, listings + 1);
    expect(Object.keys(calls.byApi()).sort()).to.deep.equal(['DiscoverInstancesRevision', 'ListOperations']);

    const old = adapterFor(moto().endpoint, 'legacy'); // v0.3.1: no markers, no bumps
    const latencies: Record<string, number> = {};
    // From each registration's operation done (registerAll waits for it) to the watcher's cache.
    await registerAll(old.adapter, await old.adapter.ensureService(quiet, 'api'), [
      instanceOf('legacy', 'tcp-10_244_2_0-8080'),
    ]);
    let since = Date.now();
    await eventually(
      'a new service where it has no instance',
      () => a.snapshot('ours-only', 'api').length === 1,
      10_000,
    );
    latencies['new service where it has no instance'] = Date.now() - since;
    await registerAll(
      old.adapter,
      await old.adapter.ensureService(await old.adapter.ensureNamespace('legacy-new'), 'svc'),
      [instanceOf('legacy', 'tcp-10_244_2_1-8080')],
    );
    since = Date.now();
    await eventually('a new namespace', () => a.snapshot('legacy-new', 'svc').length === 1, 10_000);
    latencies['new namespace'] = Date.now() - since;
    const described = a.stats.operationsDescribed - before.operationsDescribed;
    const read = a.stats.operationReads - before.operationReads;
    console.log(
      `      listed every ${INTERVAL_MS} ms, from the registration's operation done to the watcher's cache (ms): ${JSON.stringify(latencies)}; ${described} operations looked up, ${read} services read for them`,
    );
    // Each registration is looked up once, and its service read once (the resync is an hour away: these are the operations' doing).
    expect(described).to.equal(2);
    expect(read).to.equal(2);
  });

  it('reports services that disappear, marked or found by the full resync', async () => {
    const b = await writer('demo', 2);
    const a = watch('cls1', 1500);
    await a.watcher.start();

    await b.adapter.waitForOperations(
      await b.adapter.deregisterInstances(b.ids.get('svc-0')!, ['cls2-0-a', 'cls2-0-b']),
    );
    await b.adapter.deleteServiceIfEmpty(b.ids.get('svc-0')!);
    await b.marker.markChanged('demo', ['svc-0']);
    await eventually('demo/svc-0 to vanish', () => a.eventsFor('demo', 'svc-0') === 2);
    expect(a.watcher.snapshot('demo', 'svc-0')).to.deep.equal([]);

    // Unmarked: the whole Cloud Map service goes, instances and all.
    await b.adapter.waitForOperations(
      await b.adapter.deregisterInstances(b.ids.get('svc-1')!, ['cls2-1-a', 'cls2-1-b']),
    );
    await b.adapter.deleteServiceIfEmpty(b.ids.get('svc-1')!);
    await eventually('demo/svc-1 to vanish at the full resync', () => a.eventsFor('demo', 'svc-1') === 2);
    expect(a.watcher.services()).to.deep.equal([]);
  });

  it('re-reads a whole namespace when a marker does not say which service changed', async () => {
    const b = await writer('demo', 4);
    const a = watch('cls1');
    await a.watcher.start();

    await registerAll(b.adapter, b.ids.get('svc-2')!, [instanceOf('cls2', 'cls2-2-a', { READY: 'false' })]);
    await b.marker.markChanged('demo');
    await eventually('the event for demo/svc-2', () => a.eventsFor('demo', 'svc-2') === 2);
    expect(a.watcher.snapshot('demo', 'svc-2').find((i) => i.id === 'cls2-2-a')!.attributes.READY).to.equal('false');
    expect(a.eventsFor('demo', 'svc-0')).to.equal(1);
  });

  it('spends the resync budget evenly, however many services there are to check', async () => {
    const t = adapterFor(moto().endpoint, 'cls2');
    const ns = await t.adapter.ensureNamespace('many');
    await Promise.all(
      Array.from({ length: 60 }, async (_, n) => {
        const svc = await t.adapter.ensureService(ns, `svc-${n}`);
        await registerAll(t.adapter, svc, [instanceOf('cls2', `cls2-${n}`)]);
      }),
    );
    const { adapter, calls } = adapterFor(moto().endpoint, 'cls1');
    // Every service within a second would be 3,600 checks a minute: the budget of 120 (2 a second) decides.
    const watcher = watchCloudMap(adapter, {
      onChange: () => {},
      pollIntervalMs: POLL_MS,
      fullResyncIntervalMs: 1000,
      resyncBudgetPerMinute: 120,
    });
    running.push(watcher);
    await watcher.start();
    calls.reset();
    const before = watcher.stats;
    const started = Date.now();
    await eventually('20 resync checks', () => watcher.stats.resyncChecks - before.resyncChecks >= 20, 60_000);
    await watcher.stop();
    const seconds = (Date.now() - started) / 1000;
    const checks = watcher.stats.resyncChecks - before.resyncChecks;
    const polls = watcher.stats.polls - before.polls;
    console.log(
      `      ${seconds.toFixed(1)} s idle over 60 services: ${polls} marker polls, ${checks} resync checks; calls ${JSON.stringify(calls.byApi())}`,
    );
    // 2 a second at most, however many are due (a loaded machine only makes them slower): a bound on the time taken.
    expect(seconds, `seconds for ${checks} checks at 2 a second`).to.be.at.least((checks - 2) / 2);
    expect(calls.byApi()).to.deep.equal({ DiscoverInstancesRevision: polls + checks });
  });
});
