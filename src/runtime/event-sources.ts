// The event sources a controller (controller.ts) watches besides its own queue: an informer's changes, and a channel
// that code outside any informer emits into (a change read from elsewhere, a judgement made on a timer).
import type { KubeObject } from '../kube/resources.ts';
import type { EventSource } from './controller.ts';
import type { InformerHandlers } from './informer.ts';

/** An informer as a controller sees it: something that calls handlers on each change. */
export interface HandlerSource<T> {
  addHandlers(handlers: InformerHandlers<T>): () => void;
}

export type InformerEvent = 'added' | 'updated' | 'deleted';

/**
 * Each object an informer adds, updates or deletes (the deleted one as last known). An informer's periodic resync
 * delivers each cached object as its own old version: that update is a resync.
 */
export function informerEvents<T extends KubeObject>(
  informer: HandlerSource<T>,
  events: readonly InformerEvent[] = ['added', 'updated', 'deleted'],
): EventSource<T> {
  return {
    subscribe: (emit) =>
      informer.addHandlers({
        ...(events.includes('added') ? { onAdd: (o: T) => emit(o, false) } : {}),
        ...(events.includes('updated') ? { onUpdate: (o: T, old: T) => emit(o, o === old) } : {}),
        ...(events.includes('deleted') ? { onDelete: (o: T) => emit(o, false) } : {}),
      }),
  };
}

/** A source that code emits into; every subscriber hears each event, in the order they subscribed. */
export class Channel<E> implements EventSource<E> {
  readonly #subscribers = new Set<(event: E, resync: boolean) => void>();

  subscribe(emit: (event: E, resync: boolean) => void): () => void {
    // Wrapped, so one function subscribed twice is two subscribers.
    const subscriber = (event: E, resync: boolean) => emit(event, resync);
    this.#subscribers.add(subscriber);
    return () => this.#subscribers.delete(subscriber);
  }

  emit(event: E): void {
    for (const subscriber of this.#subscribers) subscriber(event, false);
  }
}
