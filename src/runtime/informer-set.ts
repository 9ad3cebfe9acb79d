// A named set of informers over whole collections (all namespaces), started, synced and stopped together: the one way
// a process sets up its watches. The worker watches six kinds and the webhook server four; each names its kinds and
// what its caches keep of them (trim.ts), and reads the informers from `informers`.
// Usage:
//   const set = createInformerSet({ services: { resource: SERVICES, trim: keepFields<ServiceObject>('spec') } },
//     { kubeConfig, resyncMs: 0, logger });
//   set.start(); await set.waitForSync(signal); set.informers.services.list('demo'); ...; await set.stop();
import { createInformer, type Informer, type InformerMetrics } from './informer.ts';
import type { ObjectTrim } from './trim.ts';
import type { Logger } from '../observability/log.ts';
import type { KubeAccess } from '../kube/kube-access.ts';
import { resourcePath, type KubeObject, type ResourceType } from '../kube/resources.ts';

/** One kind of the set: what to watch, and what its cache keeps of each object. */
export interface InformerSpec<T> {
  resource: ResourceType;
  trim: ObjectTrim<T>;
}

export interface InformerSetOptions {
  kubeConfig: KubeAccess;
  /** Every cached object is handed to the handlers again this often; 0 turns it off (a reader that only looks up). */
  resyncMs: number;
  metrics?: InformerMetrics;
  logger?: Logger;
}

export interface InformerSet<S extends { [K in keyof S]: KubeObject }> {
  readonly informers: { readonly [K in keyof S]: Informer<S[K]> };
  readonly start: () => void;
  /** The informers whose first list has not completed yet; empty once all are synced. */
  readonly unsynced: () => Array<keyof S & string>;
  /** True once every informer has listed once. */
  readonly synced: () => boolean;
  readonly waitForSync: (signal?: AbortSignal) => Promise<void>;
  /** True while every cache follows its server (none is recovering from a failed list or watch). */
  readonly current: () => boolean;
  /** Resolves once every cache is current at the same time; rejects when `signal` aborts or an informer stops. */
  readonly waitUntilCurrent: (signal?: AbortSignal) => Promise<void>;
  readonly stop: () => Promise<void>;
}

export function createInformerSet<S extends { [K in keyof S]: KubeObject }>(
  specs: { [K in keyof S]: InformerSpec<S[K]> },
  options: InformerSetOptions,
): InformerSet<S> {
  const informers = {} as { [K in keyof S]: Informer<S[K]> };
  for (const name of Object.keys(specs) as Array<keyof S & string>) {
    const { resource, trim } = specs[name];
    informers[name] = createInformer<S[typeof name]>({
      kubeConfig: options.kubeConfig,
      path: resourcePath(resource),
      resyncMs: options.resyncMs,
      trim,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }
  const names = Object.keys(informers) as Array<keyof S & string>;
  const all: Informer<KubeObject>[] = Object.values(informers);
  return {
    informers,
    start: () => all.forEach((i) => i.start()),
    unsynced: () => names.filter((name) => !informers[name].hasSynced()),
    synced: () => all.every((i) => i.hasSynced()),
    waitForSync: async (signal) => {
      await Promise.all(all.map((i) => i.waitForSync(signal)));
    },
    current: () => all.every((i) => i.isCurrent()),
    waitUntilCurrent: async (signal) => {
      // One may fail again while waiting for another.
      while (!all.every((i) => i.isCurrent())) await Promise.all(all.map((i) => i.waitUntilCurrent(signal)));
    },
    stop: async () => {
      await Promise.all(all.map((i) => i.stop()));
    },
  };
}
