import { expect } from 'chai';
import fc from 'fast-check';
import { ObjectCache } from '../../../src/runtime/object-cache.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

function obj(namespace: string, name: string, rv: string, labels: Record<string, string> = {}): KubeObject {
  return { metadata: { namespace, name, resourceVersion: rv, labels } };
}

const names = (list: KubeObject[]) => list.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();

describe('ObjectCache (informer cache by namespace/name, namespace and label)', () => {
  it('reports add, update (with the old object) and delete, and skips a replay of the same resourceVersion', () => {
    const c = new ObjectCache<KubeObject>();
    const a1 = obj('demo', 'a', '1');
    const a2 = obj('demo', 'a', '2');
    expect(c.upsert(a1)).to.deep.equal({ type: 'add', object: a1 });
    expect(c.upsert(obj('demo', 'a', '1'))).to.equal(undefined);
    expect(c.upsert(a2)).to.deep.equal({ type: 'update', object: a2, old: a1 });
    expect(c.get('demo', 'a')).to.equal(a2);
    expect(c.remove(a2)).to.deep.equal({ type: 'delete', object: a2 });
    expect(c.remove(a2)).to.equal(undefined);
    expect(c.size).to.equal(0);
  });

  it('keeps cluster-scoped objects under the empty namespace', () => {
    const c = new ObjectCache<KubeObject>();
    c.upsert({ metadata: { name: 'cluster.clusterset.k8s.io', resourceVersion: '5' } });
    expect(c.get(undefined, 'cluster.clusterset.k8s.io')).to.not.equal(undefined);
    expect(c.get('', 'cluster.clusterset.k8s.io')).to.not.equal(undefined);
    expect(c.list('')).to.have.length(1);
  });

  it('lists by namespace, by label and by selector, and follows label changes', () => {
    const c = new ObjectCache<KubeObject>();
    c.upsert(obj('demo', 'a', '1', { app: 'x', tier: 'web' }));
    c.upsert(obj('demo', 'b', '1', { app: 'x' }));
    c.upsert(obj('other', 'c', '1', { app: 'x', tier: 'web' }));
    expect(names(c.list('demo'))).to.deep.equal(['demo/a', 'demo/b']);
    expect(names(c.listByLabel('app', 'x'))).to.deep.equal(['demo/a', 'demo/b', 'other/c']);
    expect(names(c.listByLabel('app', 'x', 'other'))).to.deep.equal(['other/c']);
    expect(names(c.listBySelector({ app: 'x', tier: 'web' }))).to.deep.equal(['demo/a', 'other/c']);
    expect(names(c.listBySelector({}, 'demo'))).to.deep.equal(['demo/a', 'demo/b']);
    c.upsert(obj('demo', 'a', '2', { app: 'y' }));
    expect(names(c.listByLabel('app', 'x'))).to.deep.equal(['demo/b', 'other/c']);
    expect(names(c.listByLabel('app', 'y'))).to.deep.equal(['demo/a']);
    expect(c.listByLabel('tier', 'web', 'demo')).to.deep.equal([]);
  });

  it('replace turns a relist into deletes for what is gone, adds for what is new and updates for what changed', () => {
    const c = new ObjectCache<KubeObject>();
    c.upsert(obj('demo', 'kept', '1'));
    c.upsert(obj('demo', 'changed', '1'));
    c.upsert(obj('demo', 'gone', '1'));
    const changes = c.replace([obj('demo', 'kept', '1'), obj('demo', 'changed', '2'), obj('demo', 'new', '3')]);
    expect(changes.map((ch) => `${ch.type}:${ch.object.metadata.name}`)).to.deep.equal([
      'delete:gone',
      'update:changed',
      'add:new',
    ]);
    expect(names(c.list())).to.deep.equal(['demo/changed', 'demo/kept', 'demo/new']);
  });

  it('caches our own write ahead of its watch event, skips older events meanwhile, and delivers the write when its event comes', () => {
    const c = new ObjectCache<KubeObject>();
    const a1 = obj('demo', 'a', '1');
    c.upsert(a1);
    const ours = obj('demo', 'a', '7', { app: 'x' });
    expect(c.observe(ours, '4')).to.equal(true);
    expect(c.get('demo', 'a')).to.equal(ours);
    expect(names(c.listByLabel('app', 'x'))).to.deep.equal(['demo/a']);
    expect(c.observedCount).to.equal(1);
    // An earlier write's event, still on its way: the cache keeps the newer state and says nothing yet.
    expect(c.upsert(obj('demo', 'a', '5'))).to.equal(undefined);
    expect(c.get('demo', 'a')).to.equal(ours);
    // The write's own event: delivered, though the cache already showed it, so handlers hear of it as of any change.
    const echo = obj('demo', 'a', '7', { app: 'x' });
    expect(c.upsert(echo)).to.deep.equal({ type: 'update', object: echo, old: ours });
    expect(c.observedCount).to.equal(0);
    expect(c.upsert(obj('demo', 'a', '7'))).to.equal(undefined);
  });

  it('takes only a write newer, by integer resourceVersion, than the cached copy and than what the watch delivered', () => {
    const c = new ObjectCache<KubeObject>();
    c.upsert(obj('demo', 'a', '10'));
    expect(c.observe(obj('demo', 'a', '9'), '10')).to.equal(false);
    expect(c.observe(obj('demo', 'a', '10'), '10')).to.equal(false);
    expect(c.observe(obj('demo', 'a', 'x1'), '10')).to.equal(false);
    expect(c.get('demo', 'a')!.metadata.resourceVersion).to.equal('10');
    // The watch already passed version 12 of an object it no longer has: it was deleted since, and stays gone.
    expect(c.observe(obj('demo', 'gone', '12'), '13')).to.equal(false);
    expect(c.get('demo', 'gone')).to.equal(undefined);
    const created = obj('demo', 'new', '14');
    expect(c.observe(created, '13')).to.equal(true);
    const added = obj('demo', 'new', '14');
    expect(c.upsert(added)).to.deep.equal({ type: 'update', object: added, old: created });
  });

  it('forgets a write on a delete and on a relist that no longer has the object (and reports the delete)', () => {
    const c = new ObjectCache<KubeObject>();
    const ours = obj('demo', 'a', '3');
    c.observe(ours, '2');
    expect(c.remove(obj('demo', 'a', '4'))).to.deep.equal({ type: 'delete', object: obj('demo', 'a', '4') });
    expect(c.observedCount).to.equal(0);
    c.observe(ours, '2');
    expect(c.replace([])).to.deep.equal([{ type: 'delete', object: ours }]);
    expect(c.observedCount).to.equal(0);
  });

  it("property: whatever our writes returned meanwhile, the watch's latest event is delivered and ends in the cache", () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('observe' as const), rv: fc.integer({ min: 1, max: 20 }) }),
      fc.record({ op: fc.constant('event' as const) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const c = new ObjectCache<KubeObject>();
        let watched = 0;
        for (const s of steps) {
          if (s.op === 'observe') c.observe(obj('demo', 'a', String(s.rv)), String(watched));
          else c.upsert(obj('demo', 'a', String(++watched)));
        }
        const latest = obj('demo', 'a', '21');
        expect(c.upsert(latest)).to.not.equal(undefined);
        expect(c.get('demo', 'a')).to.equal(latest);
        expect(c.observedCount).to.equal(0);
      }),
    );
  });

  it('property: after any sequence of writes, every index agrees with a scan of the objects', () => {
    const write = fc.record({
      op: fc.constantFrom('upsert', 'remove', 'replace'),
      ns: fc.constantFrom('a', 'b', ''),
      name: fc.constantFrom('x', 'y', 'z'),
      rv: fc.constantFrom('1', '2', '3'),
      labels: fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('p', 'q'), { maxKeys: 2 }),
    });
    fc.assert(
      fc.property(fc.array(write, { maxLength: 30 }), (writes) => {
        const c = new ObjectCache<KubeObject>();
        const truth = new Map<string, KubeObject>();
        for (const w of writes) {
          const o = obj(w.ns, w.name, w.rv, w.labels);
          const key = `${w.ns}/${w.name}`;
          if (w.op === 'upsert') {
            c.upsert(o);
            const old = truth.get(key);
            if (!old || old.metadata.resourceVersion !== w.rv) truth.set(key, o);
          } else if (w.op === 'remove') {
            c.remove(o);
            truth.delete(key);
          } else {
            c.replace([o]);
            const old = truth.get(key);
            truth.clear();
            truth.set(key, old && old.metadata.resourceVersion === w.rv ? old : o);
          }
        }
        const all = [...truth.values()];
        expect(names(c.list())).to.deep.equal(names(all));
        for (const ns of ['a', 'b', ''])
          expect(names(c.list(ns))).to.deep.equal(names(all.filter((o) => o.metadata.namespace === ns)));
        for (const k of ['app', 'tier']) {
          for (const v of ['p', 'q']) {
            expect(names(c.listByLabel(k, v))).to.deep.equal(names(all.filter((o) => o.metadata.labels?.[k] === v)));
          }
        }
      }),
    );
  });
});
