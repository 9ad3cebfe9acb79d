// Leader election on a coordination.k8s.io/v1 Lease, so that two worker replicas can run and only one reconciles.
// Candidates try every retry period to create or take over (free or expired) the lease; every such write is an update
// guarded by the resourceVersion read, so two candidates racing for it get one success and one 409 Conflict (the loser
// simply tries again later). The leader renews every retry period with a patch that applies only while it is the
// holder, without waiting for earlier renewals' answers; one that has not renewed within the renew deadline stops
// leading. `stop()` stops leading, waits for onStoppedLeading, then releases the lease so a standby takes over at its
// next try.
// Usage:
//   const election = runLeaderElection({ kubeConfig, namespace, name: 'mcs-cloudmap-worker', identity: podName,
//     onStartedLeading: (signal) => startReconcilers(signal), onStoppedLeading: () => stopReconcilers() });
//   election.isLeader(); await election.stop();

import { createLogger, type Logger } from '../observability/log.ts';
import { errorText, isAlreadyExists, isConflict, isInvalid, isNotFound } from '../kube/api-error.ts';
import { sleep } from './backoff.ts';
import { CONTENT_JSON_PATCH, kubeClientFor, type KubeClient, type KubeRequest } from '../kube/client.ts';
import {
  mustStepDown,
  observe,
  planLease,
  releasedSpec,
  renewalPatch,
  validateTiming,
  type LeaderElectionTiming,
  type LeaseObservation,
  type LeaseSpec,
} from './lease-rules.ts';
import { apiVersionOf, LEASES, objectKey, resourcePath, type KubeObject } from '../kube/resources.ts';
import type { KubeAccess } from '../kube/kube-access.ts';

export const DEFAULT_LEADER_ELECTION_TIMING: LeaderElectionTiming = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export interface LeaderElectionOptions extends Partial<LeaderElectionTiming> {
  kubeConfig: KubeAccess;
  namespace: string;
  /** Lease name. */
  name: string;
  /** Unique per replica (the pod name). */
  identity: string;
  /** Called on becoming leader; `signal` aborts when leadership ends. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called when leadership ends (lost, or stop()); stop() awaits it before releasing the lease. */
  onStoppedLeading(): void | Promise<void>;
  logger?: Logger;
  now?: () => number;
}

export interface LeaderElection {
  isLeader(): boolean;
  /**
   * Undefined while leading with a renewal younger than the renew deadline (no standby can have taken the Lease);
   * otherwise why this replica must not write. Checked before each write: a process paused (or cut off) past its
   * Lease resumes with writes in flight before its election loop notices.
   */
  fence(): string | undefined;
  /** The holder this candidate last saw, if any. */
  currentLeader(): string | undefined;
  /** Stops campaigning; if leading, ends leadership (awaiting onStoppedLeading) and releases the lease. */
  stop(): Promise<void>;
}

interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

class LeaseElector implements LeaderElection {
  readonly #opts: LeaderElectionOptions;
  readonly #timing: LeaderElectionTiming;
  readonly #client: KubeClient;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #stopped = new AbortController();
  readonly #target: string;
  #observation: LeaseObservation | undefined;
  /** The lease as last read or written, so that release() need not read it first. */
  #lease: Lease | undefined;
  /** When the renewal that returned `#lease` was sent: answers of overlapping renewals can arrive out of order. */
  #leaseSentAt = 0;
  #leader: string | undefined;
  #leading = false;
  #lastRenewAt = 0;
  readonly #loop: Promise<void>;

