// CustomResourceDefinition objects for our three kinds, built from schemas.ts. crds/*.yaml are generated from these
// (generate.ts); tests and the demo call customResourceDefinitions() with a URL and caBundle to point conversion at a
// webhook server running outside the cluster.

import {
  ABOUT_GROUP,
  CLUSTER_PROPERTY_PLURAL,
  MCS_GROUP,
  SERVICE_EXPORT_PLURAL,
  SERVICE_IMPORT_PLURAL,
  STORAGE_VERSION,
  VERSIONS,
} from '../../core/names.ts';
import {
  caInjectionAnnotations,
  clientConfig,
  CONVERT_PATH,
  IN_CLUSTER,
  type WebhookTarget,
} from '../registration/client-config.ts';
import { SCHEMAS, type CustomKind, type JsonSchema } from './schemas.ts';

interface PrinterColumn {
  name: string;
  type: 'string' | 'date';
  jsonPath: string;
  description: string;
}

interface KindInfo {
  kind: CustomKind;
  group: string;
  plural: string;
  singular: string;
  scope: 'Namespaced' | 'Cluster';
  shortNames?: string[];
  columns: PrinterColumn[];
  annotations?: Record<string, string>;
}

const age: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since creation.',
};

export const KINDS: readonly KindInfo[] = [
  {
    kind: 'ServiceExport',
    group: MCS_GROUP,
    plural: SERVICE_EXPORT_PLURAL,
    singular: 'serviceexport',
    scope: 'Namespaced',
    shortNames: ['svcex', 'svcexport'],
    columns: [age],
  },
  {
    kind: 'ServiceImport',
    group: MCS_GROUP,
    plural: SERVICE_IMPORT_PLURAL,
    singular: 'serviceimport',
    scope: 'Namespaced',
    shortNames: ['svcim', 'svcimport'],
    columns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'ClusterSetIP or Headless.' },
      { name: 'IP', type: 'string', jsonPath: '.spec.ips', description: 'ClusterSet IPs.' },
      age,
    ],
  },
  {
    kind: 'ClusterProperty',
    group: ABOUT_GROUP,
    plural: CLUSTER_PROPERTY_PLURAL,
    singular: 'clusterproperty',
    scope: 'Cluster',
    columns: [
      { name: 'value', type: 'string', jsonPath: '.spec.value', description: 'Value of the property.' },
      { ...age, name: 'age' },
    ],
    // *.k8s.io is a protected group: the apiserver requires a link to the approved API (KEP-2149).
    annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/enhancements/pull/3084' },
  },
];

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

function definition(info: KindInfo, schema: JsonSchema, target: WebhookTarget): CustomResourceDefinition {
  const name = `${info.plural}.${info.group}`;
  const annotations: Record<string, string> = { ...info.annotations, ...caInjectionAnnotations(target) };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
    spec: {
      group: info.group,
      names: {
        kind: info.kind,
        listKind: `${info.kind}List`,
        plural: info.plural,
        singular: info.singular,
        ...(info.shortNames ? { shortNames: info.shortNames } : {}),
      },
      scope: info.scope,
      versions: VERSIONS.map((version) => ({
        name: version,
        served: true,
        storage: version === STORAGE_VERSION,
        schema: { openAPIV3Schema: schema },
        subresources: { status: {} },
        additionalPrinterColumns: info.columns,
      })),
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: clientConfig(target, CONVERT_PATH) },
      },
    },
  };
}

/** The three CRDs; conversion goes to the in-cluster webhook Service unless another target is given. */
export function customResourceDefinitions(target: WebhookTarget = IN_CLUSTER): CustomResourceDefinition[] {
  return KINDS.map((info) => definition(info, SCHEMAS[info.kind], target));
}
