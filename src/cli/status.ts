// `mcs-cloudmap status`: reads every context in parallel, then the Cloud Map side of the services they know, and
// assembles the report. The only I/O is in read-cluster.ts and read-cloudmap.ts.
import { listedRegions } from '../config/options.ts';
import { readCloudMap } from './read-cloudmap.ts';
import { loadKubeconfigs, readCluster } from './read-cluster.ts';
import { buildStatusReport, servicesOf, type StatusReport } from './status-model.ts';
import { statusNaming, type StatusOptions } from './status-options.ts';

function splitContexts(raw: string): string[] {
  return raw
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
}

export async function collectStatus(options: StatusOptions): Promise<StatusReport> {
  const { configs } = loadKubeconfigs(options.kubeconfig, splitContexts(options.context));
  const clusters = await Promise.all([...configs].map(([context, kc]) => readCluster(context, kc)));
  if (!options.cloudMap) return buildStatusReport(clusters);
  // M5: count only the ClusterSet's instances; when the clusters disagree the report already says so.
  const clustersetId = clusters.find((c) => c.clustersetId !== undefined)?.clustersetId;
  const cloudMap = await readCloudMap(
    {
      region: options.region,
      regions: listedRegions(options.regions, 'regions'),
      ...(options.namespaceOwnerAccount ? { namespaceOwner: options.namespaceOwnerAccount } : {}),
      ...(options.cloudMapEndpoint ? { endpoint: options.cloudMapEndpoint } : {}),
      ...(clustersetId === undefined ? {} : { clustersetId }),
      naming: statusNaming(options),
    },
    servicesOf(clusters),
  );
  return buildStatusReport(clusters, cloudMap);
}

/** 1 when a cluster or Cloud Map could not be read at all; condition problems alone still exit 0. */
export function exitCodeOf(report: StatusReport): number {
  return report.clusters.some((c) => c.error !== undefined) || report.cloudMap?.error !== undefined ? 1 : 0;
}
