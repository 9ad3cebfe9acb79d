import type { V1EndpointSlice } from '@kubernetes/client-node';
import { expect } from 'chai';
import fc from 'fast-check';
import {
  buildClusterExport,
  exportValidity,
  serviceType,
  type EndpointSliceLike,
  type ServiceExportLike,
  type ServiceLike,
} from '../../../src/core/service-export.ts';
import { LABEL_KUBE_SERVICE_NAME } from '../../../src/core/names.ts';
import { readyEndpoint, tutorialExport } from './export-fixtures.ts';

// The structural shapes must accept the client library's objects as they are.
const typedService: ServiceLike = {};
const typedSlice: EndpointSliceLike = {} as V1EndpointSlice;
void typedService;
void typedSlice;

function service(spec: NonNullable<ServiceLike['spec']> = {}, name = 'nginx-hello', namespace = 'demo'): ServiceLike {
  return {
    metadata: { name, namespace },
    spec: {
      type: 'ClusterIP',
      clusterIP: '172.20.0.10',
      ipFamilies: ['IPv4'],
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
      ...spec,
    },
  };
}

function slice(
  name: string,
  overrides: Partial<EndpointSliceLike> = {},
  serviceName = 'nginx-hello',
  namespace = 'demo',
): EndpointSliceLike {
  return {
    metadata: { name, namespace, labels: { [LABEL_KUBE_SERVICE_NAME]: serviceName } },
    addressType: 'IPv4',
    ports: [{ name: '', protocol: 'TCP', port: 80 }],
    endpoints: [],
    ...overrides,
  };
}

const serviceExport: ServiceExportLike = {
  metadata: { name: 'nginx-hello', namespace: 'demo', creationTimestamp: new Date('2022-10-07T02:12:56Z') },
};
const build = (svc: ServiceLike, slices: EndpointSliceLike[] = [], se: ServiceExportLike = serviceExport) =>
  buildClusterExport({
    service: svc,
    serviceExport: se,
    endpointSlices: slices,
    clusterId: 'cls1',
    clustersetId: 'clusterset1',
  });

