// X5, strict port conflicts: each port of a ServiceImport routes only to the clusters whose export defines that port as
// the import states it (upstream conformance, label StrictPortConflict). From exports through resolveImport to the
// EndpointSlice plan, and the narrowing that keeps a port restatement from publishing anyone behind the wrong port.
import { expect } from 'chai';
import fc from 'fast-check';
import { byPrecedence, resolveImport } from '../../../src/core/conflicts.ts';
import { planEndpointSlices, type DesiredEndpointSlice } from '../../../src/core/endpoint-slices.ts';
import { LABEL_SOURCE_CLUSTER } from '../../../src/core/names.ts';
import {
  mergePorts,
  servedWhilePortsChange,
  toPortSpec,
  type ServedPorts,
  type StoredPort,
} from '../../../src/core/ports.ts';
import type { ClusterExport, ServicePort } from '../../../src/core/types.ts';
import { clusterExport, endpoint, exportsArb, port } from './import-fixtures.ts';

/** The cluster's endpoints serve each of its Service ports (target port = port + 8000), as its own slices would say. */
function withEndpoints(e: ClusterExport, addresses: string[]): ClusterExport {
  const ports = e.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.port + 8000 }));
  return { ...e, endpoints: addresses.map((address) => endpoint(address, { ports })) };
}

function slicesOf(exports: ClusterExport[]): DesiredEndpointSlice[] {
  const { served } = resolveImport(exports);
  return planEndpointSlices({
    namespace: 'ns',
    importName: 'hello',
    derivedServiceName: 'imported-hello',
    exports,
    served,
  }).slices;
}

/** cluster → port name → addresses behind it: what kube-proxy and a GEP-1748 gateway would route to per port. */
function routing(slices: readonly DesiredEndpointSlice[]): Record<string, Record<string, string[]>> {
  const out: Record<string, Record<string, string[]>> = {};
  for (const slice of slices) {
    const cluster = slice.metadata.labels[LABEL_SOURCE_CLUSTER]!;
    for (const p of slice.ports) {
      const byPort = (out[cluster] ??= {});
      byPort[p.name ?? ''] = [...(byPort[p.name ?? ''] ?? []), ...slice.endpoints.map((e) => e.addresses[0])].sort();
    }
  }
  return out;
}

const served = (entries: Array<[string, string[]]>): ServedPorts =>
  new Map(entries.map(([c, names]) => [c, new Set(names)]));

