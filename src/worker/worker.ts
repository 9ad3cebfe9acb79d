// The reconcile worker process: health and metrics endpoints, informers, leader election, and the cluster identity
// state machine that starts, freezes and stops the reconcilers (Member) as ClusterProperties come and go (C1–C3).
import { hostname } from 'node:os';
import { packageVersion } from '../config/version.ts';
import { ABOUT_GROUP, CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY, STORAGE_VERSION } from '../core/names.ts';
import { errorText } from '../kube/api-error.ts';
import { kubeClientFor } from '../kube/client.ts';
import { loadKubeAccess, type KubeAccess } from '../kube/kube-access.ts';
import { EventRecorder } from '../kube/event-recorder.ts';
import { runLeaderElection, type LeaderElection } from '../runtime/leader-election.ts';
import { ObjectWriter } from '../runtime/object-writer.ts';
import { startHealthServer, type HealthServer } from '../runtime/health-server.ts';
import { createLogger, type Logger } from '../observability/log.ts';
import { createWorkerMetrics, type WorkerMetrics } from './metrics.ts';
import { decideIdentity, readIdentity, type IdentityStatus } from './cluster-identity.ts';
import { createWorkerInformers, observeWritten, type WorkerInformers } from './informers.ts';
import { liveness } from './liveness.ts';
import { clusterSetRegions } from './regions.ts';
import { Member } from './member.ts';
import type { WorkerOptions } from './options.ts';

export interface RunningWorker {
  /** Base URL of /healthz and /readyz. */
  readonly healthUrl: string;
  /** Base URL of /metrics. */
  readonly metricsUrl: string;
  readonly metrics: WorkerMetrics;
  /** Graceful shutdown: stop reconciling (in-flight keys finish), release the Lease, flush Events, close servers. */
  stop(): Promise<void>;
}

/** The region from the flag or the SDK's usual variables; the SDK has no usable default for Cloud Map. */
function cloudMapRegion(options: WorkerOptions): string {
  const region = options.region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION;
  if (!region)
    throw new Error(
      'no AWS region: pass --region (or set MCS_AWS_REGION or AWS_REGION) to the region of the Cloud Map namespaces',
    );
  return region;
}

class Worker {
  readonly #options: WorkerOptions;
  readonly #log: Logger;
  readonly #kubeConfig: KubeAccess;
  /** The ClusterSet's Regions, this cluster's own first. */
  readonly #regions: string[];
  readonly metrics: WorkerMetrics;
  readonly #informers: WorkerInformers;
  readonly #writer: ObjectWriter;
  readonly #events: EventRecorder;
  #status: IdentityStatus = { kind: 'idle' };
  #member: Member | undefined;
  #leading = false;
  #stopping = false;
  #lastMissing: string | undefined;
  /** Identity decisions run one at a time, in order. */
  #chain: Promise<void> = Promise.resolve();
  #election: LeaderElection | undefined;