describe('export side: ServiceExport → ClusterExport (E4–E8)', () => {
  describe('exportValidity', () => {
    it('E4: a missing Service is NoService, with a message saying to create it', () => {
      const v = exportValidity(undefined);
      expect(v).to.include({ valid: false, reason: 'NoService' });
      expect(v.message).to.match(/create the Service/);
    });
    it('E5: an ExternalName Service is InvalidServiceType', () => {
      const v = exportValidity(service({ type: 'ExternalName', clusterIP: undefined }));
      expect(v).to.include({ valid: false, reason: 'InvalidServiceType' });
      expect(v.message).to.match(/ExternalName cannot be exported: change the Service/);
    });
    for (const type of ['ClusterIP', 'NodePort', 'LoadBalancer', undefined]) {
      it(`E1: a ${type ?? 'default-type'} Service is Valid`, () => {
        expect(exportValidity(service({ type }))).to.include({ valid: true, reason: 'Valid' });
      });
    }
  });

  describe('serviceType', () => {
    const table: Array<[NonNullable<ServiceLike['spec']>, string]> = [
      [{ type: 'ClusterIP', clusterIP: 'None' }, 'Headless'],
      [{ type: 'ClusterIP', clusterIP: '10.0.0.1' }, 'ClusterSetIP'],
      [{ type: 'NodePort', clusterIP: '10.0.0.1' }, 'ClusterSetIP'],
      [{ type: 'LoadBalancer', clusterIP: '10.0.0.1' }, 'ClusterSetIP'],
      [{}, 'ClusterSetIP'],
    ];
    for (const [spec, expected] of table) {
      it(`E6: ${JSON.stringify(spec)} exports as ${expected}`, () => {
        expect(serviceType({ spec })).to.equal(expected);
      });
    }
  });

  describe('buildClusterExport', () => {
    it('E1/E8: the tutorial nginx-hello with 3 ready endpoints', () => {
      const endpoints = ['10.10.78.125', '10.10.66.181', '10.10.16.120'].map((ip) => ({
        addresses: [ip],
        conditions: { ready: true },
        nodeName: 'ip-10-10-77-143',
      }));
      expect(build(service(), [slice('nginx-hello-abc', { endpoints })])).to.deep.equal(
        tutorialExport({
          endpoints: ['10.10.16.120', '10.10.66.181', '10.10.78.125'].map((address) =>
            readyEndpoint(address, 80, { nodeName: 'ip-10-10-77-143' }),
          ),
        }),
      );
    });

    it('ports: protocol defaults to TCP, appProtocol kept, named and missing targetPort', () => {
      const x = build(
        service({
          ports: [
            { name: 'http', port: 80, targetPort: 'web', appProtocol: 'kubernetes.io/h2c' },
            { name: 'dns', port: 53, protocol: 'UDP' },
          ],
        }),
      );
      expect(x.ports).to.deep.equal([
        { name: 'dns', protocol: 'UDP', port: 53, targetPort: '53' },
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 'web', appProtocol: 'kubernetes.io/h2c' },
      ]);
    });

    it('E8: readiness absent means ready; unready is kept as not ready; terminating endpoints are not exported', () => {
      const x = build(service(), [
        slice('s', {
          endpoints: [
            { addresses: ['10.0.0.1'] },
            { addresses: ['10.0.0.2'], conditions: { ready: false } },
            { addresses: ['10.0.0.3'], conditions: { ready: false, terminating: true } },
            { addresses: ['10.0.0.4'], conditions: { ready: true, terminating: false }, hostname: 'web-0' },
          ],
        }),
      ]);
      expect(x.endpoints.map((e) => [e.address, e.ready, e.hostname])).to.deep.equal([
        ['10.0.0.1', true, undefined],
        ['10.0.0.2', false, undefined],
        ['10.0.0.4', true, 'web-0'],
      ]);
    });

    it('uses only slices of this Service in its namespace with IP addresses', () => {
      const one = { endpoints: [{ addresses: ['10.0.0.1'] }] };
      const x = build(service(), [
        slice('mine', one),
        slice('other-service', { endpoints: [{ addresses: ['10.0.0.2'] }] }, 'other'),
        slice('other-namespace', { endpoints: [{ addresses: ['10.0.0.3'] }] }, 'nginx-hello', 'elsewhere'),
        slice('fqdn', { addressType: 'FQDN', endpoints: [{ addresses: ['example.com'] }] }),
        slice('unlabelled', {
          metadata: { name: 'unlabelled', namespace: 'demo' },
          endpoints: [{ addresses: ['10.0.0.4'] }],
        }),
      ]);
      expect(x.endpoints.map((e) => e.address)).to.deep.equal(['10.0.0.1']);
    });

    it('an address in two slices is exported once: ports merged, ready if either copy is', () => {
      const svc = service({
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81 },
        ],
      });
      const x = build(svc, [
        slice('s1', {
          ports: [{ name: 'a', port: 8080, protocol: 'TCP' }],
          endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: false } }],
        }),
        slice('s2', {
          ports: [{ name: 'b', port: 8081, protocol: 'TCP' }],
          endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true }, nodeName: 'n1' }],
        }),
      ]);
      expect(x.endpoints).to.deep.equal([
        {
          address: '10.0.0.1',
          ready: true,
          nodeName: 'n1',
          ports: [
            { name: 'a', protocol: 'TCP', port: 8080 },
            { name: 'b', protocol: 'TCP', port: 8081 },
          ],
        },
      ]);
    });

    it('slice ports the Service no longer has are not exported, nor endpoints left without a port', () => {
      const svc = service({ ports: [{ name: 'http', port: 80 }] });
      const x = build(svc, [
        slice('current', {
          ports: [
            { name: 'http', port: 8080, protocol: 'TCP' },
            { name: 'old', port: 9000, protocol: 'TCP' },
          ],
          endpoints: [{ addresses: ['10.0.0.1'] }],
        }),
        slice('stale', {
          ports: [{ name: 'old', port: 9000, protocol: 'TCP' }],
          endpoints: [{ addresses: ['10.0.0.2'] }],
        }),
        slice('no-number', { ports: [{ name: 'http', protocol: 'TCP' }], endpoints: [{ addresses: ['10.0.0.3'] }] }),
      ]);
      expect(x.endpoints).to.deep.equal([
        { address: '10.0.0.1', ready: true, ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] },
      ]);
    });

    it('E6: a headless Service without ports exports its endpoints without ports', () => {
      const x = build(service({ clusterIP: 'None', ports: undefined }), [
        slice('s', { ports: [], endpoints: [{ addresses: ['10.0.0.1'], hostname: 'db-0' }] }),
      ]);
      expect(x.type).to.equal('Headless');
      expect(x.ports).to.deep.equal([]);
      expect(x.endpoints).to.deep.equal([{ address: '10.0.0.1', ready: true, hostname: 'db-0', ports: [] }]);
    });

    it("E7: exported labels and annotations are exactly the ServiceExport's spec maps, never the Service's metadata", () => {
      const svc = {
        ...service(),
        metadata: { name: 'nginx-hello', namespace: 'demo', labels: { app: 'nginx' }, annotations: { note: 'x' } },
      };
      const se: ServiceExportLike = {
        metadata: { ...serviceExport.metadata, labels: { own: 'label' } } as ServiceExportLike['metadata'],
        spec: { exportedLabels: { team: 'web' }, exportedAnnotations: { 'example.com/owner': 'Zoë' } },
      };
      const x = build(svc, [], se);
      expect(x.exportedLabels).to.deep.equal({ team: 'web' });
      expect(x.exportedAnnotations).to.deep.equal({ 'example.com/owner': 'Zoë' });
      expect(build(svc).exportedLabels).to.deep.equal({});
    });

    it('X3 properties: session affinity with its timeout, internal traffic policy, traffic distribution, IP families', () => {
      const x = build(
        service({
          sessionAffinity: 'ClientIP',
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
          internalTrafficPolicy: 'Local',
          trafficDistribution: 'PreferClose',
          ipFamilies: ['IPv6', 'IPv4'],
        }),
      );
      expect(x).to.include({
        sessionAffinity: 'ClientIP',
        sessionAffinityTimeoutSeconds: 600,
        internalTrafficPolicy: 'Local',
        trafficDistribution: 'PreferClose',
      });
      expect(x.ipFamilies).to.deep.equal(['IPv6', 'IPv4']);
      const none = build(
        service({ sessionAffinity: 'None', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } }),
      );
      expect(none).to.not.have.property('sessionAffinityTimeoutSeconds');
      expect(none).to.not.have.property('internalTrafficPolicy');
      expect(build(service({ ipFamilies: undefined })).ipFamilies, 'no families stated').to.deep.equal([]);
    });

    it('X1: exportCreationTimestamp is the ServiceExport creationTimestamp in ms (Date or RFC 3339 text)', () => {
      expect(
        build(service(), [], { metadata: { creationTimestamp: '2022-10-07T02:12:56Z' } }).exportCreationTimestamp,
      ).to.equal(1665108776000);
      expect(() => build(service(), [], { metadata: {} })).to.throw(
        /ServiceExport demo\/nginx-hello: metadata.creationTimestamp is missing/,
      );
    });

    it('E5: refuses to build an export of an ExternalName Service, saying which and why', () => {
      expect(() => build(service({ type: 'ExternalName' }))).to.throw(
        /Service demo\/nginx-hello in cluster cls1 cannot be exported \(InvalidServiceType\)/,
      );
    });

    it('refuses an unknown protocol, naming the Service and port', () => {
      expect(() => build(service({ ports: [{ port: 80, protocol: 'HTTP' }] }))).to.throw(
        /Service demo\/nginx-hello in cluster cls1 port 80: protocol "HTTP"/,
      );
    });

    it('E8: every exported endpoint port belongs to a Service port and no terminating address is exported (property)', () => {
      const portArb = fc.record({
        name: fc.constantFrom('a', 'b', 'c'),
        protocol: fc.constantFrom('TCP', 'UDP'),
        port: fc.integer({ min: 1, max: 3 }),
      });
      const endpointArb = fc.record({
        addresses: fc.tuple(fc.constantFrom('10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4')).map((a) => [...a]),
        conditions: fc.record({ ready: fc.boolean(), terminating: fc.boolean() }, { requiredKeys: [] }),
      });
      const sliceArb = fc.record({
        ports: fc.uniqueArray(portArb, { selector: (p) => p.name, maxLength: 3 }),
        endpoints: fc.array(endpointArb, { maxLength: 4 }),
      });
      fc.assert(
        fc.property(
          fc.uniqueArray(portArb, { selector: (p) => p.name, maxLength: 3 }),
          fc.array(sliceArb, { maxLength: 3 }),
          (svcPorts, slices) => {
            const x = build(
              service({ ports: svcPorts }),
              slices.map((s, i) => slice(`s${i}`, s)),
            );
            const exposed = new Set(x.ports.map((p) => `${p.name}/${p.protocol}`));
            const kept = new Set<string | undefined>(
              slices
                .flatMap((s) => s.endpoints)
                .filter((e) => e.conditions.terminating !== true)
                .map((e) => e.addresses[0]),
            );
            expect(new Set(x.endpoints.map((e) => e.address)).size).to.equal(x.endpoints.length);
            for (const e of x.endpoints) {
              expect(kept.has(e.address), `${e.address} only has terminating copies`).to.equal(true);
              if (x.ports.length > 0) expect(e.ports.length).to.be.greaterThan(0);
              for (const p of e.ports) expect(exposed.has(`${p.name}/${p.protocol}`)).to.equal(true);
              expect(new Set(e.ports.map((p) => `${p.name}/${p.protocol}`)).size).to.equal(e.ports.length);
            }
          },
        ),
      );
    });
  });
});
