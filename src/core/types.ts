// Plain-data model shared by the export side (Kubernetes → Cloud Map) and the import side (Cloud Map → Kubernetes).
// No Kubernetes or AWS SDK types here: adapters convert at the edges.

export type ServiceType = 'ClusterSetIP' | 'Headless';
export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type IPFamily = 'IPv4' | 'IPv6';

/** A port of a multi-cluster service as it appears in ServiceImport.spec.ports. */
export interface ServicePort {
  name: string; // '' when the Service port is unnamed
  protocol: Protocol;
  port: number;
  appProtocol?: string;
  /**
   * The Service's targetPort (number or name, as text) on the export side; written to SERVICE_TARGET_PORT because the
   * AWS controller v0.3.1 reads it (M3). Not part of ServiceImport ports and not compared when merging ports (X2).
   */
  targetPort?: string;
}

/** One endpoint port (EndpointSlice `ports[]`), matched to a ServicePort by name. */
export interface EndpointPort {
  name: string;
  protocol: Protocol;
  port: number;
  appProtocol?: string;
}

/** One endpoint address of a source cluster with the facts E8 requires to be kept current. */
export interface ExportedEndpoint {
  address: string;
  ready: boolean;
  hostname?: string;
  nodeName?: string;
  /** The endpoint's topology zone (EndpointSlice `zone`), so importing clusters can prefer close endpoints. */
  zone?: string;
  /** The ports this endpoint serves (EndpointSlice ports of the slice it came from). */
  ports: EndpointPort[];
}

/** Service-level properties that must agree across clusters (X3); the oldest export's value wins. */
export interface ExportedServiceProperties {
  type: ServiceType;
  ports: ServicePort[];
  sessionAffinity: 'ClientIP' | 'None';
  /** sessionAffinityConfig.clientIP.timeoutSeconds, when set. */
  sessionAffinityTimeoutSeconds?: number;
  internalTrafficPolicy?: 'Cluster' | 'Local';
  trafficDistribution?: string;
  ipFamilies: IPFamily[];
  /** Only what ServiceExport.spec.exportedLabels / exportedAnnotations list (E7). */
  exportedLabels: Record<string, string>;
  exportedAnnotations: Record<string, string>;
  /**
   * Set on a member that is not a Kubernetes cluster (registrants.ts): it states its ports only, and agrees with every
   * cluster on the other properties (I12).
   */
  portsOnly?: true;
}

/**
 * What one cluster exports for one namespace/name: built from the local Service, ServiceExport and EndpointSlices on the
 * export side, and read back from that cluster's Cloud Map instances on the import side.
 */
export interface ClusterExport extends ExportedServiceProperties {
  clusterId: string;
  clustersetId: string;
  namespace: string;
  name: string;
  /** ServiceExport.metadata.creationTimestamp in Unix milliseconds: the precedence key of X1. */
  exportCreationTimestamp: number;
  endpoints: ExportedEndpoint[];
}

/** A Cloud Map instance as plain data (RegisterInstance / DiscoverInstances / ListInstances). */
export interface CloudMapInstance {
  id: string;
  attributes: Record<string, string>;
}

/** Kubernetes metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}
