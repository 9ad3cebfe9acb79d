import { expect } from 'chai';
import { trimEndpointSlice, trimNamespace } from '../../../src/worker/informers.ts';
import type { EndpointSliceObject, NamespaceObject } from '../../../src/worker/objects.ts';

describe('worker informer trims (what the reconcilers read stays; docs/benchmarks.md)', () => {
  it('an EndpointSlice keeps addresses, conditions, hostname, nodeName, zone and hints of each endpoint, and its ports', () => {
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 's',
        namespace: 'n',
        labels: { 'kubernetes.io/service-name': 'svc' },
        managedFields: [{ manager: 'kcm' }],
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      endpoints: [
        {
          addresses: ['10.0.0.1'],
          conditions: { ready: true, serving: true, terminating: false },
          hostname: 'h',
          nodeName: 'node-1',
          zone: 'us-east-1a',
          targetRef: { kind: 'Pod', name: 'p', namespace: 'n', uid: 'u' },
          hints: { forZones: [{ name: 'us-east-1a' }] },
        },
        { addresses: ['10.0.0.2'] },
      ],
    } as unknown as EndpointSliceObject;
    expect(trimEndpointSlice(slice)).to.deep.equal({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 's', namespace: 'n', labels: { 'kubernetes.io/service-name': 'svc' } },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      endpoints: [
        {
          addresses: ['10.0.0.1'],
          conditions: { ready: true, serving: true, terminating: false },
          hostname: 'h',
          nodeName: 'node-1',
          zone: 'us-east-1a',
          hints: { forZones: [{ name: 'us-east-1a' }] },
        },
        { addresses: ['10.0.0.2'] },
      ],
    });
  });

  it('an EndpointSlice without endpoints or ports stays without them', () => {
    const slice = {
      metadata: { name: 's', namespace: 'n' },
      addressType: 'IPv6',
      endpoints: null,
    } as unknown as EndpointSliceObject;
    expect(trimEndpointSlice(slice)).to.deep.equal({
      apiVersion: undefined,
      kind: undefined,
      metadata: { name: 's', namespace: 'n' },
      addressType: 'IPv6',
    });
  });

  it('a Namespace keeps its metadata (deletionTimestamp) and phase, not its spec', () => {
    const ns = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'n', deletionTimestamp: 't' },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Terminating' },
    } as NamespaceObject;
    expect(trimNamespace(ns)).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'n', deletionTimestamp: 't' },
      status: { phase: 'Terminating' },
    });
  });
});
