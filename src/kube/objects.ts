// The Kubernetes objects mcs-cloudmap reads, one shape per kind, as the JSON the apiserver sends (timestamps are
// strings): the worker's informers, the webhook server's caches and admission rules, and the status command all use
// these. Each shape is KubeObject plus the structural inputs the core functions take, so no client types reach the core.
// The webhook server reads them through `Incoming<T>` (src/webhook/admission/objects.ts): a request may not name its object yet.
import type { Condition } from '../core/types.ts';
import type { EndpointSliceLike, ServiceExportLike, ServiceLike } from '../core/service-export.ts';
import type { StoredEndpointSlice } from '../core/endpoint-slices.ts';
import type { StoredService } from '../core/derived-service.ts';
import type { StoredServiceImport } from '../core/service-import.ts';
import type { KubeObject } from './resources.ts';

export type ServiceExportObject = KubeObject & {
  spec?: NonNullable<ServiceExportLike['spec']>;
  status?: { conditions?: Condition[] };
};

export type ServiceObject = KubeObject & {
  spec?: NonNullable<ServiceLike['spec']> & NonNullable<StoredService['spec']> & { clusterIPs?: string[] };
};

export type EndpointSliceObject = KubeObject &
  Omit<EndpointSliceLike, 'metadata'> &
  Omit<StoredEndpointSlice, 'metadata'>;

export type ServiceImportObject = KubeObject &
  Omit<StoredServiceImport, 'metadata' | 'status'> & {
    status?: { clusters?: Array<{ cluster: string }>; conditions?: Condition[]; endpointSliceObjects?: string };
  };

export type ClusterPropertyObject = KubeObject & { spec?: { value?: string } };

export type NamespaceObject = KubeObject & { status?: { phase?: string } };
