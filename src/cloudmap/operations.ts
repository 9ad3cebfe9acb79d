// Waits for Cloud Map's asynchronous operations (namespace creation, instance registration and deregistration).
// Polling starts after ~50 ms and backs off to 1 s: no fixed multi-second minimum per write (SPEC §9). An operation
// that GetOperation no longer finds (ListOperations may prune them) is done but of unknown outcome: its recorded
// check (reading the instance back) decides.
import type { GetOperationCommandOutput, ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { GetOperationCommand } from '@aws-sdk/client-servicediscovery';
import type { CloudMapCaller } from './call.ts';
import type { Clock } from './clock.ts';
import { isNotFound, OperationsFailedError, type CallContext } from './errors.ts';

export interface OperationPolling {
  /** First poll after this delay; then doubled up to maxDelayMs. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** An operation still pending after this long is reported as failed (the worker retries the write). */
  readonly timeoutMs: number;
}

export const DEFAULT_OPERATION_POLLING: OperationPolling = { initialDelayMs: 50, maxDelayMs: 1000, timeoutMs: 120_000 };

/** What to do when an operation vanished: true when the write is visible (e.g. the instance reads back as written). */
export type OperationCheck = () => Promise<boolean>;

interface Tracked {
  readonly context: CallContext;
  readonly check: OperationCheck | undefined;
  readonly since: number;
}

type Status = { state: 'done' } | { state: 'pending' } | { state: 'failed'; reason: string };

/** Tracked operations nobody waited for are forgotten after this long. */
const TRACK_TTL_MS = 3_600_000;

export class OperationWaiter {
  private readonly client: ServiceDiscoveryClient;
  private readonly caller: CloudMapCaller;
  private readonly clock: Clock;
  private readonly polling: OperationPolling;
  private readonly tracked = new Map<string, Tracked>();

  constructor(client: ServiceDiscoveryClient, caller: CloudMapCaller, clock: Clock, polling: OperationPolling = DEFAULT_OPERATION_POLLING) {
    this.client = client;
    this.caller = caller;
    this.clock = clock;
    this.polling = polling;
  }

  /** Remembers what an operation was about (for messages) and how to confirm it if it vanishes. */
  track(operationId: string, context: CallContext, check?: OperationCheck): void {
    const now = this.clock.now();
    for (const [id, t] of this.tracked) if (now - t.since > TRACK_TTL_MS) this.tracked.delete(id);
    this.tracked.set(operationId, { context, check, since: now });
  }

  private async status(operationId: string): Promise<Status> {
    const context = { ...this.tracked.get(operationId)?.context, operationId };
    let out: GetOperationCommandOutput;
    try {
      out = await this.caller.call('GetOperation', context, () => this.client.send(new GetOperationCommand({ OperationId: operationId })));
    } catch (err) {
      if (!isNotFound(err, 'OperationNotFound')) throw err;
      const check = this.tracked.get(operationId)?.check;
      if (check === undefined || (await check())) return { state: 'done' };
      return { state: 'failed', reason: 'the operation is no longer known to Cloud Map and its write is not visible' };
    }
    const op = out.Operation;
    switch (op?.Status) {
      case 'SUCCESS': return { state: 'done' };
      case 'FAIL': return { state: 'failed', reason: [op.ErrorCode, op.ErrorMessage].filter(Boolean).join(': ') || 'FAIL' };
      default: return { state: 'pending' };
    }
  }

  /**
   * Resolves once every operation succeeded; throws OperationsFailedError naming each one that failed, vanished
   * without its write being visible, or was still pending at the timeout.
   */
  async wait(operationIds: readonly string[]): Promise<void> {
    let pending = [...new Set(operationIds)];
    const failures: { operationId: string; context: CallContext; reason: string }[] = [];
    const deadline = this.clock.now() + this.polling.timeoutMs;
    let delay = this.polling.initialDelayMs;
    const settle = (id: string, reason?: string) => {
      if (reason !== undefined) failures.push({ operationId: id, context: this.tracked.get(id)?.context ?? {}, reason });
      this.tracked.delete(id);
    };
    while (pending.length > 0) {
      await this.clock.sleep(delay);
      const statuses = await Promise.all(pending.map(async (id) => [id, await this.status(id)] as const));
      pending = [];
      for (const [id, status] of statuses) {
        if (status.state === 'pending') pending.push(id);
        else settle(id, status.state === 'failed' ? status.reason : undefined);
      }
      if (pending.length > 0 && this.clock.now() >= deadline) {
        for (const id of pending) settle(id, `still pending after ${this.polling.timeoutMs} ms`);
        pending = [];
      }
      delay = Math.min(this.polling.maxDelayMs, delay * 2);
    }
    if (failures.length > 0) throw new OperationsFailedError(failures);
  }
}
