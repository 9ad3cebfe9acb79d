// Shared report fixtures for the CLI unit tests: a two-cluster ClusterSet as the tutorial leaves it.
import type { Condition } from '../../../src/core/types.ts';
import type { ClusterView, CloudMapView } from '../../../src/cli/status-model.ts';

export function condition(
  type: string,
  status: Condition['status'],
  reason: string,
  message = `${type} ${reason}`,
): Condition {
  return { type, status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' };
}

export const HEALTHY_EXPORT_CONDITIONS = [
  condition('Valid', 'True', 'Valid'),
  condition('Ready', 'True', 'Exported'),
  condition('Conflict', 'False', 'NoConflicts'),
];

export function tutorialClusters(): ClusterView[] {
  const imported = (context: string) => ({
    namespace: 'demo',
    name: 'nginx-hello',
    type: 'ClusterSetIP' as const,
    ips: [context === 'cls1' ? '10.96.0.20' : '10.97.0.20'],
    ports: ['80/TCP'],
    clusters: ['cls1'],
    endpointsByCluster: { cls1: { ready: 3, total: 3 } },
    endpointSliceObjects: 'Present',
    conditions: [condition('Ready', 'True', 'Ready')],
  });
  return [
    {
      context: 'cls1',
      server: 'https://127.0.0.1:6443',
      clusterId: 'cls1',
      clustersetId: 'clusterset1',
      exports: [
        {
          namespace: 'demo',
          name: 'nginx-hello',
          type: 'ClusterSetIP',
          ports: ['80/TCP'],
          endpoints: { ready: 3, total: 3 },
          conditions: HEALTHY_EXPORT_CONDITIONS,
        },
      ],
      imports: [imported('cls1')],
    },
    {
      context: 'cls2',
      server: 'https://127.0.0.1:6444',
      clusterId: 'cls2',
      clustersetId: 'clusterset1',
      exports: [],
      imports: [imported('cls2')],
    },
  ];
}

export function tutorialCloudMap(): CloudMapView {
  return {
    region: 'us-west-2',
    endpoint: 'http://127.0.0.1:5000',
    clustersetId: 'clusterset1',
    services: [
      { namespace: 'demo', name: 'nginx-hello', found: true, instancesByCluster: { cls1: { ready: 3, total: 3 } } },
    ],
  };
}
