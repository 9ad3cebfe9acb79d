// The export-to-import lag (M7: p99 ≤ 2 s), measured in one cluster: from the start of an export reconcile that
// changed this cluster's instances of a service to the local import written from them. It spans two controllers:
// the export side says when it started and when it wrote, the import side when it imported.
export class ExportToImportLag {
  readonly #observe: (seconds: number) => void;
  readonly #now: () => number;
  /** Start of the export reconcile running for each key. */
  readonly #started = new Map<string, number>();
  /** Start of the export reconcile whose writes the local import has not shown yet, per key. */
  readonly #pending = new Map<string, number>();

  constructor(observe: (seconds: number) => void, now: () => number = Date.now) {
    this.#observe = observe;
    this.#now = now;
  }

  /** Runs the export reconcile of `key`, noting when it started. */
  async exporting(key: string, reconcile: () => Promise<void>): Promise<void> {
    this.#started.set(key, this.#now());
    try {
      await reconcile();
    } finally {
      this.#started.delete(key);
    }
  }

  /** The running export reconcile of `key` changed Cloud Map; the first such start since the last import counts. */
  written(key: string): void {
    const started = this.#started.get(key);
    if (started !== undefined && !this.#pending.has(key)) this.#pending.set(key, started);
  }

  /** The import of `key` was written: observes the lag, if an export write awaited it. */
  imported(key: string): void {
    const started = this.#pending.get(key);
    if (started === undefined) return;
    this.#pending.delete(key);
    this.#observe((this.#now() - started) / 1000);
  }
}
