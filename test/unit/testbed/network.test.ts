// The testbed's address plan: own pod and Service CIDRs per cluster and IP family, or one shared pod CIDR.
import { isIP } from 'node:net';
import { expect } from 'chai';
import fc from 'fast-check';
import { familiesOfClusters } from '../../../hack/testbed/clusterset.ts';
import {
  canonical,
  clusterIpFamilies,
  clusterNetwork,
  familiesOfFlag,
  ipInCidr,
  MAX_CLUSTERS,
  urlHost,
  type ClusterIpFamilies,
} from '../../../hack/testbed/network.ts';
import { cacheDir } from '../../../hack/testbed/paths.ts';

const indexes = Array.from({ length: MAX_CLUSTERS }, (_, i) => i + 1);
const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));
const ipv6 = fc
  .array(fc.nat(0xffff), { minLength: 8, maxLength: 8 })
  .map((g) => g.map((x) => x.toString(16)).join(':'));
const FAMILIES: ClusterIpFamilies[] = [['IPv4'], ['IPv6'], ['IPv4', 'IPv6'], ['IPv6', 'IPv4']];

function overlaps(a: string, b: string): boolean {
  const base = (c: string) => c.split('/')[0]!;
  return ipInCidr(base(a), b) || ipInCidr(base(b), a);
}

