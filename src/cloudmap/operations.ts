// Waits for Cloud Map's asynchronous operations (namespace creation, instance registration and deregistration).
// Every wait of the process shares one polling loop: a round starts ~50 ms after new operations arrive and rounds back
// off to 1 s. Each round asks what operation-polls.ts plans: one ListOperations of what settled since the last round
// for all pending operations together (any number of services), GetOperation for a few. No fixed multi-second
// minimum per write (M7). An operation that GetOperation no longer finds (a store may prune them) is done but of
// unknown outcome: its recorded check (reading the instance back) decides.
// After a restart, settleInFlight() waits for the operations a previous process left pending, so the first read of
// Cloud Map sees their outcome: nothing they did is written again, nothing they were to do is lost.
import type {
  GetOperationCommandOutput,
  OperationFilter,
  ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { GetOperationCommand, ListOperationsCommand } from '@aws-sdk/client-servicediscovery';
import type { CloudMapCaller } from './call.ts';
import type { Clock } from '../runtime/clock.ts';
import { isNotFound, OperationsFailedError, type CallContext, type OperationFailure } from './errors.ts';
import { DEFAULT_POLL_POLICY, planOperationPolls, type PollPolicy } from './operation-polls.ts';
import { collectPages } from '../runtime/paging.ts';
import { sleep } from '../runtime/backoff.ts';

export interface OperationPolling extends PollPolicy {
  /** First poll after this delay; then doubled up to maxDelayMs. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** An operation still pending after this long is reported as failed (the worker retries the write). */
  readonly timeoutMs: number;
}

export const DEFAULT_OPERATION_POLLING: OperationPolling = {
  initialDelayMs: 50,
  maxDelayMs: 1000,
  timeoutMs: 120_000,
  ...DEFAULT_POLL_POLICY,
};

export type OperationType = 'REGISTER_INSTANCE' | 'DEREGISTER_INSTANCE';

export interface OperationTargets {
  readonly instance: string | undefined;
  readonly service: string | undefined;
  readonly submittedAt: number | undefined;
  readonly updatedAt: number | undefined;
}

/** What to do when an operation vanished: true when the write is visible (e.g. the instance reads back as written). */
export type OperationCheck = () => Promise<boolean>;

interface Tracked {
  readonly context: CallContext;
  readonly check: OperationCheck | undefined;
  readonly since: number;
}

type Status =
  | { state: 'done'; targets?: Record<string, string> }
  | { state: 'pending' }
  | { state: 'failed'; reason: string; pending?: true }
  | { state: 'error'; error: unknown };

interface Waiting {
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly resolve: (status: Status) => void;
}

/** Tracked operations nobody waited for are forgotten after this long. */
const TRACK_TTL_MS = 3_600_000;

export class OperationWaiter {
  readonly #client: ServiceDiscoveryClient;
  readonly #caller: CloudMapCaller;
  readonly #clock: Clock;
  readonly #polling: OperationPolling;
  readonly #tracked = new Map<string, Tracked>();
  /** Operations this process submitted, with when (pruned after TRACK_TTL_MS). */
  readonly #submitted = new Map<string, number>();
  /** Operations someone waits for, each with its waiters. */
  readonly #waiting = new Map<string, Waiting[]>();
  /** Operations a call of some round is asking about right now. */
  readonly #asking = new Set<string>();
  /** Whether a polling loop runs; one at a time serves every waiter. */
  #running = false;
  #delay: number;
  #lastListedAt: number | undefined;
  /** Operations in a namespace of another account are that account's: GetOperation names it (OwnerAccount). */
  readonly #owner: { OwnerAccount?: string };

  /**
   * With `namespaceOwner` (another account's shared namespaces), every operation is asked for with GetOperation: a
   * listing of this account's operations would not show them.
   */
  constructor(
    client: ServiceDiscoveryClient,
    caller: CloudMapCaller,
    clock: Clock,
    polling: OperationPolling = DEFAULT_OPERATION_POLLING,
    namespaceOwner?: string,
  ) {
    this.#client = client;
    this.#caller = caller;
    this.#clock = clock;
    this.#owner = namespaceOwner === undefined ? {} : { OwnerAccount: namespaceOwner };
    this.#polling = namespaceOwner === undefined ? polling : { ...polling, batchFrom: Number.POSITIVE_INFINITY };
    this.#delay = polling.initialDelayMs;
  }

  /**
   * Remembers what an operation this process submitted was about (for messages) and how to confirm it if it vanishes.
   */
  track(operationId: string, context: CallContext, check?: OperationCheck): void {
    const now = this.#clock.now();
    for (const [id, at] of this.#submitted) if (now - at > TRACK_TTL_MS) this.#submitted.delete(id);
    this.#submitted.set(operationId, now);
    this.#remember(operationId, context, check);
  }

  /** Whether this process submitted the operation within the last hour (its write needs no reading back). */
  submittedHere(operationId: string): boolean {
    return this.#submitted.has(operationId);
  }

  #remember(operationId: string, context: CallContext, check?: OperationCheck): void {
    const now = this.#clock.now();
    for (const [id, t] of this.#tracked)
      if (now - t.since > TRACK_TTL_MS && !this.#waiting.has(id)) this.#tracked.delete(id);
    this.#tracked.set(operationId, { context, check, since: now });
  }

  async #getStatus(operationId: string): Promise<Status> {
    const context = { ...this.#tracked.get(operationId)?.context, operationId };
    let out: GetOperationCommandOutput;
    try {
      out = await this.#caller.call('GetOperation', context, (abortSignal) =>
        this.#client.send(new GetOperationCommand({ OperationId: operationId, ...this.#owner }), { abortSignal }),
      );
    } catch (err) {
      if (!isNotFound(err, 'OperationNotFound')) throw err;
      const check = this.#tracked.get(operationId)?.check;
      if (check === undefined || (await check())) return { state: 'done' };
      return { state: 'failed', reason: 'the operation is no longer known to Cloud Map and its write is not visible' };
    }
    const op = out.Operation;
    switch (op?.Status) {
      case 'SUCCESS':
        return { state: 'done', ...(op.Targets === undefined ? {} : { targets: op.Targets }) };
      case 'FAIL':
        return { state: 'failed', reason: [op.ErrorCode, op.ErrorMessage].filter(Boolean).join(': ') || 'FAIL' };
      default:
        return { state: 'pending' };
    }
  }

  /** Operations matching `filters`, every page: id → status. */
  async #list(filters: OperationFilter[]): Promise<Map<string, string>> {
    const summaries = await collectPages(async (NextToken) => {
      const out = await this.#caller.call('ListOperations', {}, (abortSignal) =>
        this.#client.send(new ListOperationsCommand({ Filters: filters, NextToken, MaxResults: 100 }), { abortSignal }),
      );
      return { items: out.Operations ?? [], nextToken: out.NextToken };
    });
    return new Map(summaries.filter((s) => s.Id !== undefined).map((s) => [s.Id!, s.Status ?? '']));
  }

  /** One listing of what settled since `since`; the listed operations not in it are still pending. */
  async #listStatuses(ids: readonly string[], since: number): Promise<Map<string, Status>> {
    const seconds = (ms: number) => String(Math.floor(ms / 1000));
    const sentAt = this.#clock.now();
    const settled = await this.#list([
      { Name: 'STATUS', Condition: 'IN', Values: ['SUCCESS', 'FAIL'] },
      { Name: 'UPDATE_DATE', Condition: 'BETWEEN', Values: [seconds(since), seconds(sentAt + 60_000)] },
    ]);
    this.#lastListedAt = sentAt;
    const out = new Map<string, Status>();
    for (const id of ids) {
      const status = settled.get(id);
      // A failure's reason is only in GetOperation; failures are rare.
      out.set(
        id,
        status === 'SUCCESS' ? { state: 'done' } : status === 'FAIL' ? await this.#getStatus(id) : { state: 'pending' },
      );
    }
    return out;
  }

  /**
   * Asks `ask` for the status of `ids` and hands every answer to its waiters as soon as it arrives; a failed call
   * resolves its operations as errors. While it runs, later rounds leave these operations to it.
   */
  async #settle(ids: readonly string[], ask: () => Promise<Map<string, Status>>): Promise<void> {
    for (const id of ids) this.#asking.add(id);
    let statuses: Map<string, Status>;
    try {
      statuses = await ask();
    } catch (error) {
      statuses = new Map(ids.map((id) => [id, { state: 'error', error }]));
    } finally {
      for (const id of ids) this.#asking.delete(id);
    }
    for (const [id, status] of statuses) {
      if (status.state === 'pending') continue;
      for (const w of this.#waiting.get(id) ?? []) w.resolve(status);
      this.#waiting.delete(id);
    }
  }

  /** Waiters past their deadline get their operation reported as still pending (the worker retries the write). */
  #expire(now: number): void {
    for (const [id, waiters] of this.#waiting) {
      const remaining = waiters.filter((w) => {
        if (now < w.deadline) return true;
        w.resolve({ state: 'failed', reason: `still pending after ${w.timeoutMs} ms`, pending: true });
        return false;
      });
      if (remaining.length > 0) this.#waiting.set(id, remaining);
      else this.#waiting.delete(id);
    }
  }

  /**
   * One polling round over every operation someone waits for and no earlier round is still asking about. The round
   * waits for its calls at most until the next waiter's deadline: one call stuck on a connection (each attempt has a
   * deadline, but a call may retry several times) never holds the other waiters past theirs (M6).
   */
  async #round(): Promise<void> {
    const now = this.#clock.now();
    const pending = [...this.#waiting.keys()]
      .filter((id) => !this.#asking.has(id))
      .map((id) => ({ id, since: this.#tracked.get(id)?.since ?? now }));
    const plan = planOperationPolls(pending, now, this.#lastListedAt, this.#polling);
    const asked = Promise.all([
      ...(plan.listSince === undefined
        ? []
        : [this.#settle(plan.listed, () => this.#listStatuses(plan.listed, plan.listSince!))]),
      ...plan.gets.map((id) => this.#settle([id], async () => new Map([[id, await this.#getStatus(id)]]))),
    ]);
    const nextDeadline = Math.min(...[...this.#waiting.values()].flat().map((w) => w.deadline));
    const cutOff = new AbortController();
    await Promise.race([asked, sleep(nextDeadline - now, cutOff.signal)]);
    cutOff.abort();
    this.#expire(this.#clock.now());
  }

  async #run(): Promise<void> {
    while (this.#waiting.size > 0) {
      const delay = this.#delay;
      this.#delay = Math.min(this.#polling.maxDelayMs, delay * 2);
      await this.#clock.sleep(delay);
      await this.#round();
    }
    this.#running = false;
  }

  #watch(operationId: string, timeoutMs: number): Promise<Status> {
    return new Promise((resolve) => {
      const waiters = this.#waiting.get(operationId) ?? [];
      waiters.push({ deadline: this.#clock.now() + timeoutMs, timeoutMs, resolve });
      this.#waiting.set(operationId, waiters);
      // New operations get a quick first look; the shared round covers the older ones too.
      this.#delay = this.#polling.initialDelayMs;
      if (!this.#running) {
        this.#running = true;
        // Nothing is lost: #run does not reject (#settle turns a failed call into its waiters' status).
        void this.#run();
      }
    });
  }

  /**
   * Resolves once every operation succeeded; throws OperationsFailedError naming each one that failed, vanished
   * without its write being visible, or was still pending after `timeoutMs`, or the error of a call that failed.
   */
  async wait(operationIds: readonly string[], timeoutMs = this.#polling.timeoutMs): Promise<void> {
    const ids = [...new Set(operationIds)];
    const statuses = await Promise.all(ids.map((id) => this.#watch(id, timeoutMs)));
    const failures: OperationFailure[] = [];
    let error: { error: unknown } | undefined;
    statuses.forEach((status, i) => {
      const operationId = ids[i]!;
      const context = this.#tracked.get(operationId)?.context ?? {};
      if (!this.#waiting.has(operationId)) this.#tracked.delete(operationId);
      if (status.state === 'error') error ??= { error: status.error };
      if (status.state === 'failed')
        failures.push({ operationId, context, reason: status.reason, ...(status.pending ? { pending: true } : {}) });
    });
    if (error !== undefined) throw error.error;
    if (failures.length > 0) throw new OperationsFailedError(failures);
  }

  /**
   * Waits for one operation by GetOperation every `intervalMs`, outside the shared rounds (which back off to 1 s), and
   * returns the id its `target` names (Targets.NAMESPACE of a namespace creation), undefined when Cloud Map does not
   * say. For rare operations a user waits on: the first export of a namespace waits for its creation, and the quota
   * allows 0.5 of those a second per account, so polling them closely costs little and takes up to a second off that
   * export (M7). Throws OperationsFailedError when the operation failed or was still pending after `timeoutMs`.
   */
  async settleOne(
    operationId: string,
    target: string,
    intervalMs: number,
    timeoutMs = this.#polling.timeoutMs,
  ): Promise<string | undefined> {
    const context = this.#tracked.get(operationId)?.context ?? {};
    const deadline = this.#clock.now() + timeoutMs;
    for (;;) {
      await this.#clock.sleep(intervalMs);
      const status = await this.#getStatus(operationId);
      if (status.state === 'done') {
        if (!this.#waiting.has(operationId)) this.#tracked.delete(operationId);
        return status.targets?.[target];
      }
      if (status.state === 'failed') throw new OperationsFailedError([{ operationId, context, reason: status.reason }]);
      if (this.#clock.now() >= deadline)
        throw new OperationsFailedError([
          { operationId, context, reason: `still pending after ${timeoutMs} ms`, pending: true },
        ]);
    }
  }

  /**
   * Waits (at most `timeoutMs`) for the instance operations anyone left pending in the account, e.g. a previous
   * process of this worker killed mid-write, and returns their ids. Failures are the writer's to retry, so they are
   * only counted.
   */
  async settleInFlight(timeoutMs: number): Promise<{ ids: string[]; failed: number }> {
    const inFlight = await this.#list([
      { Name: 'STATUS', Condition: 'IN', Values: ['SUBMITTED', 'PENDING'] },
      { Name: 'TYPE', Condition: 'IN', Values: ['REGISTER_INSTANCE', 'DEREGISTER_INSTANCE'] },
    ]);
    const ids = [...inFlight].filter(([, status]) => status === 'SUBMITTED' || status === 'PENDING').map(([id]) => id);
    for (const id of ids) this.#remember(id, {});
    try {
      await this.wait(ids, timeoutMs);
      return { ids, failed: 0 };
    } catch (err) {
      if (err instanceof OperationsFailedError) return { ids, failed: err.failures.length };
      throw err;
    }
  }

  /**
   * Operations of the account of these types (instance registrations and deregistrations by default) that succeeded
   * after `sinceMs` (from the next whole second: UPDATE_DATE takes seconds, and what settled in the same second as a
   * marker bump was announced by it). Every writer's, this process's too.
   */
  async succeededSince(
    sinceMs: number,
    types: readonly OperationType[] = ['REGISTER_INSTANCE', 'DEREGISTER_INSTANCE'],
  ): Promise<string[]> {
    const done = await this.#list([
      { Name: 'STATUS', Condition: 'IN', Values: ['SUCCESS'] },
      { Name: 'TYPE', Condition: 'IN', Values: [...types] },
      {
        Name: 'UPDATE_DATE',
        Condition: 'BETWEEN',
        Values: [String(Math.ceil(sinceMs / 1000)), String(Math.floor((this.#clock.now() + 60_000) / 1000))],
      },
    ]);
    return [...done].filter(([, status]) => status === 'SUCCESS').map(([id]) => id);
  }

  /**
   * The instance and the service an operation wrote (its INSTANCE and SERVICE targets), where it names them, when it
   * was submitted and when its status last changed (Unix ms).
   */
  async describe(operationId: string): Promise<OperationTargets> {
    const out = await this.#caller.call('GetOperation', { operationId }, (abortSignal) =>
      this.#client.send(new GetOperationCommand({ OperationId: operationId, ...this.#owner }), { abortSignal }),
    );
    const op = out.Operation;
    return {
      instance: op?.Targets?.INSTANCE,
      service: op?.Targets?.SERVICE,
      submittedAt: op?.CreateDate?.getTime(),
      updatedAt: op?.UpdateDate?.getTime(),
    };
  }
}
