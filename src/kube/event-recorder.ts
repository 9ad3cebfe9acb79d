// Kubernetes Events (events.k8s.io/v1) for condition transitions and operator-facing problems (missing
// ClusterProperties). Bursts are deduplicated: the same (object, type, reason, message) within the dedupe window
// creates one Event and then only updates its `series` (count, lastObservedTime), at most once per series interval,
// so a reconcile loop that fails every second does not flood the apiserver. Recording never throws and never blocks
// the caller: write failures are logged.
// Usage:
//   const events = new EventRecorder({ kubeConfig, reportingInstance: podName });
//   events.record(serviceExport, 'Warning', 'NoService', 'Create Service demo/nginx to export it.', 'Reconcile');
//   await events.flush();   // on shutdown

import { CONTROLLER_NAME } from '../core/names.ts';
import { createLogger, type Logger } from '../observability/log.ts';
import { errorText } from './api-error.ts';
import { CONTENT_MERGE_PATCH, kubeClientFor, type KubeClient } from './client.ts';
import { microTime } from './micro-time.ts';
import { apiVersionOf, EVENTS, objectKey, resourcePath, type KubeObject } from './resources.ts';
import type { KubeAccess } from './kube-access.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  kubeConfig: KubeAccess;
  /** Which controller reports (events.k8s.io reportingController). */
  reportingController?: string;
  /** Which replica reports (the pod name). */
  reportingInstance: string;
  /** Repeats within this window update the first Event instead of creating new ones. */
  dedupeWindowMs?: number;
  /** Minimum time between two series updates of one Event. */
  seriesIntervalMs?: number;
  /** How many distinct recent events are remembered for deduplication. */
  maxTracked?: number;
  logger?: Logger;
  now?: () => number;
}

interface Tracked {
  namespace: string;
  name: string | undefined;
  firstAt: number;
  count: number;
  writtenCount: number;
  lastWrittenAt: number;
  timer: NodeJS.Timeout | undefined;
}

/** events.k8s.io limits: note at most 1 kB, reason and action at most 128 characters. */
const NOTE_MAX = 1024;
const FIELD_MAX = 128;

export class EventRecorder {
  readonly #client: KubeClient;
  readonly #controller: string;
  readonly #instance: string;
  readonly #window: number;
  readonly #seriesInterval: number;
  readonly #maxTracked: number;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #tracked = new Map<string, Tracked>();
  readonly #pending = new Set<Promise<void>>();

  constructor(opts: EventRecorderOptions) {
    this.#client = kubeClientFor(opts.kubeConfig);
    this.#controller = opts.reportingController ?? CONTROLLER_NAME;
    this.#instance = opts.reportingInstance.slice(0, FIELD_MAX);
    this.#window = opts.dedupeWindowMs ?? 600_000;
    this.#seriesInterval = opts.seriesIntervalMs ?? 30_000;
    this.#maxTracked = opts.maxTracked ?? 4096;
    this.#log = (opts.logger ?? createLogger('events')).child({ cluster: this.#client.cluster });
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Records an Event about `object` (which needs apiVersion, kind and metadata). Cluster-scoped objects get their
   * Events in the `default` namespace. `action` says what the controller was doing (default `Reconcile`).
   */
  record(object: KubeObject, type: EventType, reason: string, message: string, action = 'Reconcile'): void {
    const now = this.#now();
    const namespace = object.metadata.namespace || 'default';
    const key = JSON.stringify([
      object.kind,
      object.metadata.uid ?? '',
      namespace,
      object.metadata.name,
      type,
      reason,
      message,
    ]);
    const seen = this.#tracked.get(key);
    if (seen && now - seen.firstAt < this.#window) {
      seen.count++;
      this.#scheduleSeries(seen);
      return;
    }
    if (seen) clearTimeout(seen.timer);
    this.#tracked.delete(key);
    const entry: Tracked = {
      namespace,
      name: undefined,
      firstAt: now,
      count: 1,
      writtenCount: 0,
      lastWrittenAt: now,
      timer: undefined,
    };
    this.#tracked.set(key, entry);
    this.#evictOldest();
    this.#track(this.#create(entry, object, type, reason, message, action));
  }

  /** Resolves once every Event recorded so far is written, series counts included (shutdown, tests). */
  async flush(): Promise<void> {
    await this.#drain();
    for (const entry of this.#tracked.values()) {
      if (entry.name === undefined || entry.count <= entry.writtenCount) continue;
      clearTimeout(entry.timer);
      entry.timer = undefined;
      this.#track(this.#writeSeries(entry));
    }
    await this.#drain();
  }

  async #drain(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  #track(write: Promise<void>): void {
    this.#pending.add(write);
    void write.finally(() => this.#pending.delete(write));
  }

  #evictOldest(): void {
    while (this.#tracked.size > this.#maxTracked) {
      const [oldestKey, oldest] = this.#tracked.entries().next().value!;
      clearTimeout(oldest.timer);
      this.#tracked.delete(oldestKey);
    }
  }

