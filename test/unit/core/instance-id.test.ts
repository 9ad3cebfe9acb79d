import { expect } from 'chai';
import fc from 'fast-check';
import {
  clusterTag,
  endpointInstanceId,
  latestById,
  legacyInstanceId,
  MAX_INSTANCE_ID_LENGTH,
  parseInstanceId,
  portlessEndpointInstanceId,
  serviceInstanceId,
  servicePortInstanceId,
} from '../../../src/core/instance-id.ts';
import type { Protocol } from '../../../src/core/types.ts';

const c1 = { clusterId: 'cls1', clustersetId: 'set1' };
const c2 = { clusterId: 'cls2', clustersetId: 'set1' };
const CLOUD_MAP_ID = /^[0-9a-zA-Z_/:.@-]+$/;

describe('Cloud Map instance ids (M3)', () => {
  const table: Array<[string, string, RegExp]> = [
    ['IPv4 endpoint port', endpointInstanceId(c1, '10.0.0.5', 'TCP', 80), /^tcp-10\.0\.0\.5-80-[0-9a-f]{12}$/],
    ['IPv6 endpoint port', endpointInstanceId(c1, 'fd00::5', 'UDP', 53), /^udp-fd00::5-53-[0-9a-f]{12}$/],
    ['SCTP endpoint port', endpointInstanceId(c1, '10.0.0.5', 'SCTP', 9000), /^sctp-10\.0\.0\.5-9000-[0-9a-f]{12}$/],
    [
      'endpoint of a Service without ports',
      portlessEndpointInstanceId(c1, '10.0.0.5'),
      /^ip-10\.0\.0\.5-[0-9a-f]{12}$/,
    ],
    ['Service port without endpoints', servicePortInstanceId(c1, 'TCP', 443), /^svc-tcp-443-[0-9a-f]{12}$/],
    ['Service without ports or endpoints', serviceInstanceId(c1), /^svc-[0-9a-f]{12}$/],
  ];
  for (const [what, id, format] of table) {
    it(`M3: ${what} → ${id}`, () => {
      expect(id).to.match(format);
      expect(id.length).to.be.at.most(MAX_INSTANCE_ID_LENGTH);
    });
  }

  it('M3: two clusters reusing a pod IP get different ids (the v0.3.1 format collides)', () => {
    expect(endpointInstanceId(c1, '10.0.0.5', 'TCP', 80)).to.not.equal(endpointInstanceId(c2, '10.0.0.5', 'TCP', 80));
    expect(legacyInstanceId('TCP', '10.0.0.5', 80)).to.equal(legacyInstanceId('TCP', '10.0.0.5', 80));
  });

  it('M3: two ClusterSets reusing a cluster id get different ids', () => {
    expect(clusterTag({ clusterId: 'a', clustersetId: 'x' })).to.not.equal(
      clusterTag({ clusterId: 'a', clustersetId: 'y' }),
    );
  });

  it('M3: ids are deterministic', () => {
    expect(endpointInstanceId({ ...c1 }, '10.0.0.5', 'TCP', 80)).to.equal(
      endpointInstanceId(c1, '10.0.0.5', 'TCP', 80),
    );
  });

  it('M3: an address spelling too long for 64 characters is replaced by its hash', () => {
    const longest = '0000:0000:0000:0000:0000:ffff:255.255.255.255';
    const id = endpointInstanceId(c1, longest, 'SCTP', 65535);
    expect(id).to.match(/^sctp-h[0-9a-f]{16}-65535-[0-9a-f]{12}$/);
    expect(endpointInstanceId(c1, '0000:0000:0000:0000:0000:ffff:255.255.255.254', 'SCTP', 65535)).to.not.equal(id);
  });

  it('M3: the legacy v0.3.1 format as in the tutorial', () => {
    expect(legacyInstanceId('TCP', '10.10.28.116', 80)).to.equal('tcp-10_10_28_116-80');
    expect(legacyInstanceId('UDP', 'fd00::1', 53)).to.equal('udp-fd00__1-53');
  });

  const parsed: Array<[string, ReturnType<typeof parseInstanceId>]> = [
    ['tcp-10_10_28_116-80', { format: 'legacy', protocol: 'TCP', address: '10_10_28_116', port: 80 }],
    ['udp-fd00__1-53', { format: 'legacy', protocol: 'UDP', address: 'fd00__1', port: 53 }],
    [
      endpointInstanceId(c1, '10.0.0.5', 'TCP', 80),
      { format: 'mcs-cloudmap', protocol: 'TCP', address: '10.0.0.5', port: 80, clusterTag: clusterTag(c1) },
    ],
    [
      portlessEndpointInstanceId(c1, 'fd00::5'),
      { format: 'mcs-cloudmap', address: 'fd00::5', clusterTag: clusterTag(c1) },
    ],
    [
      servicePortInstanceId(c1, 'SCTP', 7),
      { format: 'mcs-cloudmap', protocol: 'SCTP', port: 7, clusterTag: clusterTag(c1) },
    ],
    [serviceInstanceId(c1), { format: 'mcs-cloudmap', clusterTag: clusterTag(c1) }],
    ['i-abcd1234xmpl5678', undefined],
    ['my-instance', undefined],
    ['tcp-10.0.0.5-80', undefined],
  ];
  for (const [id, expected] of parsed) {
    it(`M3: parses ${id}`, () => {
      expect(parseInstanceId(id)).to.deep.equal(expected);
    });
  }

  it('M3: ids are unique across (ClusterSet, cluster, ip, port, protocol), at most 64 Cloud Map characters (property)', () => {
    const owner = fc.record({
      clusterId: fc.constantFrom('a', 'b', 'cluster-1', 'x'.repeat(63)),
      clustersetId: fc.constantFrom('set1', 'set2'),
    });
    const address = fc.oneof(fc.ipV4(), fc.ipV6());
    const protocol = fc.constantFrom<Protocol>('TCP', 'UDP', 'SCTP');
    const port = fc.integer({ min: 1, max: 65535 });
    const key = fc.record({ owner, address, protocol, port });
    fc.assert(
      fc.property(fc.uniqueArray(key, { selector: (k) => JSON.stringify(k), minLength: 2, maxLength: 30 }), (keys) => {
        const ids = keys.map((k) => endpointInstanceId(k.owner, k.address, k.protocol, k.port));
        const serviceIds = keys.map((k) => servicePortInstanceId(k.owner, k.protocol, k.port));
        const portless = keys.map((k) => portlessEndpointInstanceId(k.owner, k.address));
        for (const id of [...ids, ...serviceIds, ...portless]) {
          expect(id.length).to.be.at.most(MAX_INSTANCE_ID_LENGTH);
          expect(id).to.match(CLOUD_MAP_ID);
          expect(parseInstanceId(id)?.format).to.equal('mcs-cloudmap');
        }
        expect(new Set(ids).size).to.equal(keys.length);
        // An endpoint id never equals a Service-port or portless id.
        const all = new Set([...ids, ...serviceIds, ...portless]);
        expect(all.size).to.equal(ids.length + new Set(serviceIds).size + new Set(portless).size);
      }),
    );
  });

  it('M3: a legacy id is never mistaken for ours, nor ours for a legacy one (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.ipV4(), fc.ipV6()),
        fc.constantFrom<Protocol>('TCP', 'UDP', 'SCTP'),
        fc.integer({ min: 1, max: 65535 }),
        (address, protocol, port) => {
          expect(parseInstanceId(legacyInstanceId(protocol, address, port))?.format).to.equal('legacy');
          expect(parseInstanceId(endpointInstanceId(c1, address, protocol, port))?.format).to.equal('mcs-cloudmap');
        },
      ),
    );
  });

  it('latestById keeps the last copy of a repeated id (the emulator appends on re-register), ids in first-seen order', () => {
    const byId = latestById([
      { id: 'a', attributes: { v: '1' } },
      { id: 'b', attributes: { v: '1' } },
      { id: 'a', attributes: { v: '2' } },
    ]);
    expect([...byId.keys()]).to.deep.equal(['a', 'b']);
    expect(byId.get('a')?.attributes).to.deep.equal({ v: '2' });
  });
});
