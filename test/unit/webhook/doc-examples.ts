// The decisions docs/webhooks.md shows, produced by the real rules: a test keeps the document's messages exact.
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../../../src/core/names.ts';
import { checkClusterPropertiesPresent } from '../../../src/webhook/admission/cluster-properties-present.ts';
import { checkClusterPropertyChange } from '../../../src/webhook/admission/cluster-property-change.ts';
import type { Decision } from '../../../src/webhook/admission/decision.ts';
import { checkExportConflicts } from '../../../src/webhook/admission/export-conflicts.ts';
import { checkExportName } from '../../../src/webhook/admission/export-name.ts';
import { checkExportedService, checkServiceTypeChange } from '../../../src/webhook/admission/exported-service.ts';
import { checkWorkerOnlyWrite } from '../../../src/webhook/admission/worker-only-writes.ts';
import { customObjectError } from '../../../src/webhook/crd/object-validation.ts';
import { service, serviceImport, WORKER } from '../../support/webhook-fixtures.ts';

const candidate = {
  clusterId: 'east',
  exportCreationTimestamp: Date.parse('2026-01-01T11:00:00Z'),
  type: 'Headless' as const,
  ports: [{ name: 'http', protocol: 'TCP' as const, port: 8080 }],
  sessionAffinity: 'None' as const,
  ipFamilies: ['IPv4' as const],
  internalTrafficPolicy: 'Cluster' as const,
  exportedLabels: {},
  exportedAnnotations: {},
};
const conflict = {
  clusterId: 'east',
  exportRef: 'demo/nginx-hello',
  candidate,
  serviceImport: serviceImport('nginx-hello', ['west']),
};
const writers = { worker: WORKER, deleters: [] };

/** Each documented example: a title and the decision whose message or warnings the document quotes. */
export const DOC_EXAMPLES: Array<[string, Decision]> = [
  ['C1', checkClusterPropertiesPresent({ clusterId: undefined, clustersetId: 'set1' }, 'demo/nginx-hello')],
  ['C1 both', checkClusterPropertiesPresent({ clusterId: undefined, clustersetId: undefined }, 'demo/nginx-hello')],
  ['E4', checkExportedService(undefined, 'demo/nginx-hello', 'Warn')],
  ['E4 name', checkExportName('nginx-hello.v2', 'demo/nginx-hello.v2')],
  ['E5', checkExportedService(service('nginx-hello', { type: 'ExternalName' }), 'demo/nginx-hello', 'Warn')],
  ['E5 reject', checkExportedService(service('nginx-hello', { type: 'ExternalName' }), 'demo/nginx-hello', 'Reject')],
  ['E5 update', checkServiceTypeChange(service('nginx-hello', { type: 'ExternalName' }), 'demo/nginx-hello')],
  ['X warn', checkExportConflicts({ ...conflict, policy: 'Warn' })],
  ['X reject', checkExportConflicts({ ...conflict, policy: 'Reject' })],
  [
    'X2 not identical',
    checkExportConflicts({
      ...conflict,
      policy: 'Warn',
      candidate: {
        ...candidate,
        type: 'ClusterSetIP',
        ports: [
          { name: 'tcp', protocol: 'TCP', port: 42 },
          { name: 'stcp', protocol: 'SCTP', port: 142 },
        ],
      },
      serviceImport: serviceImport('nginx-hello', ['west'], {
        ports: [
          { name: 'tcp', protocol: 'TCP', port: 42 },
          { name: 'udp', protocol: 'UDP', port: 42 },
        ],
      }),
    }),
  ],
  [
    'C2',
    checkClusterPropertyChange({
      operation: 'CREATE',
      name: CLUSTER_ID_PROPERTY,
      value: 'East_1',
      oldValue: undefined,
      exports: 0,
    }),
  ],
  [
    'C3 change',
    checkClusterPropertyChange({
      operation: 'UPDATE',
      name: CLUSTER_ID_PROPERTY,
      value: 'west',
      oldValue: 'east',
      exports: 4,
    }),
  ],
  [
    'C3 delete',
    checkClusterPropertyChange({
      operation: 'DELETE',
      name: CLUSTERSET_ID_PROPERTY,
      value: undefined,
      oldValue: 'set1',
      exports: 1,
    }),
  ],
  [
    'C5',
    checkClusterPropertyChange({
      operation: 'CREATE',
      name: 'region.k8s.io',
      value: 'x',
      oldValue: undefined,
      exports: 0,
    }),
  ],
  [
    'I6 import',
    checkWorkerOnlyWrite(
      {
        kind: 'ServiceImport',
        target: 'demo/nginx-hello',
        operation: 'CREATE',
        username: 'alice',
        labels: undefined,
        oldLabels: undefined,
      },
      writers,
    ),
  ],
  [
    'I6 slice',
    checkWorkerOnlyWrite(
      {
        kind: 'EndpointSlice',
        target: 'demo/nginx-hello-abc',
        operation: 'DELETE',
        username: 'alice',
        labels: undefined,
        oldLabels: { 'multicluster.kubernetes.io/service-name': 'nginx-hello' },
      },
      writers,
    ),
  ],
];

export const SCHEMA_EXAMPLE = customObjectError('ClusterProperty', {
  metadata: { name: 'x' },
  spec: { value: 'x'.repeat(128001) },
});