describe('testbed network plan', () => {
  it('names clusters cls1, cls2, ... and gives cluster 1 the usual ranges', () => {
    const n = clusterNetwork(1, false, 'us-east-1');
    expect(n).to.deep.include({
      clusterId: 'cls1',
      ipFamilies: ['IPv4'],
      podCidr: '10.244.0.0/16',
      serviceCidr: '10.96.0.0/16',
      apiserverServiceIps: ['10.96.0.1'],
    });
    expect(n.nodes.map((x) => [x.name, x.podCidrs, x.zone])).to.deep.equal([
      ['cls1-node-0', ['10.244.0.0/24'], 'us-east-1a'],
      ['cls1-node-1', ['10.244.1.0/24'], 'us-east-1b'],
      ['cls1-node-2', ['10.244.2.0/24'], 'us-east-1c'],
    ]);
    expect(clusterNetwork(2, false, 'us-east-1')).to.include({
      clusterId: 'cls2',
      podCidr: '10.245.0.0/16',
      serviceCidr: '10.97.0.0/16',
    });
  });

  it("gives IPv6 and dual-stack clusters ULA ranges that mirror the IPv4 numbers, in the families' order", () => {
    expect(clusterNetwork(1, false, 'r', ['IPv6'])).to.deep.include({
      ipFamilies: ['IPv6'],
      podCidrs: ['fd00:10:244::/56'],
      serviceCidrs: ['fd00:10:96::/112'],
      podCidr: 'fd00:10:244::/56',
      apiserverServiceIps: ['fd00:10:96::1'],
    });
    const dual = clusterNetwork(2, false, 'r', ['IPv4', 'IPv6']);
    expect(dual).to.deep.include({
      podCidrs: ['10.245.0.0/16', 'fd00:10:245::/56'],
      serviceCidrs: ['10.97.0.0/16', 'fd00:10:97::/112'],
      serviceCidr: '10.97.0.0/16',
    });
    expect(dual.nodes.map((x) => x.podCidrs)).to.deep.equal([
      ['10.245.0.0/24', 'fd00:10:245::/64'],
      ['10.245.1.0/24', 'fd00:10:245:1::/64'],
      ['10.245.2.0/24', 'fd00:10:245:2::/64'],
    ]);
    expect(clusterNetwork(2, false, 'r', ['IPv6', 'IPv4']).podCidrs).to.deep.equal([
      'fd00:10:245::/56',
      '10.245.0.0/16',
    ]);
  });

  it('refuses IP families Kubernetes does not accept', () => {
    for (const bad of [[], ['IPv4', 'IPv4'], ['IPv5'], ['IPv4', 'IPv6', 'IPv4']]) {
      expect(() => clusterIpFamilies(bad)).to.throw(RangeError, /IPv4, IPv6 or both/);
    }
  });

  it("gives each cluster of a ClusterSet the ClusterSet's families unless its own are named, and names the flag values", () => {
    expect(familiesOfClusters({}, 2)).to.deep.equal([['IPv4'], ['IPv4']]);
    expect(familiesOfClusters({ ipFamilies: ['IPv6'] }, 2)).to.deep.equal([['IPv6'], ['IPv6']]);
    expect(
      familiesOfClusters({ ipFamilies: ['IPv4', 'IPv6'], ipFamiliesPerCluster: [undefined, ['IPv4']] }, 3),
    ).to.deep.equal([['IPv4', 'IPv6'], ['IPv4'], ['IPv4', 'IPv6']]);
    expect(() => familiesOfClusters({ ipFamiliesPerCluster: [['IPv4'], ['IPv4'], ['IPv4']] }, 2)).to.throw(
      RangeError,
      /3 clusters, the ClusterSet has 2/,
    );
    expect(['IPv4', 'IPv6', 'dual'].map((v) => familiesOfFlag(v as 'IPv4'))).to.deep.equal([
      ['IPv4'],
      ['IPv6'],
      ['IPv4', 'IPv6'],
    ]);
  });

  it('keeps every range of every cluster and family apart unless pod CIDRs are shared', () => {
    const nets = indexes.map((i) => clusterNetwork(i, false, 'r', ['IPv4', 'IPv6']));
    const ranges = nets.flatMap((n) => [...n.podCidrs, ...n.serviceCidrs]);
    for (const [i, a] of ranges.entries()) {
      for (const b of ranges.slice(i + 1)) expect(overlaps(a, b), `${a} vs ${b}`).to.equal(false);
    }
  });

  it("shares cluster 1's pod and node ranges when asked, with distinct Service ranges and node names", () => {
    const nets = indexes.map((i) => clusterNetwork(i, true, 'r'));
    for (const n of nets) {
      expect(n.podCidr).to.equal('10.244.0.0/16');
      expect(n.nodes.map((x) => x.podCidrs)).to.deep.equal(nets[0]!.nodes.map((x) => x.podCidrs));
    }
    expect(new Set(nets.map((n) => n.serviceCidr)).size).to.equal(MAX_CLUSTERS);
    expect(new Set(nets.flatMap((n) => n.nodes.map((x) => x.name))).size).to.equal(
      MAX_CLUSTERS * nets[0]!.nodes.length,
    );
  });

  it('places node ranges inside the pod CIDR and the apiserver IP inside the Service CIDR of each family', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_CLUSTERS }),
        fc.boolean(),
        fc.constantFrom(...FAMILIES),
        (i, shared, families) => {
          const n = clusterNetwork(i, shared, 'r', families);
          expect(n.podCidrs).to.have.length(families.length);
          for (const node of n.nodes) expect(isIP(node.internalIp)).to.equal(families[0] === 'IPv4' ? 4 : 6);
          for (const [f, family] of families.entries()) {
            const bits = family === 'IPv4' ? 24 : 64;
            expect(ipInCidr(n.apiserverServiceIps[f]!, n.serviceCidrs[f]!)).to.equal(true);
            for (const text of [n.podCidrs[f]!, n.serviceCidrs[f]!, n.apiserverServiceIps[f]!])
              expect(canonical(text)).to.equal(text);
            for (const node of n.nodes) {
              expect(canonical(node.podCidrs[f]!)).to.equal(node.podCidrs[f]);
              expect(ipInCidr(node.podCidrs[f]!.split('/')[0]!, n.podCidrs[f]!)).to.equal(true);
              expect(node.podCidrs[f]!.endsWith(`/${bits}`)).to.equal(true);
            }
          }
        },
      ),
    );
  });

  it('refuses cluster indexes outside 1..MAX_CLUSTERS', () => {
    for (const bad of [0, -1, MAX_CLUSTERS + 1, 1.5]) {
      expect(() => clusterNetwork(bad, false, 'r')).to.throw(RangeError, /from 1 to 12/);
    }
  });
});

