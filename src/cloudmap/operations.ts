// Waits for Cloud Map's asynchronous operations (namespace creation, instance registration and deregistration).
// Polling starts after ~50 ms and backs off to 1 s: no fixed multi-second minimum per write (SPEC §9). Each round
// asks as few calls as operation-polls.ts plans: one ListOperations for a service's batch of operations, GetOperation
// for the few others. An operation that GetOperation no longer finds (a store may prune them) is done but of unknown
// outcome: its recorded check (reading the instance back) decides.
// After a restart, settleInFlight() waits for the operations a previous process left pending, so the first read of
// Cloud Map sees their outcome: nothing they did is written again, nothing they were to do is lost.
import type { GetOperationCommandOutput, OperationFilter, ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { GetOperationCommand, ListOperationsCommand } from '@aws-sdk/client-servicediscovery';
import type { CloudMapCaller } from './call.ts';
import type { Clock } from './clock.ts';
import { isNotFound, OperationsFailedError, type CallContext, type OperationFailure } from './errors.ts';
import { DEFAULT_POLL_POLICY, planOperationPolls, type OperationListing, type PollPolicy } from './operation-polls.ts';
import { collectPages } from './paging.ts';

export interface OperationPolling extends PollPolicy {
  /** First poll after this delay; then doubled up to maxDelayMs. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** An operation still pending after this long is reported as failed (the worker retries the write). */
  readonly timeoutMs: number;
}

export const DEFAULT_OPERATION_POLLING: OperationPolling = { initialDelayMs: 50, maxDelayMs: 1000, timeoutMs: 120_000, ...DEFAULT_POLL_POLICY };

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
/** The UPDATE_DATE window starts this much before our own clock says, for clock skew with Cloud Map. */
const CLOCK_SKEW_MS = 60_000;

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

  /** Remembers what an operation was about (for messages and batching) and how to confirm it if it vanishes. */
  track(operationId: string, context: CallContext, check?: OperationCheck): void {
    const now = this.clock.now();
    for (const [id, t] of this.tracked) if (now - t.since > TRACK_TTL_MS) this.tracked.delete(id);
    this.tracked.set(operationId, { context, check, since: now });
  }

  private async getStatus(operationId: string): Promise<Status> {
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

  /** Operations matching `filters`, every page: id → status. */
  private async list(filters: OperationFilter[], context: CallContext): Promise<Map<string, string>> {
    const summaries = await collectPages(async (NextToken) => {
      const out = await this.caller.call('ListOperations', context,
        () => this.client.send(new ListOperationsCommand({ Filters: filters, NextToken, MaxResults: 100 })));
      return { items: out.Operations ?? [], nextToken: out.NextToken };
    });
    return new Map(summaries.filter((s) => s.Id !== undefined).map((s) => [s.Id!, s.Status ?? '']));
  }

  /** One listing of a service's operations that settled since the batch was submitted; the rest are still pending. */
  private async listStatuses(listing: OperationListing): Promise<Map<string, Status>> {
    const seconds = (ms: number) => String(Math.floor(ms / 1000));
    const filters: OperationFilter[] = [
      { Name: 'STATUS', Condition: 'IN', Values: ['SUCCESS', 'FAIL'] },
      { Name: 'UPDATE_DATE', Condition: 'BETWEEN', Values: [seconds(listing.since - CLOCK_SKEW_MS), seconds(this.clock.now() + CLOCK_SKEW_MS)] },
      ...(listing.serviceId === undefined ? [] : [{ Name: 'SERVICE_ID' as const, Condition: 'EQ' as const, Values: [listing.serviceId] }]),
    ];
    const settled = await this.list(filters, listing.serviceId === undefined ? {} : { serviceId: listing.serviceId });
    const out = new Map<string, Status>();
    for (const id of listing.ids) {
      const status = settled.get(id);
      // A failure's reason is only in GetOperation; failures are rare.
      out.set(id, status === 'SUCCESS' ? { state: 'done' } : status === 'FAIL' ? await this.getStatus(id) : { state: 'pending' });
    }
    return out;
  }

  /** One polling round over `pending`, batched by service. */
  private async poll(pending: readonly string[]): Promise<Map<string, Status>> {
    const plan = planOperationPolls(pending.map((id) => {
      const t = this.tracked.get(id);
      return { id, serviceId: t?.context.serviceId, since: t?.since ?? this.clock.now() };
    }), this.clock.now(), this.polling);
    const results = await Promise.all([
      ...plan.listings.map((listing) => this.listStatuses(listing)),
      ...plan.gets.map(async (id) => new Map([[id, await this.getStatus(id)]])),
    ]);
    return new Map(results.flatMap((m) => [...m]));
  }

  /**
   * Resolves once every operation succeeded; throws OperationsFailedError naming each one that failed, vanished
   * without its write being visible, or was still pending after `timeoutMs`.
   */
  async wait(operationIds: readonly string[], timeoutMs = this.polling.timeoutMs): Promise<void> {
    let pending = [...new Set(operationIds)];
    const failures: OperationFailure[] = [];
    const deadline = this.clock.now() + timeoutMs;
    let delay = this.polling.initialDelayMs;
    const settle = (id: string, reason?: string, pending?: true) => {
      if (reason !== undefined) failures.push({ operationId: id, context: this.tracked.get(id)?.context ?? {}, reason, ...(pending ? { pending } : {}) });
      this.tracked.delete(id);
    };
    while (pending.length > 0) {
      await this.clock.sleep(delay);
      const statuses = await this.poll(pending);
      const still: string[] = [];
      for (const id of pending) {
        const status = statuses.get(id) ?? { state: 'pending' };
        if (status.state === 'pending') still.push(id);
        else settle(id, status.state === 'failed' ? status.reason : undefined);
      }
      pending = still;
      if (pending.length > 0 && this.clock.now() >= deadline) {
        for (const id of pending) settle(id, `still pending after ${timeoutMs} ms`, true);
        pending = [];
      }
      delay = Math.min(this.polling.maxDelayMs, delay * 2);
    }
    if (failures.length > 0) throw new OperationsFailedError(failures);
  }

  /**
   * Waits (at most `timeoutMs`) for the instance operations anyone left pending in the account, e.g. a previous
   * process of this worker killed mid-write. Returns how many there were. Failures are the writer's to retry, so
   * only their count is returned.
   */
  async settleInFlight(timeoutMs: number): Promise<{ pending: number; failed: number }> {
    const inFlight = await this.list([
      { Name: 'STATUS', Condition: 'IN', Values: ['SUBMITTED', 'PENDING'] },
      { Name: 'TYPE', Condition: 'IN', Values: ['REGISTER_INSTANCE', 'DEREGISTER_INSTANCE'] },
    ], {});
    const ids = [...inFlight].filter(([, status]) => status === 'SUBMITTED' || status === 'PENDING').map(([id]) => id);
    for (const id of ids) this.track(id, {});
    try {
      await this.wait(ids, timeoutMs);
      return { pending: ids.length, failed: 0 };
    } catch (err) {
      if (err instanceof OperationsFailedError) return { pending: ids.length, failed: err.failures.length };
      throw err;
    }
  }
}