  constructor(opts: LeaderElectionOptions) {
    this.#timing = {
      leaseDurationMs: opts.leaseDurationMs ?? DEFAULT_LEADER_ELECTION_TIMING.leaseDurationMs,
      renewDeadlineMs: opts.renewDeadlineMs ?? DEFAULT_LEADER_ELECTION_TIMING.renewDeadlineMs,
      retryPeriodMs: opts.retryPeriodMs ?? DEFAULT_LEADER_ELECTION_TIMING.retryPeriodMs,
    };
    validateTiming(this.#timing);
    if (!opts.identity) throw new Error('leader election: identity must not be empty (use the pod name)');
    this.#opts = opts;
    this.#client = kubeClientFor(opts.kubeConfig);
    this.#now = opts.now ?? Date.now;
    this.#target = `Lease ${objectKey(opts.namespace, opts.name)}`;
    this.#log = (opts.logger ?? createLogger('leader-election')).child({
      lease: objectKey(opts.namespace, opts.name),
      identity: opts.identity,
      cluster: this.#client.cluster,
    });
    this.#loop = this.#run();
  }

  isLeader(): boolean {
    return this.#leading;
  }

  currentLeader(): string | undefined {
    return this.#leader;
  }

  fence(): string | undefined {
    if (!this.#leading) return 'not the leader';
    const age = this.#now() - this.#lastRenewAt;
    return age < this.#timing.renewDeadlineMs
      ? undefined
      : `the Lease was last renewed ${Math.round(age / 1000)} s ago, past the renew deadline of ${this.#timing.renewDeadlineMs / 1000} s`;
  }

  async stop(): Promise<void> {
    this.#stopped.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { retryPeriodMs } = this.#timing;
    const stop = this.#stopped.signal;
    while (!stop.aborted) {
      // Campaign: jittered retries (up to +20 %) so candidates that started together do not collide every time.
      // The time an attempt was sent, not answered, is when the Lease was at most last renewed.
      let sentAt = this.#now();
      while (!stop.aborted && !(await this.#tryAcquire(retryPeriodMs))) {
        await sleep(retryPeriodMs * (1 + 0.2 * Math.random()), stop);
        sentAt = this.#now();
      }
      if (stop.aborted) break;
      const leadership = new AbortController();
      this.#lastRenewAt = sentAt;
      this.#setLeading(true);
      this.#log.info({ event: 'leader-started' }, 'started leading');
      void this.#invoke('onStartedLeading', () => this.#opts.onStartedLeading(leadership.signal));
      const reason = await this.#lead(leadership.signal);
      leadership.abort();
      this.#setLeading(false);
      this.#log.warn({ event: 'leader-stopped', reason }, 'stopped leading');
      await this.#invoke('onStoppedLeading', () => this.#opts.onStoppedLeading());
      if (stop.aborted) await this.#release();
    }
  }

  #setLeading(leading: boolean): void {
    this.#leading = leading;
    if (leading) this.#leader = this.#opts.identity;
  }

  async #invoke(name: string, fn: () => void | Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.#log.error({ event: 'callback-error', callback: name, err: errorText(err) }, `${name} threw`);
    }
  }

  /**
   * Renews every retry period until leadership ends, and says why it ended. Renewals overlap: each waits for its answer
   * up to the renew deadline, because a loaded apiserver can take seconds to answer and a request stuck on a stalled
   * connection never does, and neither may hold back the next renewal (which goes out on another connection). The
   * Lease counts as renewed when the renewal that succeeded was sent.
   */
  async #lead(leadership: AbortSignal): Promise<string> {
    const { retryPeriodMs, renewDeadlineMs } = this.#timing;
    const lost = new AbortController();
    const wake = AbortSignal.any([this.#stopped.signal, lost.signal]);
    for (;;) {
      await sleep(retryPeriodMs, wake);
      if (this.#stopped.signal.aborted) return 'shutdown';
      if (lost.signal.aborted) return String(lost.signal.reason);
      if (mustStepDown(this.#lastRenewAt, renewDeadlineMs, this.#now())) return 'renew deadline passed';
      void this.#renew(this.#now(), leadership).then((why) => {
        if (why !== undefined) lost.abort(why);
      });
    }
  }

  /** One renewal sent at `sentAt`; answers why leadership is lost when the apiserver says another holds the Lease. */
  async #renew(sentAt: number, leadership: AbortSignal): Promise<string | undefined> {
    const signal = AbortSignal.any([leadership, AbortSignal.timeout(this.#timing.renewDeadlineMs)]);
    try {
      const lease = await this.#leaseRequest({
        method: 'PATCH',
        path: resourcePath(LEASES, this.#opts.namespace, this.#opts.name),
        signal,
        contentType: CONTENT_JSON_PATCH,
        body: renewalPatch(this.#opts.identity, this.#timing.leaseDurationMs, sentAt),
      });
      if (leadership.aborted) return undefined;
      this.#lastRenewAt = Math.max(this.#lastRenewAt, sentAt);
      if (sentAt >= this.#leaseSentAt) {
        this.#lease = lease;
        this.#leaseSentAt = sentAt;
      }
      return undefined;
    } catch (err) {
      if (leadership.aborted) return undefined;
      // 422: the patch's test failed, the holder is no longer this candidate; 404: the Lease was deleted.
      if (isInvalid(err) || isNotFound(err)) return 'the Lease is no longer held by this replica';
      this.#log.warn({ event: 'lease-error', err: errorText(err) }, 'could not renew the lease');
      return undefined;
    }
  }

  /** One attempt to create or take over the lease within `timeoutMs`; true when this candidate holds it now. */
  async #tryAcquire(timeoutMs: number): Promise<boolean> {
    const signal = AbortSignal.any([this.#stopped.signal, AbortSignal.timeout(timeoutMs)]);
    try {
      const current = await this.#get(signal);
      const now = this.#now();
      if (current?.spec) this.#observation = observe(this.#observation, current.spec, now);
      const plan = planLease(current?.spec, this.#observation, this.#opts.identity, this.#timing.leaseDurationMs, now);
      if (plan.action === 'wait') {
        if (this.#leader !== plan.holder)
          this.#log.info({ event: 'leader-observed', holder: plan.holder }, 'another replica leads');
        this.#leader = plan.holder;
        return false;
      }
      this.#lease =
        plan.action === 'create'
          ? await this.#create(plan.spec, signal)
          : await this.#update(current!, plan.spec, signal);
      this.#leaseSentAt = now;
      this.#observation = observe(undefined, this.#lease.spec ?? {}, this.#now());
      if (plan.acquired)
        this.#log.info({ event: 'lease-acquired', transitions: plan.spec.leaseTransitions }, 'acquired the lease');
      return true;
    } catch (err) {
      this.#lease = undefined;
      if (isConflict(err) || isAlreadyExists(err)) {
        this.#log.debug({ event: 'lease-conflict' }, 'another candidate wrote the lease first');
      } else if (!this.#stopped.signal.aborted) {
        this.#log.warn({ event: 'lease-error', err: errorText(err) }, 'could not acquire or renew the lease');
      }
      return false;
    }
  }

  /** Every call on the Lease: named in errors, and reserved, so a renewal never waits behind a burst of other requests. */
  #leaseRequest(req: Omit<KubeRequest, 'target' | 'reserved'>): Promise<Lease> {
    return this.#client.request<Lease>({ ...req, target: this.#target, reserved: true });
  }

  async #get(signal: AbortSignal): Promise<Lease | undefined> {
    try {
      return await this.#leaseRequest({
        method: 'GET',
        path: resourcePath(LEASES, this.#opts.namespace, this.#opts.name),
        signal,
      });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  #create(spec: LeaseSpec, signal: AbortSignal): Promise<Lease> {
    return this.#leaseRequest({
      method: 'POST',
      path: resourcePath(LEASES, this.#opts.namespace),
      signal,
      body: {
        apiVersion: apiVersionOf(LEASES),
        kind: LEASES.kind,
        metadata: { name: this.#opts.name, namespace: this.#opts.namespace },
        spec,
      },
    });
  }

  /** PUT with the resourceVersion read: a concurrent writer makes this fail with 409 instead of being overwritten. */
  #update(current: Lease, spec: LeaseSpec, signal: AbortSignal): Promise<Lease> {
    return this.#leaseRequest({
      method: 'PUT',
      path: resourcePath(LEASES, this.#opts.namespace, this.#opts.name),
      signal,
      body: { ...current, apiVersion: apiVersionOf(LEASES), kind: LEASES.kind, spec },
    });
  }

  /**
   * Hands the lease over at once instead of after its expiry. The last renewal may have failed or timed out on our side
   * while the server applied it, so on a missing or conflicting copy the lease is read again once.
   */
  async #release(): Promise<void> {
    const signal = AbortSignal.timeout(this.#timing.renewDeadlineMs);
    const releaseFrom = async (lease: Lease | undefined): Promise<boolean> => {
      if (!lease?.spec || lease.spec.holderIdentity !== this.#opts.identity) return false;
      await this.#update(lease, releasedSpec(lease.spec, this.#now()), signal);
      return true;
    };
    try {
      let released: boolean;
      try {
        released = await releaseFrom(this.#lease ?? (await this.#get(signal)));
      } catch (err) {
        if (!isConflict(err)) throw err;
        released = await releaseFrom(await this.#get(signal));
      }
      if (released) this.#log.info({ event: 'lease-released' }, 'released the lease');
    } catch (err) {
      this.#log.warn(
        { event: 'lease-release-failed', err: errorText(err) },
        'could not release the lease; a standby takes over once it expires',
      );
    }
    this.#lease = undefined;
  }
}

export function runLeaderElection(options: LeaderElectionOptions): LeaderElection {
  return new LeaseElector(options);
}
