// The order in which a worker reconciles the ServiceExports it finds at start (M6). Two costs decide it:
// - Clusters exporting the same services would all take them in the same (informer list) order and create each Cloud
//   Map service at the same moment, each paying a CreateService — a quota of 5 a second per account — for a name
//   another cluster is creating. A hash of the cluster id gives every cluster its own order, so by the time a cluster
//   reaches a shared service another has usually created it, and one listing of the namespace finds it.
// - A service needs its Cloud Map namespace, and CreateHttpNamespace allows 0.5 a second per account: exports taken
//   across every namespace at once wait until all of them exist (25 namespaces, 50 s). Taken one namespace after the
//   other, the first exports wait for one namespace only, and the others are created while earlier ones are worked on.
// So: namespaces in the cluster's own order, and within a namespace its services in the cluster's own order. Pure.
import { createHash } from 'node:crypto';

export function startOrder(clusterId: string, keys: readonly string[]): string[] {
  const rank = (text: string) => createHash('sha1').update(`${clusterId}\n${text}`).digest('hex');
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return keys
    .map((key) => ({ key, namespace: rank(key.slice(0, key.indexOf('/') + 1)), service: rank(key) }))
    .sort((a, b) => compare(a.namespace, b.namespace) || compare(a.service, b.service))
    .map((k) => k.key);
}
