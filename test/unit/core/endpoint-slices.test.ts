import { expect } from 'chai';
import fc from 'fast-check';
import {
  diffEndpointSlices,
  MAX_ENDPOINTS_PER_SLICE,
  planEndpointSlices,
  type DesiredEndpointSlice,
  type EndpointSlicePlanInput,
  type StoredEndpointSlice,
} from '../../../src/core/endpoint-slices.ts';
import type { ServedPorts } from '../../../src/core/ports.ts';
import {
  CONTROLLER_NAME,
  LABEL_CREATED_BY,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SOURCE_CLUSTER,
} from '../../../src/core/names.ts';
import { serviceImportOwnerReference } from '../../../src/core/service-import.ts';
import { clusterEndpointsArb, endpoint } from './import-fixtures.ts';

const owner = serviceImportOwnerReference('web', 'uid-1');

/** Every cluster serves every port its endpoints have: no port conflict. */
function servingAll(exports: EndpointSlicePlanInput['exports']): ServedPorts {
  return new Map(exports.map((x) => [x.clusterId, new Set(x.endpoints.flatMap((e) => e.ports.map((p) => p.name)))]));
}

function plan(
  exports: EndpointSlicePlanInput['exports'],
  served = servingAll(exports),
  zoneHints = false,
): ReturnType<typeof planEndpointSlices> {
  return planEndpointSlices({
    namespace: 'default',
    importName: 'web',
    derivedServiceName: 'imported-web-0123456789',
    owner,
    exports,
    served,
    zoneHints,
  });
}

function ipv4(n: number): string {
  return `10.1.${n >> 8}.${n & 255}`;
}

/** What the API server hands back after storing a slice: server fields added, lists reordered, undefined dropped. */
function stored(slice: DesiredEndpointSlice, n: number): StoredEndpointSlice {
  const copy = JSON.parse(JSON.stringify(slice)) as DesiredEndpointSlice & { metadata: Record<string, unknown> };
  Object.assign(copy.metadata, {
    uid: `u${n}`,
    resourceVersion: String(100 + n),
    generation: 1,
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{}],
  });
  copy.endpoints.reverse();
  copy.ports.reverse();
  return copy;
}

