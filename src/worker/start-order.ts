// The order in which a worker reconciles the ServiceExports it finds at start. Clusters exporting the same services
// would otherwise all take them in the same (informer list) order and create each Cloud Map service at the same
// moment, each paying a CreateService — a quota of 5 a second per account — for a name another cluster is creating
// (M6). Ordering by a hash of the cluster id and the key gives every cluster its own order, so by the time a cluster
// reaches a shared service another has usually created it, and one listing of the namespace finds it. Pure.
import { createHash } from 'node:crypto';

export function startOrder(clusterId: string, keys: readonly string[]): string[] {
  const rank = (key: string) => createHash('sha1').update(`${clusterId}\n${key}`).digest('hex');
  return keys.map((key) => ({ key, rank: rank(key) })).sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0)).map((k) => k.key);
}
