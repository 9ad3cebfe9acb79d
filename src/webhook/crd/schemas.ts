// The OpenAPI v3 schemas of our three CRDs (K1, K2): the single source for crds/*.yaml (see generate.ts) and for the
// webhook's own object validation (object-validation.ts). Both served versions use the same schema.

export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean';
  description?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema;
  items?: JsonSchema;
  required?: string[];
  enum?: string[];
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maxItems?: number;
  default?: string;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/** Largest ClusterProperty value (K3; upstream misspelled the keyword so its CRD enforces none). */
export const CLUSTER_PROPERTY_VALUE_MAX = 128000;

const stringMap = (description: string): JsonSchema => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string' },
});

/** metav1.Condition, with the limits the Kubernetes API enforces on it. */
const condition: JsonSchema = {
  type: 'object',
  description: 'One aspect of the current state of this object (metav1.Condition).',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  properties: {
    type: {
      type: 'string',
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      description: 'Kind of condition in CamelCase, for example Valid, Ready or Conflict.',
    },
    status: {
      type: 'string',
      enum: ['True', 'False', 'Unknown'],
      description: 'Status of the condition: True, False or Unknown.',
    },
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      description: 'Programmatic identifier of the last transition, CamelCase; several reasons are joined with commas.',
    },
    message: {
      type: 'string',
      maxLength: 32768,
      description: 'Human-readable details of the last transition; says what to do.',
    },
    lastTransitionTime: { type: 'string', format: 'date-time', description: 'When the status last changed.' },
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'metadata.generation the condition was set for.',
    },
  },
};

const conditions = (of: string): JsonSchema => ({
  type: 'array',
  description: `Current state of the ${of}, one entry per condition type.`,
  items: condition,
  'x-kubernetes-list-type': 'map',
  'x-kubernetes-list-map-keys': ['type'],
});

/** apiVersion, kind and metadata, which every Kubernetes object schema lists. */
function topLevel(description: string, spec: JsonSchema, status: JsonSchema, required: string[] = []): JsonSchema {
  return {
    type: 'object',
    description,
    ...(required.length > 0 ? { required } : {}),
    properties: {
      apiVersion: { type: 'string', description: 'Versioned schema of this representation of the object.' },
      kind: { type: 'string', description: 'REST resource this object represents.' },
      metadata: { type: 'object' },
      spec,
      status,
    },
  };
}

const serviceExport = topLevel(
  'ServiceExport declares that the Service with the same namespace and name is exported to every cluster of the ClusterSet. ' +
    'Nothing is exported without one.',
  {
    type: 'object',
    description: 'What to export besides the Service itself.',
    properties: {
      exportedLabels: stringMap(
        "Labels to put on the ServiceImport in every cluster; the Service's own labels are never copied.",
      ),
      exportedAnnotations: stringMap(
        "Annotations to put on the ServiceImport in every cluster; the Service's own annotations are never copied.",
      ),
    },
  },
  {
    type: 'object',
    description: 'Written by the mcs-cloudmap worker.',
    properties: { conditions: conditions('export (Valid, Ready, Conflict)') },
  },
);

const servicePort: JsonSchema = {
  type: 'object',
  description: 'A port of the multi-cluster service.',
  required: ['port'],
  properties: {
    name: {
      type: 'string',
      description: 'Name of the port; unique within the ServiceImport. Empty for a single unnamed port.',
    },
    protocol: { type: 'string', default: 'TCP', description: 'IP protocol: TCP (default), UDP or SCTP.' },
    appProtocol: {
      type: 'string',
      description: 'Application protocol of the port, for example http or kubernetes.io/h2c.',
    },
    port: { type: 'integer', format: 'int32', description: 'Port number exposed by the multi-cluster service.' },
  },
};