describe('core/endpoint-slices', () => {
  describe('planEndpointSlices (S1–S4)', () => {
    it('S1/S2: a discovery.k8s.io/v1 slice per source cluster with exactly the S2 labels plus created-by', () => {
      const { slices, problems } = plan([
        { clusterId: 'east', endpoints: [endpoint('10.0.0.1', { hostname: 'web-0', nodeName: 'node-1' })] },
        { clusterId: 'west', endpoints: [endpoint('10.0.0.1', { ready: false })] },
      ]);
      expect(problems).to.deep.equal([]);
      expect(slices).to.have.length(2);
      const [east, west] = slices;
      expect(east).to.deep.include({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4' });
      expect(east?.metadata.labels).to.deep.equal({
        [LABEL_SERVICE_NAME]: 'web',
        [LABEL_SOURCE_CLUSTER]: 'east',
        [LABEL_MANAGED_BY]: CONTROLLER_NAME,
        [LABEL_KUBE_SERVICE_NAME]: 'imported-web-0123456789',
        [LABEL_CREATED_BY]: CONTROLLER_NAME,
      });
      expect(east?.metadata.ownerReferences).to.deep.equal([owner]);
      expect(east?.endpoints).to.deep.equal([
        {
          addresses: ['10.0.0.1'],
          conditions: { ready: true, serving: true, terminating: false },
          hostname: 'web-0',
          nodeName: 'node-1',
        },
      ]);
      expect(east?.ports).to.deep.equal([{ name: 'http', protocol: 'TCP', port: 8080 }]);
      expect(west?.metadata.labels[LABEL_SOURCE_CLUSTER]).to.equal('west');
      expect(west?.endpoints[0]?.conditions).to.deep.equal({ ready: false, serving: false, terminating: false });
      expect(east?.metadata.name).not.to.equal(west?.metadata.name);
    });

    it('S4: at most 100 endpoints per slice and none dropped at any size (250 and 2,500 endpoints)', () => {
      for (const total of [100, 101, 250, 2500]) {
        const { slices } = plan([
          { clusterId: 'east', endpoints: Array.from({ length: total }, (_, i) => endpoint(ipv4(i))) },
        ]);
        expect(slices).to.have.length(Math.ceil(total / MAX_ENDPOINTS_PER_SLICE));
        expect(slices.every((s) => s.endpoints.length <= MAX_ENDPOINTS_PER_SLICE)).to.equal(true);
        expect(new Set(slices.flatMap((s) => s.endpoints.map((e) => e.addresses[0]))).size).to.equal(total);
      }
    });

    it('S1: IPv4 and IPv6 endpoints go to separate slices with their addressType', () => {
      const { slices } = plan([
        { clusterId: 'east', endpoints: [endpoint('10.0.0.1'), endpoint('fd00::1'), endpoint('10.0.0.2')] },
      ]);
      expect(slices.map((s) => [s.addressType, s.endpoints.map((e) => e.addresses[0])])).to.deep.equal([
        ['IPv4', ['10.0.0.1', '10.0.0.2']],
        ['IPv6', ['fd00::1']],
      ]);
    });

    it('endpoints serving different ports go to different slices (a slice has one port list)', () => {
      const metrics = [
        { name: 'http', protocol: 'TCP' as const, port: 8080 },
        { name: 'metrics', protocol: 'TCP' as const, port: 9090 },
      ];
      const { slices } = plan([
        { clusterId: 'east', endpoints: [endpoint('10.0.0.1'), endpoint('10.0.0.2', { ports: metrics })] },
      ]);
      expect(
        slices.map((s) => [s.endpoints.map((e) => e.addresses[0]), s.ports.map((p) => p.name)]),
      ).to.have.deep.members([
        [['10.0.0.1'], ['http']],
        [['10.0.0.2'], ['http', 'metrics']],
      ]);
    });

    it('names are <import>-<cluster>-<hash>-<n>, at most 63 characters, and differ where dashes make the text ambiguous', () => {
      const served = new Map([
        ['c', new Set(['http'])],
        ['b-c', new Set(['http'])],
        ['y'.repeat(63), new Set(['http'])],
      ]);
      const a = planEndpointSlices({
        namespace: 'ns',
        importName: 'a-b',
        derivedServiceName: 'd',
        exports: [{ clusterId: 'c', endpoints: [endpoint('10.0.0.1')] }],
        served,
      });
      const b = planEndpointSlices({
        namespace: 'ns',
        importName: 'a',
        derivedServiceName: 'd',
        exports: [{ clusterId: 'b-c', endpoints: [endpoint('10.0.0.1')] }],
        served,
      });
      expect(a.slices[0]?.metadata.name).to.match(/^a-b-c-[0-9a-f]{8}-0$/);
      expect(b.slices[0]?.metadata.name).to.match(/^a-b-c-[0-9a-f]{8}-0$/);
      expect(a.slices[0]?.metadata.name).not.to.equal(b.slices[0]?.metadata.name);
      const long = planEndpointSlices({
        namespace: 'ns',
        importName: 'x'.repeat(63),
        derivedServiceName: 'd',
        exports: [{ clusterId: 'y'.repeat(63), endpoints: [endpoint('10.0.0.1')] }],
        served,
      });
      expect(long.slices[0]?.metadata.name).to.have.length.at.most(63);
    });

    it('leaves out what the API server would refuse and says so, importing the rest', () => {
      const { slices, problems } = plan([
        {
          clusterId: 'east',
          endpoints: [
            endpoint('not-an-ip'),
            endpoint('10.0.0.1', { hostname: 'Bad_Host' }),
            endpoint('10.0.0.2', {
              ports: [
                { name: 'http', protocol: 'TCP', port: 80 },
                { name: 'http', protocol: 'TCP', port: 81 },
              ],
            }),
          ],
        },
      ]);
      expect(problems).to.deep.equal([
        { clusterId: 'east', address: 'not-an-ip', problem: 'not an IPv4 or IPv6 address; endpoint left out' },
        {
          clusterId: 'east',
          address: '10.0.0.1',
          problem: 'hostname "Bad_Host" is not a DNS label; hostname left out',
        },
        { clusterId: 'east', address: '10.0.0.2', problem: 'two ports named "http"; only TCP/80 kept' },
      ]);
      expect(slices.flatMap((s) => s.endpoints.map((e) => e.addresses[0]))).to.have.members(['10.0.0.1', '10.0.0.2']);
      expect(slices.flatMap((s) => s.endpoints).find((e) => e.addresses[0] === '10.0.0.1')).not.to.have.property(
        'hostname',
      );
    });

    it('S1/S4 property: every endpoint exactly once, at most 100 per slice, one cluster per slice, one family per slice', () => {
      fc.assert(
        fc.property(clusterEndpointsArb, (exports) => {
          const { slices, problems } = plan(exports);
          expect(problems).to.deep.equal([]);
          const placed = new Map<string, number>();
          for (const slice of slices) {
            expect(slice.endpoints.length).to.be.within(1, MAX_ENDPOINTS_PER_SLICE);
            const cluster = slice.metadata.labels[LABEL_SOURCE_CLUSTER]!;
            const own = exports.find((e) => e.clusterId === cluster)!;
            for (const e of slice.endpoints) {
              const address = e.addresses[0];
              expect(
                own.endpoints.some((x) => x.address === address),
                `${address} of ${cluster}`,
              ).to.equal(true);
              expect(address.includes(':') ? 'IPv6' : 'IPv4').to.equal(slice.addressType);
              const key = `${cluster}/${address}/${JSON.stringify(slice.ports)}`;
              placed.set(key, (placed.get(key) ?? 0) + 1);
            }
          }
          expect([...placed.values()].every((n) => n === 1)).to.equal(true);
          // Every distinct (cluster, address, ports) of the input is placed.
          const wanted = new Set(
            exports.flatMap((x) =>
              x.endpoints.map(
                (e) =>
                  `${x.clusterId}/${e.address}/${JSON.stringify([...e.ports].sort((a, b) => (a.name < b.name ? -1 : 1)))}`,
              ),
            ),
          );
          expect(placed.size).to.equal(wanted.size);
        }),
        { numRuns: 60 },
      );
    });

    it('S2 property: names are deterministic, unique, valid and independent of input order', () => {
      const arb = clusterEndpointsArb.chain((exports) =>
        fc.tuple(
          fc.constant(exports),
          fc.constant(exports.map((x) => ({ ...x, endpoints: [...x.endpoints].reverse() })).reverse()),
        ),
      );
      fc.assert(
        fc.property(arb, ([exports, reordered]) => {
          const names = plan(exports).slices.map((s) => s.metadata.name);
          expect(plan(reordered).slices.map((s) => s.metadata.name)).to.deep.equal(names);
          expect(plan(reordered).slices).to.deep.equal(plan(exports).slices);
          expect(new Set(names).size).to.equal(names.length);
          for (const name of names) expect(name).to.match(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
        }),
        { numRuns: 40 },
      );
    });
  });

  describe('zones', () => {
    const zoned = [
      { clusterId: 'east', endpoints: [endpoint('10.0.0.1', { zone: 'us-east-1a' }), endpoint('10.0.0.2')] },
      { clusterId: 'west', endpoints: [endpoint('10.0.0.3', { zone: 'bad zone!' })] },
    ];

    it("under trafficDistribution PreferClose an endpoint's zone is kept with itself as the zone hint, so kube-proxy prefers close endpoints", () => {
      const { slices, problems } = plan(zoned, servingAll(zoned), true);
      expect(slices[0]?.endpoints.map((e) => [e.zone, e.hints])).to.deep.equal([
        ['us-east-1a', { forZones: [{ name: 'us-east-1a' }] }],
        [undefined, undefined],
      ]);
      expect(slices[1]?.endpoints[0]).to.not.have.property('zone');
      expect(problems).to.deep.equal([
        { clusterId: 'west', address: '10.0.0.3', problem: 'zone "bad zone!" is not a label value; zone left out' },
      ]);
    });

    it('without PreferClose the zone is kept but no endpoint has a hint: kube-proxy then uses every endpoint', () => {
      const { slices } = plan(zoned);
      expect(slices[0]?.endpoints.map((e) => [e.zone, e.hints])).to.deep.equal([
        ['us-east-1a', undefined],
        [undefined, undefined],
      ]);
    });

    it('a zone that changed is an update of the slice; the same zone is none', () => {
      const before = plan([{ clusterId: 'east', endpoints: [endpoint('10.0.0.1', { zone: 'us-east-1a' })] }]).slices;
      const after = plan([{ clusterId: 'east', endpoints: [endpoint('10.0.0.1', { zone: 'us-east-1b' })] }]).slices;
      expect(diffEndpointSlices(before, before.map(stored)).update).to.deep.equal([]);
      expect(diffEndpointSlices(after, before.map(stored)).update).to.have.length(1);
    });
  });

  describe('diffEndpointSlices (S3)', () => {
    const exports = [
      { clusterId: 'east', endpoints: [endpoint('10.0.0.1'), endpoint('10.0.0.2')] },
      { clusterId: 'west', endpoints: [endpoint('10.0.0.3')] },
    ];

    it('creates every slice when none exists', () => {
      const { slices } = plan(exports);
      expect(diffEndpointSlices(slices, [])).to.deep.equal({ create: slices, update: [], delete: [] });
    });

    it('S3: deletes the slices of a cluster that stopped exporting, keeps the others untouched', () => {
      const existing = plan(exports).slices.map(stored);
      const diff = diffEndpointSlices(plan(exports.slice(0, 1)).slices, existing);
      expect(diff.create).to.deep.equal([]);
      expect(diff.update).to.deep.equal([]);
      expect(diff.delete).to.deep.equal([existing[1]!.metadata!.name]);
    });

    it('E8: a readiness change updates the slice in place, carrying its resourceVersion', () => {
      const existing = plan(exports).slices.map(stored);
      const changed = plan([
        { clusterId: 'east', endpoints: [endpoint('10.0.0.1', { ready: false }), endpoint('10.0.0.2')] },
        exports[1]!,
      ]).slices;
      const diff = diffEndpointSlices(changed, existing);
      expect(diff.create).to.deep.equal([]);
      expect(diff.delete).to.deep.equal([]);
      expect(diff.update).to.have.length(1);
      expect(diff.update[0]?.metadata.name).to.equal(existing[0]?.metadata?.name);
      expect(diff.update[0]?.metadata.resourceVersion).to.equal(existing[0]?.metadata?.resourceVersion);
      expect(diff.update[0]?.endpoints[0]?.conditions.ready).to.equal(false);
    });

    it('a hostname, node name, port or label change is an update too', () => {
      const desired = plan(exports).slices;
      const base = stored(desired[0]!, 0);
      const variants: StoredEndpointSlice[] = [
        { ...base, endpoints: base.endpoints!.map((e) => ({ ...e, hostname: 'other' })) },
        { ...base, endpoints: base.endpoints!.map((e) => ({ ...e, nodeName: 'other' })) },
        { ...base, ports: [{ name: 'http', protocol: 'TCP', port: 1 }] },
        {
          ...base,
          metadata: { ...base.metadata, labels: { ...base.metadata!.labels, [LABEL_KUBE_SERVICE_NAME]: 'old' } },
        },
        { ...base, metadata: { ...base.metadata, ownerReferences: [] } },
      ];
      for (const variant of variants) expect(diffEndpointSlices([desired[0]!], [variant]).update).to.have.length(1);
    });

    it('reads unset endpoint conditions with the API meaning (ready and serving true, terminating false)', () => {
      const desired = plan([{ clusterId: 'east', endpoints: [endpoint('10.0.0.1')] }]).slices;
      const base = stored(desired[0]!, 0);
      const bare = { ...base, endpoints: base.endpoints!.map((e) => ({ ...e, conditions: {} })) };
      expect(diffEndpointSlices(desired, [bare]).update).to.deep.equal([]);
    });

    it('I6: never touches slices it does not manage, even with the same name', () => {
      const desired = plan(exports).slices;
      const foreign = {
        ...stored(desired[0]!, 0),
        metadata: { name: 'someone-elses', labels: { [LABEL_MANAGED_BY]: 'endpointslice-controller.k8s.io' } },
      };
      const diff = diffEndpointSlices(desired, [foreign]);
      expect(diff.delete).to.deep.equal([]);
      expect(diff.create).to.have.length(desired.length);
    });

    it('replaces a slice whose addressType would change (addressType is immutable)', () => {
      const desired = plan(exports).slices;
      const wrong = { ...stored(desired[0]!, 0), addressType: 'IPv6' };
      const diff = diffEndpointSlices([desired[0]!], [wrong]);
      expect(diff).to.deep.equal({ create: [desired[0]], update: [], delete: [desired[0]!.metadata.name] });
    });

    it('S3 property: diffing a plan against the same plan as the API server stored it is empty', () => {
      fc.assert(
        fc.property(clusterEndpointsArb, (exports) => {
          const { slices } = plan(exports);
          expect(diffEndpointSlices(slices, slices.map(stored))).to.deep.equal({ create: [], update: [], delete: [] });
        }),
        { numRuns: 60 },
      );
    });

    it('S3 property: applying the diff of any old plan yields exactly the new plan', () => {
      fc.assert(
        fc.property(clusterEndpointsArb, clusterEndpointsArb, (before, after) => {
          const state = new Map(plan(before).slices.map((s, i) => [s.metadata.name, stored(s, i)]));
          const desired = plan(after).slices;
          const diff = diffEndpointSlices(desired, [...state.values()]);
          for (const name of diff.delete) state.delete(name);
          for (const s of [...diff.create, ...diff.update]) state.set(s.metadata.name, stored(s, 0));
          expect(diffEndpointSlices(desired, [...state.values()])).to.deep.equal({
            create: [],
            update: [],
            delete: [],
          });
          expect([...state.keys()].sort()).to.deep.equal(desired.map((s) => s.metadata.name).sort());
        }),
        { numRuns: 40 },
      );
    });
  });
});
