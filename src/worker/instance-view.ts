// The worker's view of one Cloud Map service: every cluster's instances as the CloudMapWatcher last read them, with
// this cluster's own instances replaced by what this process just wrote. The watcher learns of our writes only after
// the change marker moved and it re-read the service; until then the export reconciler must diff against what it
// wrote (not re-register it, nor miss deregistering it) and the local import must already show it.
// A write gives way to the watcher only when the watcher agrees, or when a read the watcher began well after the write
// disagrees (an external change, or a write that did not land): never on age alone, since under load the watcher may
// re-read a service minutes later, and a view that dropped our instances meanwhile would re-register them and remove
// the local import of a service only this cluster exports (I2, M4).
import { ATTR_CLUSTER_ID, ATTR_CLUSTERSET_ID } from '../core/names.ts';
import { latestById } from '../core/instance-id.ts';
import type { CloudMapInstance } from '../core/types.ts';
import { sameInstances } from '../cloudmap/instance-set.ts';
import type { Identity } from './cluster-identity.ts';
import { keyOf } from './objects.ts';

export type SnapshotSource = (namespace: string, service: string) => readonly CloudMapInstance[];
/** When the watcher began its last read of a service (its clock), if it read it at all. */
export type ReadTimeSource = (namespace: string, service: string) => number | undefined;

interface Written {
  readonly instances: readonly CloudMapInstance[];
  readonly at: number;
}

export class InstanceView {
  readonly #snapshot: SnapshotSource;
  readonly #readAt: ReadTimeSource;
  readonly #identity: Identity;
  readonly #settleMs: number;
  readonly #now: () => number;
  readonly #written = new Map<string, Written>();

  /**
   * `settleMs`: how long after a write Cloud Map's reads may still miss it (eventual consistency); a watcher read
   * begun later than that is trusted over the write. `now` must be the watcher's clock.
   */
  constructor(
    snapshot: SnapshotSource,
    readAt: ReadTimeSource,
    identity: Identity,
    settleMs: number,
    now: () => number = Date.now,
  ) {
    this.#snapshot = snapshot;
    this.#readAt = readAt;
    this.#identity = identity;
    this.#settleMs = settleMs;
    this.#now = now;
  }

  isOurs(instance: CloudMapInstance): boolean {
    return (
      instance.attributes[ATTR_CLUSTER_ID] === this.#identity.clusterId &&
      instance.attributes[ATTR_CLUSTERSET_ID] === this.#identity.clustersetId
    );
  }

  /** Every cluster's instances of `namespace/service` (one per id), ours as last written when that is fresher. */
  instances(namespace: string, service: string): CloudMapInstance[] {
    const seen = [...latestById(this.#snapshot(namespace, service)).values()];
    const key = keyOf(namespace, service);
    const written = this.#written.get(key);
    if (written === undefined) return seen;
    const ours = seen.filter((i) => this.isOurs(i));
    const readAt = this.#readAt(namespace, service);
    if (sameInstances(ours, written.instances) || (readAt !== undefined && readAt >= written.at + this.#settleMs)) {
      this.#written.delete(key);
      return seen;
    }
    return [...seen.filter((i) => !this.isOurs(i)), ...written.instances];
  }

  /** This cluster's instances of `namespace/service`. */
  ours(namespace: string, service: string): CloudMapInstance[] {
    return this.instances(namespace, service).filter((i) => this.isOurs(i));
  }

  /**
   * Forgets what this process wrote to the service: after writes that failed partway, what Cloud Map holds is known
   * only from the watcher's next read of it.
   */
  forget(namespace: string, service: string): void {
    this.#written.delete(keyOf(namespace, service));
  }

  /** Records this cluster's instances of the service after writes to Cloud Map completed. */
  recordWritten(namespace: string, service: string, ours: readonly CloudMapInstance[]): void {
    this.#written.set(keyOf(namespace, service), { instances: [...ours], at: this.#now() });
  }
}
