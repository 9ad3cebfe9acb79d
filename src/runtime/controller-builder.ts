// Declares a controller (controller.ts) the way controller-runtime's builder does: the kind it reconciles (`for`),
// the kinds it writes and maps back to their owner's key (`owns`), any other source with its key mapping (`watches`),
// then the reconciler (`complete`). Adding a controller is one declaration; nothing else is wired by hand.
// Usage:
//   const exports = new ControllerBuilder<string>('export', { concurrency: 8, metrics })
//     .for(informers.serviceExports, (se) => keyOf(se))
//     .owns(informers.endpointSlices, (slice) => ownerKeyOf(slice))
//     .watches(cloudMapChanges, (change) => [keyOf(change)])
//     .complete((key) => reconciler.reconcile(key));
//   exports.watch(); ...; exports.start(); exports.requeue(everyExport); ...; await exports.stop();
import type { KubeObject } from '../kube/resources.ts';
import { Controller, type ControllerOptions, type EventSource, type KeyMapping, type Watch } from './controller.ts';
import { informerEvents, type HandlerSource } from './event-sources.ts';

/** Everything of a controller but its name, sources and reconciler. */
export type ControllerSettings<K> = Omit<ControllerOptions<K>, 'name' | 'watches' | 'reconcile'>;

export class ControllerBuilder<K> {
  readonly #name: string;
  readonly #settings: ControllerSettings<K>;
  readonly #watches: Watch<K>[] = [];

  constructor(name: string, settings: ControllerSettings<K>) {
    this.#name = name;
    this.#settings = settings;
  }

  /** The kind this controller reconciles: each object's change queues the object's own key. */
  for<T extends KubeObject>(informer: HandlerSource<T>, key: (object: T) => K): this {
    return this.watches(informerEvents(informer), (object) => [key(object)]);
  }

  /** A kind this controller writes: a change to one queues the key of what it belongs to, if it belongs to one. */
  owns<T extends KubeObject>(informer: HandlerSource<T>, owner: (object: T) => K | undefined): this {
    return this.watches(informerEvents(informer), (object) => {
      const key = owner(object);
      return key === undefined ? [] : [key];
    });
  }

  /** Any source: each event queues the keys `map` gives for it. */
  watches<E>(source: EventSource<E>, map: KeyMapping<E, K>): this {
    this.#watches.push({
      subscribe: (add) =>
        source.subscribe((event, resync) => {
          for (const key of map(event)) add(key, resync);
        }),
    });
    return this;
  }

  /** The controller, with `reconcile` handed one key at a time; not watching yet (Controller.watch). */
  complete(reconcile: (key: K) => Promise<void>): Controller<K> {
    return new Controller<K>({ ...this.#settings, name: this.#name, watches: [...this.#watches], reconcile });
  }
}