const serviceImport = topLevel(
  'ServiceImport describes a service exported by one or more clusters of the ClusterSet, as seen by this cluster. ' +
    'Only the mcs-cloudmap worker writes it.',
  {
    type: 'object',
    description: 'Merged properties of the exported service; on conflicts the oldest export wins.',
    required: ['ports', 'type'],
    properties: {
      ports: {
        type: 'array',
        description: 'Union of the exported ports.',
        items: servicePort,
        'x-kubernetes-list-type': 'atomic',
      },
      ips: {
        type: 'array',
        maxItems: 2,
        items: { type: 'string' },
        'x-kubernetes-list-type': 'atomic',
        description:
          'ClusterSet IPs of a ClusterSetIP import, one per IP family in ipFamilies order; empty for Headless.',
      },
      type: {
        type: 'string',
        enum: ['ClusterSetIP', 'Headless'],
        description: 'ClusterSetIP: reached through the ips. Headless: DNS returns the endpoints directly.',
      },
      sessionAffinity: {
        type: 'string',
        enum: ['ClientIP', 'None'],
        description: 'ClientIP or None, as on a Service.',
      },
      sessionAffinityConfig: {
        type: 'object',
        description: 'Settings of the session affinity.',
        properties: {
          clientIP: {
            type: 'object',
            description: 'Settings of ClientIP session affinity.',
            properties: {
              timeoutSeconds: {
                type: 'integer',
                format: 'int32',
                description: 'Seconds a ClientIP session sticks (1..86400).',
              },
            },
          },
        },
      },
      ipFamilies: {
        type: 'array',
        maxItems: 2,
        items: { type: 'string', enum: ['IPv4', 'IPv6'] },
        'x-kubernetes-list-type': 'set',
        description: 'IP families of the ips, in order; at most one of each.',
      },
      internalTrafficPolicy: {
        type: 'string',
        enum: ['Cluster', 'Local'],
        description: 'Cluster or Local, as on a Service.',
      },
      trafficDistribution: {
        type: 'string',
        description: 'Traffic distribution preference, as on a Service (for example PreferClose).',
      },
    },
  },
  {
    type: 'object',
    description: 'Written by the mcs-cloudmap worker.',
    properties: {
      clusters: {
        type: 'array',
        description: 'The clusters currently exporting this service.',
        items: {
          type: 'object',
          required: ['cluster'],
          properties: {
            cluster: {
              type: 'string',
              description: 'Cluster id (ClusterProperty cluster.clusterset.k8s.io) of an exporting cluster.',
            },
          },
        },
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['cluster'],
      },
      conditions: conditions('import (Ready)'),
      endpointSliceObjects: {
        type: 'string',
        enum: ['Present', 'Absent'],
        description: 'Whether EndpointSlices are published for this import (newer MCS API field, kept as written).',
      },
    },
  },
  ['spec'],
);

const clusterProperty = topLevel(
  'ClusterProperty holds one fact about this cluster (KEP-2149). cluster.clusterset.k8s.io holds the cluster id, ' +
    'clusterset.k8s.io the ClusterSet id; both must exist before anything is exported or imported.',
  {
    type: 'object',
    description: 'The property value.',
    required: ['value'],
    properties: {
      value: {
        type: 'string',
        minLength: 1,
        maxLength: CLUSTER_PROPERTY_VALUE_MAX,
        description:
          "Value of the property. For cluster.clusterset.k8s.io a DNS label (lowercase letters, digits, '-', at most 63).",
      },
    },
  },
  { type: 'object', description: 'Reserved for future use.' },
  ['spec'],
);

/**
 * Every object with listed properties (except metadata) keeps fields it does not know, so a peer running a newer MCS API
 * never has its fields pruned by our older schema (K4).
 */
function preserveUnknownFields(schema: JsonSchema, key = ''): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (out.properties) {
    out.properties = Object.fromEntries(
      Object.entries(out.properties).map(([k, v]) => [k, preserveUnknownFields(v, k)]),
    );
  }
  if (out.items) out.items = preserveUnknownFields(out.items);
  if (out.type === 'object' && !out.additionalProperties && key !== 'metadata')
    out['x-kubernetes-preserve-unknown-fields'] = true;
  return out;
}

export const SCHEMAS = {
  ServiceExport: preserveUnknownFields(serviceExport),
  ServiceImport: preserveUnknownFields(serviceImport),
  ClusterProperty: preserveUnknownFields(clusterProperty),
} as const;

export type CustomKind = keyof typeof SCHEMAS;
