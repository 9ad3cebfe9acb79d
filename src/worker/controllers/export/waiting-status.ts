// Before the first read of Cloud Map nothing is exported; while Cloud Map does not answer then, each ServiceExport says
// so (Ready=False, Pending, "Waiting for Cloud Map: <error>") rather than showing no status at all. The first read
// starts the export controller, whose reconciles write the real conditions.
import { readyCondition } from '../../../core/conditions.ts';
import { errorText } from '../../../kube/api-error.ts';
import type { Informer } from '../../../runtime/informer.ts';
import type { Logger } from '../../../observability/log.ts';
import { parseKey, type ServiceExportObject } from '../../objects.ts';
import type { ExportStatusWriter } from './export-status.ts';

export interface WaitingStatusOptions {
  serviceExports: Informer<ServiceExportObject>;
  status: ExportStatusWriter;
  /** True while exports wait for the first read of Cloud Map (not yet read, not stopped). */
  waiting: () => boolean;
  log: Logger;
}

export class WaitingStatus {
  readonly #o: WaitingStatusOptions;
  /** Why this cluster's Region of Cloud Map does not answer, while it does not. */
  #cloudMapDown: string | undefined;

  constructor(o: WaitingStatusOptions) {
    this.#o = o;
  }

  /** Cloud Map of this cluster's Region stopped (`why`) or started (undefined) answering: every export says so. */
  cloudMapDown(why: string | undefined): void {
    this.#cloudMapDown = why;
    for (const se of this.#o.serviceExports.list()) this.report(se.metadata.namespace ?? '', se.metadata.name);
  }

  /** The export `namespace/name` changed while waiting: it says why it waits, if Cloud Map does not answer. */
  reportKey(key: string): void {
    const { namespace, name } = parseKey(key);
    this.report(namespace, name);
  }

  report(namespace: string, name: string): void {
    const why = this.#cloudMapDown;
    if (!this.#o.waiting() || why === undefined) return;
    const se = this.#o.serviceExports.get(namespace, name);
    if (se === undefined || se.metadata.deletionTimestamp !== undefined) return;
    this.#o.status
      .update(se, [readyCondition('Pending', se.metadata.generation ?? 0, `Cloud Map: ${why}`)])
      .catch((err: unknown) => {
        this.#o.log.warn(
          { event: 'export-status-failed', namespace, name, err: errorText(err) },
          'could not say on the ServiceExport that Cloud Map does not answer',
        );
      });
  }
}
