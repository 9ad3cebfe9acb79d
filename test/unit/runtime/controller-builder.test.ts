import { expect } from 'chai';
import { pino } from 'pino';
import { ControllerBuilder, type ControllerSettings } from '../../../src/runtime/controller-builder.ts';
import type { ControllerMetrics } from '../../../src/runtime/controller.ts';
import { Channel, informerEvents } from '../../../src/runtime/event-sources.ts';
import type { InformerHandlers } from '../../../src/runtime/informer.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const silent = pino({ level: 'silent' });

/**
 * Lets pending microtasks and I/O callbacks run: the queue hands work out asynchronously, and after 20 ms of work in
 * one turn of the event loop it waits for the next (so a loaded machine needs a few turns).
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/** An informer as far as a controller sees one: handlers the test calls by hand. */
function fakeInformer<T extends KubeObject>() {
  const handlers = new Set<InformerHandlers<T>>();
  return {
    addHandlers(h: InformerHandlers<T>) {
      handlers.add(h);
      return () => handlers.delete(h);
    },
    get handlers() {
      return [...handlers];
    },
    add: (o: T) => handlers.forEach((h) => h.onAdd?.(o)),
    update: (o: T, old: T) => handlers.forEach((h) => h.onUpdate?.(o, old)),
    delete: (o: T) => handlers.forEach((h) => h.onDelete?.(o)),
  };
}

function object(name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Thing', metadata: { namespace: 'ns', name, labels } };
}

const keyOfObject = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;

interface Gate {
  readonly key: string;
  open(): void;
  fail(err: Error): void;
}

/** A reconciler that records each key and finishes only when the test opens its gate. */
function gatedReconciler() {
  const gates: Gate[] = [];
  const reconcile = (key: string) =>
    new Promise<void>((resolve, reject) => gates.push({ key, open: resolve, fail: reject }));
  return { gates, reconcile, keys: () => gates.map((g) => g.key) };
}

function recordingMetrics() {
  const reconciles: string[] = [];
  const metrics: ControllerMetrics = {
    observeReconcile: (controller, result) => reconciles.push(`${controller} ${result}`),
    workQueue: { depth: () => {}, added: () => {}, retried: () => {}, waited: () => {}, processed: () => {} },
  };
  return { metrics, reconciles };
}

function settings(extra: Partial<ControllerSettings<string>> = {}): ControllerSettings<string> {
  return { concurrency: 1, logger: silent, ...extra };
}

