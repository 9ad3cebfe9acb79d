import { expect } from 'chai';
import type { CloudMapInstance } from '../../../src/core/types.ts';
import { InstanceView } from '../../../src/worker/instance-view.ts';

const me = { clusterId: 'cls1', clustersetId: 'set' };
const instance = (id: string, clusterId: string, extra: Record<string, string> = {}): CloudMapInstance =>
  ({ id, attributes: { CLUSTER_ID: clusterId, CLUSTERSET_ID: 'set', ...extra } });

describe('worker InstanceView (own writes over the watcher snapshot)', () => {
  let snapshot: CloudMapInstance[];
  let now: number;
  const view = () => new InstanceView(() => snapshot, me, 30_000, () => now);

  beforeEach(() => {
    snapshot = [instance('a', 'cls1'), instance('p', 'cls2')];
    now = 0;
  });

  it('without own writes it is the snapshot, one entry per id (the last copy)', () => {
    snapshot.push(instance('a', 'cls1', { READY: 'false' }));
    expect(view().instances('ns', 'svc')).to.deep.equal([instance('a', 'cls1', { READY: 'false' }), instance('p', 'cls2')]);
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
    expect(v.ours('ns', 'svc').map((i) => i.id), 'hidden behind the last complete write').to.deep.equal(['a']);
    v.forget('ns', 'svc');
    expect(v.ours('ns', 'svc').map((i) => i.id)).to.deep.equal(['a', 'stray']);
  });

  it('an own write older than the time-to-live gives way to the snapshot', () => {
    const v = view();
    v.recordWritten('ns', 'svc', []);
    expect(v.ours('ns', 'svc')).to.deep.equal([]);
    now = 30_000;
    expect(v.ours('ns', 'svc').map((i) => i.id)).to.deep.equal(['a']);
  });

  it('an instance of the same cluster id in another ClusterSet is not ours', () => {
    expect(view().isOurs({ id: 'x', attributes: { CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'other' } })).to.equal(false);
  });
});
