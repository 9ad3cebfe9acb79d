import { expect } from 'chai';
import type { CloudMapInstance } from '../../../src/core/types.ts';
import { InstanceView } from '../../../src/worker/instance-view.ts';

const me = { clusterId: 'cls1', clustersetId: 'set' };
const instance = (id: string, clusterId: string, extra: Record<string, string> = {}): CloudMapInstance => ({
  id,
  attributes: { CLUSTER_ID: clusterId, CLUSTERSET_ID: 'set', ...extra },
});

describe('worker InstanceView (own writes over the watcher snapshot)', () => {
  let snapshot: CloudMapInstance[];
  let now: number;
  /** When the watcher's last read of the service began. */
  let readAt: number | undefined;
  const view = () =>
    new InstanceView(
      () => snapshot,
      () => readAt,
      me,
      5_000,
      () => now,
    );

  beforeEach(() => {
    snapshot = [instance('a', 'cls1'), instance('p', 'cls2')];
    now = 0;
    readAt = undefined;
  });

  it('without own writes it is the snapshot, one entry per id (the last copy)', () => {
    snapshot.push(instance('a', 'cls1', { READY: 'false' }));
    expect(view().instances('ns', 'svc')).to.deep.equal([
      instance('a', 'cls1', { READY: 'false' }),
      instance('p', 'cls2'),
    ]);
  });

  it('M4: what this cluster wrote replaces only its own instances until the watcher catches up', () => {
    const v = view();
    v.recordWritten('ns', 'svc', [instance('b', 'cls1')]);
    expect(v.instances('ns', 'svc').map((i) => i.id)).to.deep.equal(['p', 'b']);
    expect(v.ours('ns', 'svc').map((i) => i.id)).to.deep.equal(['b']);
    expect(v.instances('ns', 'other').map((i) => i.id)).to.deep.equal(['a', 'p']);
    snapshot = [instance('p', 'cls2'), instance('b', 'cls1')];
    expect(v.instances('ns', 'svc').map((i) => i.id)).to.deep.equal(['p', 'b']);
    // Caught up: later snapshot changes (an external deletion) show again.
    snapshot = [instance('p', 'cls2')];
    expect(v.ours('ns', 'svc')).to.deep.equal([]);
  });

  it('E8: after writes that failed partway the snapshot is the truth again, so an instance registered meanwhile is seen (and withdrawn)', () => {
    const v = view();
    v.recordWritten('ns', 'svc', [instance('a', 'cls1')]);
    // A failed pass registered 'stray' (its answer lost); the watcher's re-read shows it.
    snapshot = [instance('a', 'cls1'), instance('stray', 'cls1'), instance('p', 'cls2')];
    expect(
      v.ours('ns', 'svc').map((i) => i.id),
      'hidden behind the last complete write',
    ).to.deep.equal(['a']);
    v.forget('ns', 'svc');
    expect(v.ours('ns', 'svc').map((i) => i.id)).to.deep.equal(['a', 'stray']);
  });

  it('I2, M4: an own write outlives any delay of the watcher, however old, while no read since showed otherwise', () => {
    const v = view();
    now = 1_000;
    readAt = 500;
    v.recordWritten('ns', 'svc', []);
    now = 600_000; // the watcher has not read the service again (a loaded reader, a slow resync)
    expect(v.ours('ns', 'svc'), 'our deregistration still stands').to.deep.equal([]);
    readAt = 3_000; // a read begun too soon after the write may not show it yet
    expect(v.ours('ns', 'svc')).to.deep.equal([]);
  });

  it('gives way to a read begun after the write had settled that disagrees (an external change is repaired)', () => {
    const v = view();
    now = 1_000;
    v.recordWritten('ns', 'svc', []);
    readAt = 6_000;
    expect(v.ours('ns', 'svc').map((i) => i.id)).to.deep.equal(['a']);
  });

  it('an instance of the same cluster id in another ClusterSet is not ours', () => {
    expect(view().isOurs({ id: 'x', attributes: { CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'other' } })).to.equal(false);
  });
});