  constructor(options: WorkerOptions, log: Logger, kubeConfig: KubeAccess) {
    this.#options = { ...options, controllerVersion: options.controllerVersion || packageVersion() };
    this.#log = log;
    this.#regions = clusterSetRegions(cloudMapRegion(options), options.regions);
    this.#kubeConfig = kubeConfig;
    this.metrics = createWorkerMetrics();
    this.#informers = createWorkerInformers({
      kubeConfig: this.#kubeConfig,
      resyncMs: options.kubeResyncInterval,
      metrics: this.metrics.informer,
      logger: createLogger('informer', options.logLevel),
    });
    this.#writer = new ObjectWriter({
      kubeConfig: this.#kubeConfig,
      onWritten: (resource, written) => observeWritten(this.#informers, resource, written),
    });
    const identity = options.identity || `${hostname()}-${process.pid}`;
    // Which replica wrote what, in the apiserver's audit log (M4: a paused leader's writes after its successor's).
    kubeClientFor(this.#kubeConfig).identify(`mcs-cloudmap-worker/${this.#options.controllerVersion} (${identity})`);
    this.#events = new EventRecorder({
      kubeConfig: this.#kubeConfig,
      reportingInstance: identity,
      logger: createLogger('events', options.logLevel),
    });
    // #evaluate logs its own failures and never rejects: the informer's handlers need not wait for it.
    const evaluate = () => void this.#evaluate();
    this.#informers.clusterProperties.addHandlers({ onAdd: evaluate, onUpdate: evaluate, onDelete: evaluate });
    // While frozen (C3), the last ServiceExport going lets the worker follow the new identity.
    this.#informers.serviceExports.addHandlers({ onDelete: evaluate });

    if (options.leaderElect) {
      const leaseMs = options.leaseDuration;
      this.#election = runLeaderElection({
        kubeConfig: this.#kubeConfig,
        namespace: options.namespace,
        name: options.leaseName,
        identity,
        leaseDurationMs: leaseMs,
        renewDeadlineMs: Math.round((leaseMs * 2) / 3),
        retryPeriodMs: Math.round((leaseMs * 2) / 15),
        logger: createLogger('leader-election', options.logLevel),
        onStartedLeading: () => this.#setLeading(true),
        onStoppedLeading: () => this.#setLeading(false),
      });
      const election = this.#election;
      kubeClientFor(this.#kubeConfig).fenceWrites(() => election.fence());
    } else {
      this.#leading = true;
    }
    this.#informers.start();
  }

  #setLeading(leading: boolean): Promise<void> {
    this.#leading = leading;
    this.metrics.leader.set(leading ? 1 : 0);
    if (leading) this.metrics.leaderStarts.inc();
    return this.#evaluate();
  }

  /** Readiness: caches synced, and, when this replica reconciles, Cloud Map read once. */
  ready(): true | string {
    if (!this.#informers.synced()) return 'waiting for the first list of every watched kind';
    if (this.#member !== undefined && !this.#member.synced) return 'waiting for the first full read of Cloud Map';
    return true;
  }

  /** Liveness: every loop of the running reconcilers made progress within --progress-timeout. */
  live(): true | string {
    return liveness(this.#member?.progress() ?? [], Date.now(), this.#options.progressTimeout);
  }

  #evaluate(): Promise<void> {
    this.#chain = this.#chain
      .then(() => this.#decide())
      .catch((err: unknown) => {
        this.#log.error(
          { event: 'identity-error', err: errorText(err) },
          'could not act on the cluster identity; retrying at the next change',
        );
      });
    return this.#chain;
  }

  /**
   * What deciding the identity reads: the ClusterProperties and whether anything is exported (C3). The other kinds go
   * on listing meanwhile, while the member reads Cloud Map (M9: a start waits for the longer of the two, not both).
   */
  get #identityInformers() {
    return [this.#informers.clusterProperties, this.#informers.serviceExports];
  }

  async #decide(): Promise<void> {
    if (!this.#leading || this.#stopping || !this.#identityInformers.every((i) => i.hasSynced())) {
      if (this.#member !== undefined) await this.#stopMember();
      return;
    }
    const properties = this.#informers.clusterProperties;
    const reading = readIdentity(
      properties.get(undefined, CLUSTER_ID_PROPERTY),
      properties.get(undefined, CLUSTERSET_ID_PROPERTY),
    );
    this.metrics.clusterPropertiesMissing.set(reading.kind === 'missing' ? 1 : 0);
    if (reading.kind === 'missing' && reading.message !== this.#lastMissing) {
      // One log line and one Event per distinct problem, then idle until the properties change (C1; not the AWS
      // controller's silent loop, aws-cloud-map-mcs-controller-for-k8s issue 315).
      this.#log.warn({ event: 'cluster-identity-missing', reason: reading.reason }, reading.message);
      const regarding = {
        apiVersion: `${ABOUT_GROUP}/${STORAGE_VERSION}`,
        kind: 'ClusterProperty',
        metadata: { name: CLUSTER_ID_PROPERTY },
      };
      this.#events.record(regarding, 'Warning', reading.reason, reading.message, 'WaitForClusterIdentity');
    }
    this.#lastMissing = reading.kind === 'missing' ? reading.message : undefined;

    const decision = decideIdentity(this.#status, reading, this.#informers.serviceExports.list().length > 0);
    switch (decision.action) {
      case 'none':
        return;
      case 'start':
        if (this.#member !== undefined) await this.#stopMember();
        this.#startMember(decision.identity);
        return;
      case 'stop':
        await this.#stopMember();
        return;
      case 'freeze':
        if (this.#status.kind === 'idle' || this.#member === undefined) return;
        this.#status = { kind: 'frozen', identity: this.#status.identity, message: decision.message };
        this.#member.freeze(decision.message);
        return;
      case 'thaw':
        if (this.#status.kind === 'idle' || this.#member === undefined) return;
        this.#status = { kind: 'running', identity: this.#status.identity };
        this.#member.thaw();
        return;
    }
  }

  #startMember(identity: { clusterId: string; clustersetId: string }): void {
    this.#log.info({ event: 'cluster-identity', ...identity }, 'cluster identity known; starting the reconcilers');
    const member = new Member({
      identity,
      options: this.#options,
      regions: this.#regions,
      kubeConfig: this.#kubeConfig,
      informers: this.#informers,
      writer: this.#writer,
      events: this.#events,
      metrics: this.metrics,
      log: this.#log,
      ...(this.#election ? { fence: () => this.#election!.fence() } : {}),
      cloudMapLog: createLogger('cloudmap', this.#options.logLevel),
    });
    this.#member = member;
    this.#status = { kind: 'running', identity };
    // Not awaited: the first read of Cloud Map may take long (or wait for Cloud Map), and must not hold up a stop.
    member
      .start()
      .catch((err: unknown) =>
        this.#log.error({ event: 'member-start-failed', err: errorText(err) }, 'could not start the reconcilers'),
      );
  }

  async #stopMember(): Promise<void> {
    const member = this.#member;
    this.#member = undefined;
    this.#status = { kind: 'idle' };
    await member?.stop();
  }

  async start(): Promise<void> {
    await Promise.all(this.#identityInformers.map((i) => i.waitForSync()));
    await this.#evaluate();
    await this.#informers.waitForSync();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#election !== undefined) await this.#election.stop();
    await this.#evaluate();
    await this.#informers.stop();
    await this.#events.flush();
    kubeClientFor(this.#kubeConfig).close();
  }
}

/**
 * Starts the worker and its health/metrics endpoints; resolves once the informers listed everything (reconciling then
 * starts as soon as this replica leads and the cluster identity is known).
 */
export async function startWorker(
  options: WorkerOptions,
  log: Logger = createLogger('worker', options.logLevel),
): Promise<RunningWorker> {
  const worker = new Worker(options, log, await loadKubeAccess(options.kubeconfig));
  const servers: HealthServer[] = [];
  const serve = (port: number) =>
    startHealthServer({
      port,
      registry: worker.metrics.registry,
      ready: () => worker.ready(),
      live: () => worker.live(),
    });
  try {
    servers.push(await serve(options.metricsPort));
    if (options.healthPort !== options.metricsPort || options.healthPort === 0)
      servers.push(await serve(options.healthPort));
    await worker.start();
  } catch (err) {
    await worker.stop();
    await Promise.all(servers.map((s) => s.close()));
    throw err;
  }
  log.info(
    {
      event: 'worker-started',
      version: packageVersion(),
      metrics: servers[0]!.url,
      health: servers.at(-1)!.url,
      leaderElect: options.leaderElect,
    },
    'worker started',
  );
  return {
    metricsUrl: servers[0]!.url,
    healthUrl: servers.at(-1)!.url,
    metrics: worker.metrics,
    async stop() {
      await worker.stop();
      await Promise.all(servers.map((s) => s.close()));
      log.info({ event: 'worker-stopped' }, 'worker stopped');
    },
  };
}
