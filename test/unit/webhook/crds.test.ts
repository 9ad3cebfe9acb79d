import { expect } from 'chai';
import { customResourceDefinitions } from '../../../src/webhook/crd/definitions.ts';
import { staleCrdFiles } from '../../../src/webhook/crd/generate.ts';
import { CLUSTER_PROPERTY_VALUE_MAX, SCHEMAS, type JsonSchema } from '../../../src/webhook/crd/schemas.ts';

type Version = { name: string; served: boolean; storage: boolean; schema: { openAPIV3Schema: JsonSchema } };

describe('CRDs (K1–K4)', () => {
  it('crds/*.yaml are what `npm run crds` generates from the TypeScript schema', () => {
    expect(staleCrdFiles()).to.deep.equal([]);
  });

  it('serves v1alpha1 and v1beta1 with identical schemas, storing v1beta1, converted by our webhook', () => {
    for (const crd of customResourceDefinitions()) {
      const versions = crd.spec.versions as Version[];
      expect(versions.map((v) => [v.name, v.served, v.storage])).to.deep.equal([
        ['v1alpha1', true, false],
        ['v1beta1', true, true],
      ]);
      expect(versions[0]!.schema).to.deep.equal(versions[1]!.schema);
      expect(crd.spec.conversion).to.deep.include({ strategy: 'Webhook' });
      expect(JSON.stringify(crd.spec.conversion)).to.contain('"path":"/convert"').and.contain('mcs-cloudmap-webhook');
      expect(crd.metadata.annotations?.['cert-manager.io/inject-ca-from']).to.equal(
        'mcs-cloudmap-system/mcs-cloudmap-webhook',
      );
    }
  });

  it('points conversion at a URL with caBundle when asked (tests, demo)', () => {
    const [crd] = customResourceDefinitions({ url: 'https://127.0.0.1:9443', caBundle: 'Q0E=' });
    expect((crd!.spec.conversion as { webhook: unknown }).webhook).to.deep.equal({
      conversionReviewVersions: ['v1'],
      clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle: 'Q0E=' },
    });
    expect(crd!.metadata.annotations?.['cert-manager.io/inject-ca-from']).to.equal(undefined);
  });

  it('caps ClusterProperty values at 1..128000 characters', () => {
    const value = SCHEMAS.ClusterProperty.properties!.spec!.properties!.value!;
    expect([value.minLength, value.maxLength]).to.deep.equal([1, CLUSTER_PROPERTY_VALUE_MAX]);
    expect(CLUSTER_PROPERTY_VALUE_MAX).to.equal(128000);
  });

  it('keeps unknown fields in every object that lists properties, so newer peers are never pruned', () => {
    const unpreserved: string[] = [];
    const walk = (s: JsonSchema, path: string) => {
      if (s.properties && path !== '.metadata' && !s['x-kubernetes-preserve-unknown-fields']) unpreserved.push(path);
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, `${path}.${k}`);
      if (s.items) walk(s.items, `${path}[]`);
    };
    for (const [kind, schema] of Object.entries(SCHEMAS)) walk(schema, kind);
    expect(unpreserved).to.deep.equal([]);
  });

  it('declares list-maps keyed by type and cluster, and atomic ports', () => {
    const si = SCHEMAS.ServiceImport.properties!;
    expect(si.status!.properties!.clusters!['x-kubernetes-list-map-keys']).to.deep.equal(['cluster']);
    expect(si.status!.properties!.conditions!['x-kubernetes-list-map-keys']).to.deep.equal(['type']);
    expect(si.spec!.properties!.ports!['x-kubernetes-list-type']).to.equal('atomic');
    expect(si.status!.properties!.endpointSliceObjects!.enum).to.deep.equal(['Present', 'Absent']);
    expect(SCHEMAS.ServiceExport.properties!.status!.properties!.conditions!['x-kubernetes-list-type']).to.equal('map');
  });
});
