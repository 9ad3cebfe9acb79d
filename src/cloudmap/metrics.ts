// What the adapter reports about its Cloud Map calls. A plain interface so the worker can wire prom-client to it and
// tests and benchmarks can count calls without a metrics library.

/** `success`, a throttling response, a transient failure or no answer within the deadline (both retried), or a final error. */
export type CallOutcome = 'success' | 'throttled' | 'transient' | 'timeout' | 'error';

export interface CloudMapMetrics {
  /** One Cloud Map request (each attempt counts) and how it ended. */
  onCall(api: string, outcome: CallOutcome, durationMs: number): void;
  /** The client-side rate allowed for `api`, in requests per second: at its first call, then whenever it changes. */
  onRateChange(api: string, ratePerSecond: number): void;
}

export const noMetrics: CloudMapMetrics = { onCall: () => {}, onRateChange: () => {} };

/** Counts requests by API and outcome; used by tests and benchmarks. */
export class CallCounter implements CloudMapMetrics {
  readonly #counts = new Map<string, Map<CallOutcome, number>>();

  onCall(api: string, outcome: CallOutcome): void {
    let byOutcome = this.#counts.get(api);
    if (!byOutcome) this.#counts.set(api, (byOutcome = new Map<CallOutcome, number>()));
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
  }

  onRateChange(): void {}

  /** Requests to `api` (every API when omitted) with `outcome` (any when omitted). */
  count(api?: string, outcome?: CallOutcome): number {
    let total = 0;
    for (const [name, byOutcome] of this.#counts) {
      if (api !== undefined && name !== api) continue;
      for (const [o, n] of byOutcome) if (outcome === undefined || o === outcome) total += n;
    }
    return total;
  }

  /** `{ api: requests }` over every outcome. */
  byApi(): Record<string, number> {
    return Object.fromEntries([...this.#counts.keys()].sort().map((api) => [api, this.count(api)]));
  }

  reset(): void {
    this.#counts.clear();
  }
}