describe('core: strict port conflicts (X5)', () => {
  describe('mergePorts served', () => {
    const cases: Array<{
      title: string;
      exports: Array<{ clusterId: string; ports: ServicePort[] }>;
      served: ServedPorts;
    }> = [
      {
        title: 'X5: same name, another number: the newer cluster serves nothing under that name',
        exports: [
          { clusterId: 'cls1', ports: [port('tcp', 42)] },
          { clusterId: 'cls2', ports: [port('tcp', 4242)] },
        ],
        served: served([
          ['cls1', ['tcp']],
          ['cls2', []],
        ]),
      },
      {
        title: 'X5: different names: each cluster serves its own port',
        exports: [
          { clusterId: 'cls1', ports: [port('tcp', 42)] },
          { clusterId: 'cls2', ports: [port('tcp2', 4242)] },
        ],
        served: served([
          ['cls1', ['tcp']],
          ['cls2', ['tcp2']],
        ]),
      },
      {
        title: 'X5: the same (protocol, port) under another name serves neither name',
        exports: [
          { clusterId: 'a', ports: [port('http', 80)] },
          { clusterId: 'b', ports: [port('web', 80), port('metrics', 9090)] },
        ],
        served: served([
          ['a', ['http']],
          ['b', ['metrics']],
        ]),
      },
      {
        title: 'X5: an unset appProtocol agrees; another set one loses the port',
        exports: [
          { clusterId: 'a', ports: [port('http', 80)] },
          { clusterId: 'b', ports: [port('http', 80, 'TCP', 'h2c')] },
          { clusterId: 'c', ports: [port('http', 80, 'TCP', 'http')] },
        ],
        served: served([
          ['a', ['http']],
          ['b', ['http']],
          ['c', []],
        ]),
      },
      {
        title: 'X5: a union without clashes is served port by port (mcs-api v0.5.0 conformance case)',
        exports: [
          { clusterId: 'cls1', ports: [port('tcp', 42), port('udp', 42, 'UDP')] },
          { clusterId: 'cls2', ports: [port('tcp', 42), port('stcp', 142, 'SCTP')] },
        ],
        served: served([
          ['cls1', ['tcp', 'udp']],
          ['cls2', ['tcp', 'stcp']],
        ]),
      },
    ];
    for (const c of cases) {
      it(c.title, () => {
        expect(mergePorts(c.exports).served).to.deep.equal(c.served);
      });
    }
  });

  describe('planEndpointSlices with the served ports', () => {
    it('X5 (conformance "same port name but different port numbers"): the port routes only to the cluster that exposes it', () => {
      const cls1 = withEndpoints(clusterExport('cls1', 1000, { ports: [port('tcp', 42)] }), ['10.1.0.1']);
      const cls2 = withEndpoints(clusterExport('cls2', 2000, { ports: [port('tcp', 4242)] }), ['10.2.0.1']);
      expect(resolveImport([cls1, cls2]).properties.ports).to.deep.equal([port('tcp', 42)]);
      expect(routing(slicesOf([cls2, cls1]))).to.deep.equal({ cls1: { tcp: ['10.1.0.1'] } });
    });

    it('X5 (conformance "different port name on each cluster"): each port routes to the cluster that exposes it', () => {
      const cls1 = withEndpoints(clusterExport('cls1', 1000, { ports: [port('tcp', 42)] }), ['10.1.0.1']);
      const cls2 = withEndpoints(clusterExport('cls2', 2000, { ports: [port('tcp2', 4242)] }), ['10.2.0.1']);
      expect(routing(slicesOf([cls1, cls2]))).to.deep.equal({
        cls1: { tcp: ['10.1.0.1'] },
        cls2: { tcp2: ['10.2.0.1'] },
      });
    });

    it('X5: a loser keeps the ports it does define as stated; only the clashing one is left out of its slices', () => {
      const a = withEndpoints(clusterExport('a', 1000, { ports: [port('http', 80), port('metrics', 9090)] }), [
        '10.1.0.1',
      ]);
      const b = withEndpoints(clusterExport('b', 2000, { ports: [port('http', 8080), port('metrics', 9090)] }), [
        '10.2.0.1',
        '10.2.0.2',
      ]);
      const slices = slicesOf([a, b]);
      expect(routing(slices)).to.deep.equal({
        a: { http: ['10.1.0.1'], metrics: ['10.1.0.1'] },
        b: { metrics: ['10.2.0.1', '10.2.0.2'] },
      });
      expect(slices.find((s) => s.metadata.labels[LABEL_SOURCE_CLUSTER] === 'b')?.ports).to.deep.equal([
        { name: 'metrics', protocol: 'TCP', port: 17090 },
      ]);
    });

    it('X5: a cluster left with none of its ports has no slice, so neither kube-proxy nor DNS nor a gateway reaches it', () => {
      const slices = slicesOf([
        withEndpoints(clusterExport('a', 1000, { ports: [port('http', 80)] }), ['10.1.0.1']),
        withEndpoints(clusterExport('b', 2000, { ports: [port('web', 80)] }), ['10.2.0.1']),
      ]);
      expect(slices.map((s) => s.metadata.labels[LABEL_SOURCE_CLUSTER])).to.deep.equal(['a']);
    });

    it('X5: endpoints without ports (a headless Service without ports) are imported as before', () => {
      const portless = {
        ...clusterExport('a', 1000, { type: 'Headless', ports: [] }),
        endpoints: [endpoint('10.1.0.1', { ports: [] })],
      };
      expect(slicesOf([portless]).flatMap((s) => s.endpoints.map((e) => e.addresses[0]))).to.deep.equal(['10.1.0.1']);
    });

    it('X5: the Conflict message says which port the loser is left out of and that its endpoints get no traffic for it', () => {
      const { conflict } = resolveImport([
        clusterExport('cls1', 1000, { ports: [port('tcp', 42)] }),
        clusterExport('cls2', 2000, { ports: [port('tcp', 4242)] }),
      ]);
      expect(conflict?.message).to.contain(
        'port "tcp" is TCP/42 in cluster cls1 (older export, wins) but TCP/4242 in cluster cls2, so the endpoints of cls2 are left out of port "tcp" and receive no traffic for it',
      );
      const renamed = resolveImport([
        clusterExport('a', 1000, { ports: [port('http', 80)] }),
        clusterExport('b', 2000, { ports: [port('web', 80)] }),
      ]);
      expect(renamed.conflict?.message).to.contain(
        'so port "web" of b is left out and its endpoints receive no traffic on TCP/80',
      );
    });

    it('X5 property: every port of every slice is one its cluster defines exactly as the ServiceImport states it', () => {
      fc.assert(
        fc.property(exportsArb, (generated) => {
          const exports = generated.map((e, i) => withEndpoints(e, [`10.${i}.0.1`, `10.${i}.0.2`]));
          const { properties } = resolveImport(exports);
          const stated = new Map(properties.ports.map((p) => [p.name, p]));
          for (const slice of slicesOf(exports)) {
            const own = exports.find((e) => e.clusterId === slice.metadata.labels[LABEL_SOURCE_CLUSTER])!;
            for (const p of slice.ports) {
              const importPort = stated.get(p.name ?? '');
              const definition = own.ports.find((q) => q.name === (p.name ?? ''));
              expect(importPort, `${own.clusterId} "${p.name}" is a port of the import`).not.to.equal(undefined);
              expect([definition?.protocol, definition?.port]).to.deep.equal([importPort!.protocol, importPort!.port]);
              const appProtocols = [definition?.appProtocol, importPort!.appProtocol];
              if (!appProtocols.includes(undefined)) expect(appProtocols[0]).to.equal(appProtocols[1]);
            }
          }
        }),
        { numRuns: 300 },
      );
    });

    it('X5 property: the oldest export serves all its ports, and an endpoint is left out only when it would serve none', () => {
      fc.assert(
        fc.property(exportsArb, (generated) => {
          const exports = generated.map((e, i) => withEndpoints(e, [`10.${i}.0.1`]));
          const { served } = resolveImport(exports);
          const oldest = byPrecedence(exports)[0]!;
          expect([...served.get(oldest.clusterId)!].sort()).to.deep.equal(oldest.ports.map((p) => p.name).sort());
          const placed = new Set(
            slicesOf(exports).flatMap((s) =>
              s.endpoints.map((e) => `${s.metadata.labels[LABEL_SOURCE_CLUSTER]}/${e.addresses[0]}`),
            ),
          );
          for (const e of exports) {
            const serves = e.ports.length === 0 || e.ports.some((p) => served.get(e.clusterId)!.has(p.name));
            expect(placed.has(`${e.clusterId}/${e.endpoints[0]!.address}`), e.clusterId).to.equal(serves);
          }
        }),
        { numRuns: 300 },
      );
    });
  });

  describe('servedWhilePortsChange', () => {
    const now = served([
      ['cls1', ['tcp', 'metrics']],
      ['cls2', ['metrics']],
    ]);
    const next = [port('tcp', 42), port('metrics', 9090)];
    const spec = (ports: ServicePort[]): StoredPort[] => ports.map(toPortSpec);

    it('X5: nothing to narrow when the published ports state every port as the merge does (or not at all)', () => {
      expect(servedWhilePortsChange(now, next, [])).to.equal(undefined);
      expect(servedWhilePortsChange(now, next, [spec(next), spec([port('metrics', 9090)])])).to.equal(undefined);
      // The derived Service's targetPort and a port that is going away do not restate anything.
      expect(
        servedWhilePortsChange(now, next, [
          [...spec(next).map((p) => ({ ...p, targetPort: p.port })), { name: 'old', protocol: 'TCP', port: 1 }],
        ]),
      ).to.equal(undefined);
    });

    it('X5: a port published with another number, protocol or appProtocol is served by nobody until restated', () => {
      for (const published of [[port('tcp', 4242)], [port('tcp', 42, 'UDP')], [port('tcp', 42, 'TCP', 'h2c')]]) {
        expect(servedWhilePortsChange(now, next, [spec(next), spec(published)])).to.deep.equal(
          served([
            ['cls1', ['metrics']],
            ['cls2', ['metrics']],
          ]),
        );
      }
    });

    it('X5 property: the narrowed ports are served now and state nothing a published port states otherwise', () => {
      const publishedArb = fc.array(
        fc.record({ name: fc.constantFrom('', 'http', 'https', 'grpc'), port: fc.constantFrom(80, 443, 8080) }),
        { maxLength: 4 },
      );
      fc.assert(
        fc.property(exportsArb, publishedArb, (exports, published) => {
          const merged = mergePorts(byPrecedence(exports));
          const narrowed = servedWhilePortsChange(merged.served, merged.ports, [published]) ?? merged.served;
          const stated = new Map(merged.ports.map((p) => [p.name, p]));
          for (const [cluster, names] of narrowed) {
            for (const name of names) {
              expect(merged.served.get(cluster)!.has(name)).to.equal(true);
              const before = published.find((p) => p.name === name);
              if (before !== undefined)
                expect([before.port, stated.get(name)!.protocol, stated.get(name)!.appProtocol]).to.deep.equal([
                  stated.get(name)!.port,
                  'TCP',
                  undefined,
                ]);
            }
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});