describe('runtime/controller-builder', () => {
  it("for: each add, update and delete queues the object's own key; a resync queues it behind every change", async () => {
    const things = fakeInformer<KubeObject>();
    const r = gatedReconciler();
    const controller = new ControllerBuilder<string>('things', settings())
      .for(things, keyOfObject)
      .complete(r.reconcile);
    controller.watch();
    controller.start();
    const [a, b, c] = [object('a'), object('b'), object('c')];
    things.add(a);
    await settle();
    // While a is reconciled: b only resyncs (its old version is the very object), c changes.
    things.update(b, b);
    things.update(c, object('c'));
    r.gates[0]!.open();
    await settle();
    r.gates[1]!.open();
    await settle();
    r.gates[2]!.open();
    await settle();
    things.delete(a);
    await settle();
    expect(r.keys()).to.deep.equal(['ns/a', 'ns/c', 'ns/b', 'ns/a']);
    r.gates.forEach((g) => g.open());
    await controller.stop();
  });

  it('owns: an object queues the key of what it belongs to, and nothing when it belongs to nothing', async () => {
    const slices = fakeInformer<KubeObject>();
    const r = gatedReconciler();
    const controller = new ControllerBuilder<string>('things', settings({ concurrency: 4 }))
      .owns(slices, (o) => (o.metadata.labels?.owner === undefined ? undefined : `ns/${o.metadata.labels.owner}`))
      .complete(r.reconcile);
    controller.watch();
    controller.start();
    slices.add(object('s1', { owner: 'web' }));
    slices.add(object('s2'));
    await settle();
    expect(r.keys()).to.deep.equal(['ns/web']);
    r.gates.forEach((g) => g.open());
    await controller.stop();
  });

  it("watches: a channel's event queues every key its mapping gives, in order, each once while it waits", async () => {
    const changes = new Channel<string[]>();
    const r = gatedReconciler();
    const controller = new ControllerBuilder<string>('things', settings())
      .watches(changes, (keys) => keys)
      .complete(r.reconcile);
    controller.watch();
    controller.start();
    changes.emit(['x', 'y', 'z', 'y']);
    changes.emit(['z']);
    for (let i = 0; i < 3; i++) {
      await settle();
      r.gates[i]!.open();
    }
    await settle();
    expect(r.keys()).to.deep.equal(['x', 'y', 'z']);
    await controller.stop();
  });

  it('before start() hands mapped keys to whileStarting and reconciles none; start() then takes every mapped key', async () => {
    const changes = new Channel<string>();
    const waiting: string[] = [];
    const r = gatedReconciler();
    const controller = new ControllerBuilder<string>('things', settings({ whileStarting: (key) => waiting.push(key) }))
      .watches(changes, (key) => [key])
      .complete(r.reconcile);
    changes.emit('before-watch');
    controller.watch();
    changes.emit('a');
    controller.add('b');
    controller.addAfter('c', 0);
    await settle();
    expect(waiting).to.deep.equal(['a']);
    expect(r.keys()).to.deep.equal([]);
    controller.start();
    changes.emit('d');
    await settle();
    expect(r.keys()).to.deep.equal(['d']);
    r.gates.forEach((g) => g.open());
    await controller.stop();
  });

  it('stop() unsubscribes, drops waiting keys and resolves only once the reconcile in flight has finished', async () => {
    const things = fakeInformer<KubeObject>();
    const r = gatedReconciler();
    const controller = new ControllerBuilder<string>('things', settings())
      .for(things, keyOfObject)
      .complete(r.reconcile);
    controller.watch();
    controller.start();
    things.add(object('a'));
    things.add(object('b'));
    await settle();
    let stopped = false;
    const stopping = controller.stop().then(() => (stopped = true));
    expect(things.handlers).to.have.length(0);
    await settle();
    expect(stopped).to.equal(false);
    r.gates[0]!.open();
    await stopping;
    expect(r.keys()).to.deep.equal(['ns/a']);
    controller.start();
    controller.add('ns/c');
    await settle();
    expect(r.keys()).to.deep.equal(['ns/a']);
  });

  it('counts reconciles by result, retries a failed one, and neither counts nor retries one a stop cut short', async () => {
    class Cancelled extends Error {}
    const { metrics, reconciles } = recordingMetrics();
    const r = gatedReconciler();
    const controller = new ControllerBuilder<string>(
      'things',
      settings({
        metrics,
        cancelled: (err) => err instanceof Cancelled,
        backoff: { baseMs: 1, maxMs: 1, jitter: 0 },
      }),
    ).complete(r.reconcile);
    controller.start();
    controller.add('a');
    await settle();
    r.gates[0]!.fail(new Error('conflict'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(r.keys()).to.deep.equal(['a', 'a']);
    r.gates[1]!.open();
    await settle();
    controller.add('b');
    await settle();
    r.gates[2]!.fail(new Cancelled('stopping'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(r.keys()).to.deep.equal(['a', 'a', 'b']);
    expect(reconciles).to.deep.equal(['things error', 'things success']);
    await controller.stop();
  });

  it("waits for reconcileWhen before each reconcile, and skips the reconcile once the owner's signal aborted", async () => {
    let current!: () => void;
    const owner = new AbortController();
    const r = gatedReconciler();
    const controller = new ControllerBuilder<string>(
      'things',
      settings({
        signal: owner.signal,
        reconcileWhen: () => new Promise<void>((resolve) => (current = resolve)),
      }),
    ).complete(r.reconcile);
    controller.start();
    controller.add('a');
    await settle();
    expect(r.keys()).to.deep.equal([]);
    current();
    await settle();
    expect(r.keys()).to.deep.equal(['a']);
    r.gates[0]!.open();
    controller.add('b');
    await settle();
    owner.abort();
    current();
    await controller.stop();
    expect(r.keys()).to.deep.equal(['a']);
  });
});

describe('runtime/event-sources', () => {
  it('informerEvents subscribes to the events asked for only, and tells a resync from an update', () => {
    const things = fakeInformer<KubeObject>();
    const seen: string[] = [];
    const unsubscribe = informerEvents(things, ['added', 'updated']).subscribe((o, resync) =>
      seen.push(`${o.metadata.name} ${resync}`),
    );
    const a = object('a');
    things.add(a);
    things.update(a, object('a'));
    things.update(a, a);
    things.delete(a);
    expect(seen).to.deep.equal(['a false', 'a false', 'a true']);
    expect(Object.keys(things.handlers[0]!)).to.have.members(['onAdd', 'onUpdate']);
    unsubscribe();
    expect(things.handlers).to.have.length(0);
  });

  it('a Channel tells every subscriber, in the order they subscribed, until each unsubscribes', () => {
    const channel = new Channel<number>();
    const seen: string[] = [];
    const first = channel.subscribe((n) => seen.push(`first ${n}`));
    channel.subscribe((n) => seen.push(`second ${n}`));
    channel.emit(1);
    first();
    channel.emit(2);
    expect(seen).to.deep.equal(['first 1', 'second 1', 'second 2']);
  });
});
