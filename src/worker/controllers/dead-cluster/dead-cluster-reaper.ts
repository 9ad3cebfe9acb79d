// --reap-dead-clusters-after: the one place where a cluster deregisters another cluster's instances (M4 otherwise
// forbids it), and only those of a cluster of this ClusterSet whose heartbeat has been silent that long. Its service
// instances go first, service by service, each followed by this cluster's marker bump so peers re-read it, and the
// Cloud Map service deleted when nobody has instances left in it; then its change markers and its heartbeat, which
// ends its silence: a cluster without a heartbeat is not judged any more.
import type { CloudMapAdapter } from '../../../cloudmap/adapter.ts';
import { MARKER_SERVICE, markerNamespaceName } from '../../../change-detection/change-marker.ts';
import type { CloudMapWatcher } from '../../../change-detection/cloudmap-watcher.ts';
import { ATTR_CLUSTER_ID } from '../../../core/names.ts';
import type { Logger } from '../../../observability/log.ts';

export interface DeadClusterReaperOptions {
  cloudMap: CloudMapAdapter;
  watcher: Pick<CloudMapWatcher, 'services' | 'snapshot' | 'markChanged' | 'nonAnnouncingWriterSeen'>;
  log: Logger;
}

/**
 * Deregisters the instances of `deadClusterId` in every service where this cluster's view of Cloud Map shows some
 * (each service listed afresh, so all of them), then its markers and heartbeat; returns the service instances removed.
 */
export async function reapDeadCluster(o: DeadClusterReaperOptions, deadClusterId: string): Promise<number> {
  const { cloudMap, watcher, log } = o;
  let reaped = 0;
  for (const { namespace, service } of watcher.services()) {
    if (!watcher.snapshot(namespace, service).some((i) => i.attributes[ATTR_CLUSTER_ID] === deadClusterId)) continue;
    const serviceId = await serviceIdOf(cloudMap, namespace, service);
    if (serviceId === undefined) continue;
    const operations = await cloudMap.instances.reapInstances(serviceId, deadClusterId);
    await cloudMap.waitForOperations(operations);
    reaped += operations.length;
    log.info(
      { event: 'dead-cluster-reaped', deadClusterId, namespace, service, deregistered: operations.length },
      'instances of a dead cluster deregistered from Cloud Map',
    );
    watcher
      .markChanged(namespace, [service])
      .catch((err: unknown) =>
        log.debug(
          { namespace, service, err: String(err) },
          'change marker not bumped after reaping; peers catch up at their full resync',
        ),
      );
    // M3: not while a controller that caches services is active (controllers/export/export-reconciler.ts, withdraw).
    if (!watcher.nonAnnouncingWriterSeen() && (await cloudMap.deleteServiceIfEmpty(serviceId))) {
      log.info(
        { event: 'cloudmap-service-deleted', namespace, name: service },
        'Cloud Map service deleted: only the dead cluster had instances in it',
      );
    }
  }
  const markerServiceId = await serviceIdOf(
    cloudMap,
    markerNamespaceName(cloudMap.identity.clustersetId),
    MARKER_SERVICE,
  );
  const markers =
    markerServiceId === undefined ? [] : await cloudMap.instances.reapInstances(markerServiceId, deadClusterId);
  await cloudMap.waitForOperations(markers);
  log.info(
    { event: 'dead-cluster-reap-done', deadClusterId, deregistered: reaped, markers: markers.length },
    'dead cluster reaped from Cloud Map: its instances, change markers and heartbeat',
  );
  return reaped;
}

async function serviceIdOf(cloudMap: CloudMapAdapter, namespace: string, service: string): Promise<string | undefined> {
  const namespaceId = await cloudMap.findNamespace(namespace);
  return namespaceId === undefined ? undefined : cloudMap.findService(namespaceId, service);
}
