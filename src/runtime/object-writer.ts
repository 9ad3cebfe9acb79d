// Writes of Kubernetes objects for the worker: server-side apply of the objects it owns (ServiceImports, derived
// Services, EndpointSlices) and of the status it reports (ServiceExport/ServiceImport conditions), deletion guarded by
// uid, and finalizer changes that retry on conflicts. Every error names the verb, kind, namespace/name and cluster.
// Usage:
//   const writer = new ObjectWriter({ kubeConfig });                 // field manager mcs-cloudmap-worker
//   await writer.apply(SERVICE_IMPORTS, { metadata: { namespace, name, labels }, spec });
//   await writer.applyStatus(SERVICE_EXPORTS, { metadata: { namespace, name }, status: { conditions } });
//   await writer.delete(ENDPOINT_SLICES, namespace, name, { uid });
//   await writer.addFinalizer(SERVICE_EXPORTS, namespace, name, SERVICE_EXPORT_FINALIZER);

import { isConflict, isNotFound } from '../kube/api-error.ts';
import { backoffDelay, sleep, type BackoffPolicy } from './backoff.ts';
import { CONTENT_APPLY_PATCH, CONTENT_MERGE_PATCH, kubeClientFor, type KubeClient } from '../kube/client.ts';
import { apiVersionOf, objectKey, resourcePath, type KubeObject, type ResourceType } from '../kube/resources.ts';
import type { KubeAccess } from '../kube/kube-access.ts';

export const WORKER_FIELD_MANAGER = 'mcs-cloudmap-worker';

export interface ObjectWriterOptions {
  kubeConfig: KubeAccess;
  /** Owner of the fields this writer applies. */
  fieldManager?: string;
  /** Attempts of a finalizer change that keeps meeting concurrent writers. */
  conflictAttempts?: number;
  conflictBackoff?: BackoffPolicy;
  /** Told of every object as a write returned it, so a cache can show it before its watch event comes. */
  onWritten?: (resource: ResourceType, written: KubeObject) => void;
}

export interface DeleteOptions {
  /** Deletes only the object with this uid (not a newer one with the same name). */
  uid?: string;
  /** Deletes only if nothing changed since this resourceVersion. */
  resourceVersion?: string;
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
}

/** An object to apply: metadata needs namespace (when namespaced) and name; apiVersion and kind default from the resource. */
export type ApplyObject = Omit<KubeObject, 'apiVersion' | 'kind'> & {
  apiVersion?: string;
  kind?: string;
  [field: string]: unknown;
};

export class ObjectWriter {
  readonly fieldManager: string;
  readonly #client: KubeClient;
  readonly #attempts: number;
  readonly #backoff: BackoffPolicy;
  readonly #onWritten: (resource: ResourceType, written: KubeObject) => void;

  constructor(opts: ObjectWriterOptions) {
    this.#client = kubeClientFor(opts.kubeConfig);
    this.fieldManager = opts.fieldManager ?? WORKER_FIELD_MANAGER;
    this.#attempts = opts.conflictAttempts ?? 8;
    this.#backoff = opts.conflictBackoff ?? { baseMs: 20, maxMs: 1000, jitter: 0.5 };
    this.#onWritten = opts.onWritten ?? (() => undefined);
  }

  get cluster(): string {
    return this.#client.cluster;
  }

  /**
   * Server-side apply (force): the object ends up with exactly the fields given here owned by this field manager;
   * fields other managers own are kept. Idempotent: applying the same object twice changes nothing.
   */
  apply<T extends KubeObject>(resource: ResourceType, object: ApplyObject): Promise<T> {
    return this.#apply<T>(resource, object, undefined);
  }

  /** Server-side apply of `status` on the status subresource (conditions, clusters). */
  applyStatus<T extends KubeObject>(resource: ResourceType, object: ApplyObject): Promise<T> {
    return this.#apply<T>(resource, object, 'status');
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubeObject>(
    resource: ResourceType,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined> {
    try {
      return await this.#client.request<T>({
        method: 'GET',
        path: resourcePath(resource, namespace, name),
        target: target(resource, namespace, name),
      });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Deletes the object; false when it was already gone. */
  async delete(
    resource: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions = {},
  ): Promise<boolean> {
    const preconditions =
      opts.uid || opts.resourceVersion ? { uid: opts.uid, resourceVersion: opts.resourceVersion } : undefined;
    try {
      await this.#client.request({
        method: 'DELETE',
        path: resourcePath(resource, namespace, name),
        target: target(resource, namespace, name),
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          preconditions,
          propagationPolicy: opts.propagationPolicy ?? 'Background',
        },
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /**
   * Adds `finalizer` unless present; returns the object as it now is, or undefined when it does not exist. An object
   * already being deleted gets no new finalizer (the apiserver forbids it) and is returned as is.
   */
  addFinalizer<T extends KubeObject>(
    resource: ResourceType,
    namespace: string | undefined,
    name: string,
    finalizer: string,
  ): Promise<T | undefined> {
    return this.#changeFinalizers<T>(resource, namespace, name, (obj) => {
      const list = obj.metadata.finalizers ?? [];
      return list.includes(finalizer) || obj.metadata.deletionTimestamp ? undefined : [...list, finalizer];
    });
  }

  /** Removes `finalizer` if present; returns the object as it now is, or undefined when it is gone (possibly because of this). */
  removeFinalizer<T extends KubeObject>(
    resource: ResourceType,
    namespace: string | undefined,
    name: string,
    finalizer: string,
  ): Promise<T | undefined> {
    return this.#changeFinalizers<T>(resource, namespace, name, (obj) => {
      const list = obj.metadata.finalizers ?? [];
      return list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined;
    });
  }

  async #apply<T extends KubeObject>(
    resource: ResourceType,
    object: ApplyObject,
    subresource: 'status' | undefined,
  ): Promise<T> {
    const { namespace, name } = object.metadata;
    const body = {
      ...object,
      apiVersion: object.apiVersion ?? apiVersionOf(resource),
      kind: object.kind ?? resource.kind,
    };
    const written = await this.#client.request<T>({
      method: 'PATCH',
      path: resourcePath(resource, namespace, name, subresource),
      target: target(resource, namespace, name, subresource),
      query: { fieldManager: this.fieldManager, force: true },
      contentType: CONTENT_APPLY_PATCH,
      body,
    });
    this.#onWritten(resource, written);
    return written;
  }

  /**
   * Read, compute the new finalizer list, write it with the resourceVersion read (so a concurrent change is a 409,
   * never lost), and on 409 start over after a short backoff.
   */
  async #changeFinalizers<T extends KubeObject>(
    resource: ResourceType,
    namespace: string | undefined,
    name: string,
    next: (obj: T) => string[] | undefined,
  ): Promise<T | undefined> {
    for (let attempt = 1; ; attempt++) {
      const obj = await this.get<T>(resource, namespace, name);
      if (!obj) return undefined;
      const finalizers = next(obj);
      if (!finalizers) return obj;
      try {
        const written = await this.#client.request<T>({
          method: 'PATCH',
          path: resourcePath(resource, namespace, name),
          target: target(resource, namespace, name),
          contentType: CONTENT_MERGE_PATCH,
          body: { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } },
        });
        this.#onWritten(resource, written);
        return written;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        if (!isConflict(err) || attempt >= this.#attempts) throw err;
        await sleep(backoffDelay(this.#backoff, attempt));
      }
    }
  }
}

function target(resource: ResourceType, namespace: string | undefined, name: string, subresource?: string): string {
  return `${resource.kind} ${objectKey(namespace, name)}${subresource ? ` (${subresource})` : ''}`;
}
