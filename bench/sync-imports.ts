// What one cluster imports, as the benchmark sees it through watches: which ServiceImports are Ready and which
// endpoints (with readiness) the controller's EndpointSlices hold, per namespace/name, with no polling of the API.
import type { KubeConfig } from '@kubernetes/client-node';
import { CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '../src/core/names.ts';
import { createInformer, type Informer } from '../src/runtime/informer.ts';
import { ENDPOINT_SLICES, resourcePath, SERVICE_IMPORTS, type KubeObject } from '../src/kube/resources.ts';
import type { Logger } from '../src/observability/log.ts';

type SliceObject = KubeObject & { endpoints?: Array<{ addresses: string[]; conditions?: { ready?: boolean } }> };
type ImportObject = KubeObject & { status?: { conditions?: Array<{ type: string; status: string }> } };

export class ImportWatch {
  readonly #imports: Informer<ImportObject>;
  readonly #slices: Informer<SliceObject>;
  readonly #waiters = new Set<() => void>();

  constructor(kubeConfig: KubeConfig, logger: Logger) {
    this.#imports = createInformer<ImportObject>({
      kubeConfig,
      path: resourcePath(SERVICE_IMPORTS),
      resyncMs: 0,
      logger,
    });
    this.#slices = createInformer<SliceObject>({
      kubeConfig,
      path: resourcePath(ENDPOINT_SLICES),
      labelSelector: `${LABEL_MANAGED_BY}=${CONTROLLER_NAME}`,
      resyncMs: 0,
      logger,
    });
    for (const informer of [this.#imports, this.#slices] as Array<Informer<KubeObject>>) {
      informer.addHandlers({ onAdd: () => this.#wake(), onUpdate: () => this.#wake(), onDelete: () => this.#wake() });
    }
  }

  async start(): Promise<void> {
    this.#imports.start();
    this.#slices.start();
    await Promise.all([this.#imports.waitForSync(), this.#slices.waitForSync()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.#imports.stop(), this.#slices.stop()]);
  }

  #wake(): void {
    for (const w of [...this.#waiters]) w();
  }

  /** Endpoint address → ready, over every slice of the import namespace/name. */
  endpoints(namespace: string, name: string): Map<string, boolean> {
    const out = new Map<string, boolean>();
    for (const slice of this.#slices.listByLabel(LABEL_SERVICE_NAME, name, namespace)) {
      for (const e of slice.endpoints ?? []) out.set(e.addresses[0]!, e.conditions?.ready ?? true);
    }
    return out;
  }

  /** The ServiceImport is Ready and its slices hold `endpoints` endpoints. */
  imported(namespace: string, name: string, endpoints: number): boolean {
    const ready =
      this.#imports.get(namespace, name)?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ??
      false;
    return ready && this.endpoints(namespace, name).size === endpoints;
  }

  /** Resolves with the time (performance.now()) at which `done` first held, checked on every watch event. */
  when(done: () => boolean, timeoutMs: number, what: string): Promise<number> {
    if (done()) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(performance.now());
      };
      this.#waiters.add(check);
    });
  }
}
