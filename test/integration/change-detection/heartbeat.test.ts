// Dead clusters against the emulator: every watcher beats next to the change markers and reads its peers' beats with
// the markers; a stopped cluster's stamp stops changing while the others' go on; the reaper's deregistration touches
// only the dead cluster's instances and refuses this cluster's own.
import { expect } from 'chai';
import { OwnershipError } from '../../../src/cloudmap/errors.ts';
import { watchCloudMap, type CloudMapWatcher } from '../../../src/change-detection/cloudmap-watcher.ts';
import { adapterFor, instanceOf, registerAll, withEmulator } from '../cloudmap/fixtures.ts';
import { eventually } from '../../support/eventually.ts';

const POLL_MS = 200;
const HEARTBEAT_MS = 600;

describe('cloudmap heartbeats and reaping on the emulator (dead clusters)', function () {
  this.timeout(60_000);
  const { moto, running } = withEmulator();

  function watch(clusterId: string, extra: Parameters<typeof adapterFor>[2] = {}) {
    const t = adapterFor(moto().endpoint, clusterId, extra);
    let beats = 0;
    const watcher = watchCloudMap(t.adapter, {
      onChange: () => {},
      pollIntervalMs: POLL_MS,
      heartbeatIntervalMs: HEARTBEAT_MS,
      onHeartbeat: () => beats++,
    });
    running.push(watcher);
    return { ...t, watcher, beats: () => beats };
  }

  it("each cluster beats and sees the other's beats; a stopped cluster's stamp stops changing, the others' go on", async () => {
    const a = watch('cls1');
    const b = watch('cls2');
    await Promise.all([a.watcher.start(), b.watcher.start()]);
    const stamps = (w: CloudMapWatcher, clusterId: string) => w.heartbeats().sightings.get(clusterId)?.stamp;
    const seen = new Set<number>();
    await eventually(
      'cls1 to see three different beats of cls2',
      () => {
        const stamp = stamps(a.watcher, 'cls2');
        if (stamp !== undefined) seen.add(stamp);
        return seen.size >= 3;
      },
      30_000,
    );
    await eventually('cls2 to see cls1 beat', () => stamps(b.watcher, 'cls1') !== undefined, 30_000);

    await b.watcher.stop();
    running.splice(running.indexOf(b.watcher), 1);
    const beats = b.beats();
    await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_MS));
    const last = a.watcher.heartbeats().sightings.get('cls2')!;
    const own = stamps(a.watcher, 'cls1');
    await new Promise((r) => setTimeout(r, 3 * HEARTBEAT_MS));
    expect(a.watcher.heartbeats().sightings.get('cls2'), "cls2's sighting after it stopped").to.deep.equal(last);
    expect(stamps(a.watcher, 'cls1'), 'cls1 still beats').to.not.equal(own);
    expect(a.watcher.heartbeats().readAt).to.be.greaterThan(last.heardAt + 3 * HEARTBEAT_MS);
    // One RegisterInstance per beat. (A beat sent while the previous one's operation still runs, as at this test's
    // short interval, is refused with DuplicateRequest and sent again once that operation ends.)
    expect(b.calls.count('RegisterInstance', 'success')).to.equal(beats);
  });

  // Both fail on a heartbeat written at the start of each poll and queued behind the registrations, as before: in a
  // 10,000-service sync a peer withdrew a live cluster's endpoints for minutes (2026-11-29, git show 482add3:docs/benchmarks.md).
  it("beats ahead of this cluster's registrations waiting for the rate limit", async () => {
    const a = watch('cls1', { rateLimits: { RegisterInstance: 2 } });
    const b = watch('cls2');
    const service = await a.adapter.ensureService(await a.adapter.ensureNamespace('bulk'), 'big');
    // 24 registrations at 2/s: the last leaves the queue about 10 s from now.
    const queued = Promise.all(
      Array.from({ length: 24 }, (_, n) => a.adapter.registerInstance(service, instanceOf('cls1', `i-${n}`))),
    );
    await Promise.all([a.watcher.start(), b.watcher.start()]);
    await eventually('cls2 to see cls1 beat', () => b.watcher.heartbeats().sightings.has('cls1'), 30_000);
    // Order, not time: a beat that waited its turn would be seen only after all 24 (a loaded machine slows both alike).
    expect(
      a.calls.count('RegisterInstance', 'success'),
      'registrations sent before the beat was seen (all 24 when it waits its turn)',
    ).to.be.below(24);
    await queued;
  });

  it('beats on time while a poll takes long (re-reading many changed services)', async () => {
    const a = watch('cls1', { rateLimits: { DiscoverInstances: 1 } });
    const b = watch('cls2');
    await Promise.all([a.watcher.start(), b.watcher.start()]);
    const names = Array.from({ length: 20 }, (_, n) => `svc-${n}`);
    const namespace = await b.adapter.ensureNamespace('changed');
    const services: string[] = [];
    for (const name of names) services.push(await b.adapter.ensureService(namespace, name));
    await Promise.all(services.map((id, n) => registerAll(b.adapter, id, [instanceOf('cls2', `b-${n}`)])));
    await b.watcher.markChanged('changed', names);
    // cls1 re-reads the 20 services at 1 DiscoverInstances a second: one poll of about 20 s.
    const reads = () => a.calls.count('DiscoverInstances', 'success');
    const before = reads();
    await eventually('cls1 to start re-reading the changed services', () => reads() >= before + 3, 30_000);
    const beats = a.beats();
    // 10 intervals; a beat also waits for its predecessor's operation (1 s on the emulator), so about 5 beats.
    await new Promise((r) => setTimeout(r, 10 * HEARTBEAT_MS));
    expect(reads(), 'cls1 still in that poll').to.be.below(before + 20);
    expect(a.beats() - beats, 'beats in 10 intervals while the poll ran').to.be.at.least(3);
  });

  it('reaping deregisters every instance of the dead cluster and nothing of another; this cluster is never reaped', async () => {
    const { adapter } = adapterFor(moto().endpoint, 'cls1');
    const dead = adapterFor(moto().endpoint, 'cls2').adapter;
    const service = await adapter.ensureService(await adapter.ensureNamespace('demo'), 'web');
    await registerAll(adapter, service, [instanceOf('cls1', 'a-1'), instanceOf('cls1', 'a-2')]);
    await registerAll(dead, service, [instanceOf('cls2', 'b-1'), instanceOf('cls2', 'b-2')]);
    // The emulator keeps a copy per registration: each gets its own DeregisterInstance.
    await registerAll(dead, service, [instanceOf('cls2', 'b-1', { READY: 'false' })]);

    await adapter.waitForOperations(await adapter.instances.reapInstances(service, 'cls2'));
    expect((await adapter.listInstances(service)).map((i) => i.id).sort()).to.deep.equal(['a-1', 'a-2']);
    expect(() => adapter.instances.reapInstances(service, 'cls1')).to.throw(OwnershipError, /it is this cluster/);
    expect((await adapter.listInstances(service)).map((i) => i.id).sort()).to.deep.equal(['a-1', 'a-2']);
    adapter.destroy();
    dead.destroy();
  });
});
