// Names fixed by the MCS API (KEP-1645, KEP-2149) and by this controller. Every process and test imports them from here.

export const MCS_GROUP = 'multicluster.x-k8s.io';
export const ABOUT_GROUP = 'about.k8s.io';
/** Served versions, storage version last (K1). */
export const VERSIONS = ['v1alpha1', 'v1beta1'] as const;
export type ApiVersionName = (typeof VERSIONS)[number];
export const STORAGE_VERSION: ApiVersionName = 'v1beta1';

export const SERVICE_EXPORT_PLURAL = 'serviceexports';
export const SERVICE_IMPORT_PLURAL = 'serviceimports';
export const CLUSTER_PROPERTY_PLURAL = 'clusterproperties';

/** KEP-2149 well-known ClusterProperty names (C1). */
export const CLUSTER_ID_PROPERTY = 'cluster.clusterset.k8s.io';
export const CLUSTERSET_ID_PROPERTY = 'clusterset.k8s.io';

/** EndpointSlice and ServiceImport labels (S2). */
export const LABEL_SERVICE_NAME = 'multicluster.kubernetes.io/service-name';
export const LABEL_SOURCE_CLUSTER = 'multicluster.kubernetes.io/source-cluster';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const LABEL_KUBE_SERVICE_NAME = 'kubernetes.io/service-name';

/** Value of endpointslice.kubernetes.io/managed-by on our slices; never the default controller's. */
export const CONTROLLER_NAME = 'mcs-cloudmap.multicluster.x-k8s.io';
/** Marks objects this controller created (derived Services, slices) so it never touches anyone else's. */
export const LABEL_CREATED_BY = 'multicluster.x-k8s.io/created-by';
/** ServiceImport annotation with every exporting cluster's export facts (export-record.ts), read by the webhook (X1–X3). */
export const EXPORT_RECORD_ANNOTATION = `${CONTROLLER_NAME}/exports`;
/** Finalizer put on every ServiceExport so its Cloud Map instances are removed before it goes (E3). */
export const SERVICE_EXPORT_FINALIZER = 'multicluster.x-k8s.io/service-export-cleanup';
/** Prefix of derived Service names: `derived-<hash>` as in the AWS controller, kept short and DNS-valid. */
export const DERIVED_SERVICE_PREFIX = 'imported-';

/** Namespace, Service and cert-manager Certificate of the webhook server (conversion stanzas, webhook configurations). */
export const SYSTEM_NAMESPACE = 'mcs-cloudmap-system';
export const WEBHOOK_SERVICE_NAME = 'mcs-cloudmap-webhook';
export const WEBHOOK_CERTIFICATE_NAME = 'mcs-cloudmap-webhook';
/** Default identity of the reconcile worker, the only writer of ServiceImports and MCS EndpointSlices (I6). */
export const WORKER_SERVICE_ACCOUNT = 'system:serviceaccount:mcs-cloudmap-system:mcs-cloudmap-worker';

/** Cloud Map instance attributes that say which cluster and ClusterSet an instance belongs to (M2, M4, M5). */
export const ATTR_CLUSTER_ID = 'CLUSTER_ID';
export const ATTR_CLUSTERSET_ID = 'CLUSTERSET_ID';
