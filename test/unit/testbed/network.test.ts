// The testbed's address plan: own pod and Service CIDRs per cluster, or one shared pod CIDR.
import { expect } from 'chai';
import fc from 'fast-check';
import { clusterNetwork, ipv4InCidr, MAX_CLUSTERS } from '../../../hack/testbed/network.ts';
import { cacheDir } from '../../../hack/testbed/paths.ts';

const indexes = Array.from({ length: MAX_CLUSTERS }, (_, i) => i + 1);
const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));

function overlaps(a: string, b: string): boolean {
  const base = (c: string) => c.split('/')[0]!;
  return ipv4InCidr(base(a), b) || ipv4InCidr(base(b), a);
}

describe('testbed network plan', () => {
  it('names clusters cls1, cls2, ... and gives cluster 1 the usual ranges', () => {
    const n = clusterNetwork(1, false, 'us-east-1');
    expect(n).to.include({ clusterId: 'cls1', podCidr: '10.244.0.0/16', serviceCidr: '10.96.0.0/16', apiserverServiceIp: '10.96.0.1' });
    expect(n.nodes.map((x) => [x.name, x.podCidr, x.zone])).to.deep.equal([
      ['cls1-node-0', '10.244.0.0/24', 'us-east-1a'],
      ['cls1-node-1', '10.244.1.0/24', 'us-east-1b'],
      ['cls1-node-2', '10.244.2.0/24', 'us-east-1c'],
    ]);
    expect(clusterNetwork(2, false, 'us-east-1')).to.include({ clusterId: 'cls2', podCidr: '10.245.0.0/16', serviceCidr: '10.97.0.0/16' });
  });

  it('keeps every range of every cluster apart unless pod CIDRs are shared', () => {
    const nets = indexes.map((i) => clusterNetwork(i, false, 'r'));
    const ranges = nets.flatMap((n) => [n.podCidr, n.serviceCidr]);
    for (const [i, a] of ranges.entries()) {
      for (const b of ranges.slice(i + 1)) expect(overlaps(a, b), `${a} vs ${b}`).to.equal(false);
    }
  });

  it('shares cluster 1\'s pod and node ranges when asked, with distinct Service ranges and node names', () => {
    const nets = indexes.map((i) => clusterNetwork(i, true, 'r'));
    for (const n of nets) {
      expect(n.podCidr).to.equal('10.244.0.0/16');
      expect(n.nodes.map((x) => x.podCidr)).to.deep.equal(nets[0]!.nodes.map((x) => x.podCidr));
    }
    expect(new Set(nets.map((n) => n.serviceCidr)).size).to.equal(MAX_CLUSTERS);
    expect(new Set(nets.flatMap((n) => n.nodes.map((x) => x.name))).size).to.equal(MAX_CLUSTERS * nets[0]!.nodes.length);
  });

  it('places node ranges inside the pod CIDR and the apiserver IP inside the Service CIDR', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: MAX_CLUSTERS }), fc.boolean(), (i, shared) => {
      const n = clusterNetwork(i, shared, 'r');
      expect(ipv4InCidr(n.apiserverServiceIp, n.serviceCidr)).to.equal(true);
      for (const node of n.nodes) expect(ipv4InCidr(node.podCidr.split('/')[0]!, n.podCidr)).to.equal(true);
    }));
  });

  it('refuses cluster indexes outside 1..MAX_CLUSTERS', () => {
    for (const bad of [0, -1, MAX_CLUSTERS + 1, 1.5]) {
      expect(() => clusterNetwork(bad, false, 'r')).to.throw(RangeError, /from 1 to 12/);
    }
  });
});

describe('ipv4InCidr', () => {
  const table: [string, string, boolean][] = [
    ['10.244.3.7', '10.244.0.0/16', true],
    ['10.245.0.1', '10.244.0.0/16', false],
    ['10.96.0.1', '10.96.0.1/32', true],
    ['10.96.0.2', '10.96.0.1/32', false],
    ['192.0.2.9', '0.0.0.0/0', true],
    ['10.244.0.0', '10.244.0.0/24', true],
    ['10.244.1.0', '10.244.0.0/24', false],
  ];
  for (const [ip, cidr, want] of table) {
    it(`${ip} in ${cidr} is ${want}`, () => expect(ipv4InCidr(ip, cidr)).to.equal(want));
  }

  it('holds for every address and the CIDR of any prefix length built from it', () => {
    fc.assert(fc.property(ipv4, fc.integer({ min: 0, max: 32 }), (ip, bits) => {
      expect(ipv4InCidr(ip, `${ip}/${bits}`)).to.equal(true);
    }));
  });

  it('rejects malformed input with the offending text', () => {
    expect(() => ipv4InCidr('10.0.0', '10.0.0.0/8')).to.throw(/not an IPv4 address: "10.0.0"/);
    expect(() => ipv4InCidr('10.0.0.1', '10.0.0.0/33')).to.throw(/not an IPv4 CIDR/);
  });
});

describe('testbed cache directory (same rule as hack/install-testbed.sh)', () => {
  it('prefers MCS_CLOUDMAP_CACHE, then XDG_CACHE_HOME, then ~/.cache', () => {
    expect(cacheDir({ MCS_CLOUDMAP_CACHE: '/c', XDG_CACHE_HOME: '/x' })).to.equal('/c');
    expect(cacheDir({ XDG_CACHE_HOME: '/x' })).to.equal('/x/mcs-cloudmap');
    expect(cacheDir({})).to.match(/\/\.cache\/mcs-cloudmap$/);
  });
});
