// Which instances come from a writer that announces its changes (M6). This controller bumps the ClusterSet change
// marker for every write, so its peers read the change at once; any other writer does not, and its changes are found
// only by reading: the AWS controller v0.3.1 during a migration (K8S_CONTROLLER `aws-cloud-map-mcs-controller-for-k8s
// <version>`, ids like `tcp-10_244_2_0-8080`), or anything registering instances without our markers.
import { ATTR, K8S_CONTROLLER_NAME } from './cloudmap-attributes.ts';
import { parseInstanceId } from './instance-id.ts';
import type { CloudMapInstance } from './types.ts';

/** True when this controller wrote the instance: our id format and our K8S_CONTROLLER. */
export function announced(instance: CloudMapInstance): boolean {
  return (
    parseInstanceId(instance.id)?.format === 'mcs-cloudmap' &&
    (instance.attributes[ATTR.K8S_CONTROLLER] ?? '').startsWith(`${K8S_CONTROLLER_NAME} `)
  );
}

const judged = new WeakMap<readonly CloudMapInstance[], boolean>();

/**
 * True when this controller wrote every instance of the list. Remembered per list (lists of instances are replaced,
 * never changed in place): the watcher asks about every cached service at each non-announcing poll, and parsing every
 * id of 45,000 instances took 100-350 ms of its event loop every 2 s at 10,000 services.
 */
export function allAnnounced(instances: readonly CloudMapInstance[]): boolean {
  let all = judged.get(instances);
  if (all === undefined) judged.set(instances, (all = instances.every(announced)));
  return all;
}

/** The namespaces where any instance comes from a writer that does not announce its changes. */
export function namespacesWithNonAnnouncing(
  services: Iterable<{ namespace: string; instances: readonly CloudMapInstance[] }>,
): Set<string> {
  const found = new Set<string>();
  for (const { namespace, instances } of services)
    if (!found.has(namespace) && !allAnnounced(instances)) found.add(namespace);
  return found;
}