describe('ipInCidr', () => {
  const table: [string, string, boolean][] = [
    ['10.244.3.7', '10.244.0.0/16', true],
    ['10.245.0.1', '10.244.0.0/16', false],
    ['10.96.0.1', '10.96.0.1/32', true],
    ['10.96.0.2', '10.96.0.1/32', false],
    ['192.0.2.9', '0.0.0.0/0', true],
    ['10.244.0.0', '10.244.0.0/24', true],
    ['10.244.1.0', '10.244.0.0/24', false],
    ['fd00:10:244:10::5', 'fd00:10:244::/56', true],
    ['fd00:10:244:100::5', 'fd00:10:244::/56', false],
    ['fd00:10:96::a', 'fd00:10:96::/112', true],
    ['fd00:10:96::1:a', 'fd00:10:96::/112', false],
    ['10.96.0.1', 'fd00:10:96::/112', false],
    ['fd00:10:96::1', '10.96.0.0/16', false],
  ];
  for (const [ip, cidr, want] of table) {
    it(`${ip} in ${cidr} is ${want}`, () => expect(ipInCidr(ip, cidr)).to.equal(want));
  }

  it('holds for every address and the CIDR of any prefix length built from it', () => {
    fc.assert(
      fc.property(ipv4, fc.integer({ min: 0, max: 32 }), (ip, bits) => {
        expect(ipInCidr(ip, `${ip}/${bits}`)).to.equal(true);
      }),
    );
    fc.assert(
      fc.property(ipv6, fc.integer({ min: 0, max: 128 }), (ip, bits) => {
        expect(ipInCidr(ip, `${ip}/${bits}`)).to.equal(true);
      }),
    );
  });

  it('rejects malformed input with the offending text', () => {
    expect(() => ipInCidr('10.0.0', '10.0.0.0/8')).to.throw(/not an IP address: "10.0.0"/);
    expect(() => ipInCidr('10.0.0.1', '10.0.0.0/33')).to.throw(/not a CIDR: "10.0.0.0\/33"/);
    expect(() => ipInCidr('fd00::1', 'fd00::/129')).to.throw(/not a CIDR/);
    expect(() => ipInCidr('fd00::1', 'fd00::')).to.throw(/not a CIDR/);
  });

  it('canonical writes IPv6 addresses and CIDRs as RFC 5952 does, and leaves IPv4 alone', () => {
    expect(canonical('fd00:31:0::11')).to.equal('fd00:31::11');
    expect(canonical('FD00:10:244:0::/64')).to.equal('fd00:10:244::/64');
    expect(canonical('fd00:0:0:1:0:0:0:1')).to.equal('fd00:0:0:1::1');
    expect(canonical('10.244.0.0/24')).to.equal('10.244.0.0/24');
  });

  it('urlHost brackets IPv6 addresses only', () => {
    expect(urlHost('fd00:31:0::11')).to.equal('[fd00:31:0::11]');
    expect(urlHost('172.31.0.11')).to.equal('172.31.0.11');
  });
});

describe('testbed cache directory (same rule as hack/install-testbed.sh)', () => {
  it('prefers MCS_CLOUDMAP_CACHE, then XDG_CACHE_HOME, then ~/.cache', () => {
    expect(cacheDir({ MCS_CLOUDMAP_CACHE: '/c', XDG_CACHE_HOME: '/x' })).to.equal('/c');
    expect(cacheDir({ XDG_CACHE_HOME: '/x' })).to.equal('/x/mcs-cloudmap');
    expect(cacheDir({})).to.match(/\/\.cache\/mcs-cloudmap$/);
  });
});
