// The two KEP-2149 ClusterProperties every member cluster needs before it exports or imports (C1).
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../../src/core/names.ts';

export function clusterProperties(clusterId: string, clustersetId: string): string {
  const property = (name: string, value: string) =>
    `apiVersion: about.k8s.io/v1beta1\nkind: ClusterProperty\nmetadata:\n  name: ${name}\nspec:\n  value: ${value}\n`;
  return [property(CLUSTER_ID_PROPERTY, clusterId), property(CLUSTERSET_ID_PROPERTY, clustersetId)].join('---\n');
}