  #scheduleSeries(entry: Tracked): void {
    if (entry.timer) return;
    const wait = Math.max(0, entry.lastWrittenAt + this.#seriesInterval - this.#now());
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      this.#track(this.#writeSeries(entry));
    }, wait);
    entry.timer.unref();
  }

  async #create(
    entry: Tracked,
    object: KubeObject,
    type: EventType,
    reason: string,
    message: string,
    action: string,
  ): Promise<void> {
    const now = this.#now();
    const name = `${object.metadata.name}.${now.toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`;
    const body = {
      apiVersion: apiVersionOf(EVENTS),
      kind: EVENTS.kind,
      metadata: { name, namespace: entry.namespace },
      eventTime: microTime(now),
      reportingController: this.#controller,
      reportingInstance: this.#instance,
      action: action.slice(0, FIELD_MAX),
      reason: reason.slice(0, FIELD_MAX),
      note: truncateBytes(message, NOTE_MAX),
      type,
      regarding: {
        apiVersion: object.apiVersion,
        kind: object.kind,
        name: object.metadata.name,
        namespace: object.metadata.namespace,
        uid: object.metadata.uid,
        resourceVersion: object.metadata.resourceVersion,
      },
    };
    try {
      await this.#client.request({
        method: 'POST',
        path: resourcePath(EVENTS, entry.namespace),
        body,
        target: `Event ${objectKey(entry.namespace, name)}`,
      });
      entry.name = name;
      entry.writtenCount = 1;
      entry.lastWrittenAt = this.#now();
      // Repeats that arrived while the Event was being created.
      if (entry.count > entry.writtenCount) this.#scheduleSeries(entry);
    } catch (err) {
      this.#log.warn(
        {
          event: 'event-write-failed',
          object: objectKey(object.metadata.namespace, object.metadata.name),
          kind: object.kind,
          reason,
          err: errorText(err),
        },
        'could not record event',
      );
    }
  }

  async #writeSeries(entry: Tracked): Promise<void> {
    if (!entry.name || entry.count <= entry.writtenCount) return;
    const count = entry.count;
    try {
      await this.#client.request({
        method: 'PATCH',
        path: resourcePath(EVENTS, entry.namespace, entry.name),
        target: `Event ${objectKey(entry.namespace, entry.name)}`,
        contentType: CONTENT_MERGE_PATCH,
        body: { series: { count, lastObservedTime: microTime(this.#now()) } },
      });
      entry.writtenCount = count;
      entry.lastWrittenAt = this.#now();
    } catch (err) {
      this.#log.warn(
        { event: 'event-write-failed', name: entry.name, namespace: entry.namespace, err: errorText(err) },
        'could not update event series',
      );
    }
  }
}

function truncateBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let out = text.slice(0, max);
  while (Buffer.byteLength(out) > max - 3) out = out.slice(0, -1);
  return `${out}...`;
}
