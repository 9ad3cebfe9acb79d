// The data path's address plan and the cgroup hierarchies it reads: pure, no machine state.
import { expect } from 'chai';
import fc from 'fast-check';
import { cgroupV1Hierarchies } from '../../../hack/testbed/data-path/node-cgroup.ts';
import { dataPathPlan, MAX_SLOT } from '../../../hack/testbed/data-path/plan.ts';
import {
  canonical,
  clusterNetwork,
  ipInCidr,
  MAX_CLUSTERS,
  type ClusterIpFamilies,
} from '../../../hack/testbed/network.ts';

const networks = (count: number, shared = false, families: ClusterIpFamilies = ['IPv4']) =>
  Array.from({ length: count }, (_, i) => clusterNetwork(i + 1, shared, 'us-east-1', families));
const FAMILIES: ClusterIpFamilies[] = [['IPv4'], ['IPv6'], ['IPv4', 'IPv6'], ['IPv6', 'IPv4']];

describe('testbed data-path plan', () => {
  it("gives slot 0 of a 2-cluster ClusterSet one bridge, a node per cluster and routes to the other node's pods", () => {
    const plan = dataPathPlan(0, networks(2));
    expect(plan).to.include({
      bridge: 'mcsdp0',
      subnet: '172.31.0.0/24',
      hostIp: '172.31.0.1',
      subnet6: 'fd00:31::/64',
      hostIp6: 'fd00:31::1',
    });
    expect(plan.nodes).to.deep.equal([
      {
        clusterId: 'cls1',
        name: 'cls1-real-0',
        netns: 'mcsdp0-cls1',
        hostVeth: 'mcsdp0h1',
        ipFamilies: ['IPv4'],
        underlay: { IPv4: '172.31.0.11', IPv6: 'fd00:31::11' },
        nodeIps: ['172.31.0.11'],
        nodeIp: '172.31.0.11',
        podCidrs: ['10.244.10.0/24'],
        podCidr: '10.244.10.0/24',
        podGateways: ['10.244.10.1'],
        dnsServiceIps: ['10.96.0.10'],
        dnsServiceIp: '10.96.0.10',
        cgroup: 'mcsdp0-cls1',
        routes: [{ podCidr: '10.245.10.0/24', via: '172.31.0.12' }],
      },
      {
        clusterId: 'cls2',
        name: 'cls2-real-0',
        netns: 'mcsdp0-cls2',
        hostVeth: 'mcsdp0h2',
        ipFamilies: ['IPv4'],
        underlay: { IPv4: '172.31.0.12', IPv6: 'fd00:31::12' },
        nodeIps: ['172.31.0.12'],
        nodeIp: '172.31.0.12',
        podCidrs: ['10.245.10.0/24'],
        podCidr: '10.245.10.0/24',
        podGateways: ['10.245.10.1'],
        dnsServiceIps: ['10.97.0.10'],
        dnsServiceIp: '10.97.0.10',
        cgroup: 'mcsdp0-cls2',
        routes: [{ podCidr: '10.244.10.0/24', via: '172.31.0.11' }],
      },
    ]);
  });

  it('gives a mixed ClusterSet (IPv4-only, dual-stack, IPv6-only) a node address, pod range and DNS address per family, routed by that family', () => {
    const plan = dataPathPlan(1, [
      clusterNetwork(1, false, 'r', ['IPv4']),
      clusterNetwork(2, false, 'r', ['IPv4', 'IPv6']),
      clusterNetwork(3, false, 'r', ['IPv6']),
    ]);
    expect(plan.nodes.map((n) => [n.nodeIps, n.podCidrs, n.podGateways, n.dnsServiceIps])).to.deep.equal([
      [['172.31.1.11'], ['10.244.10.0/24'], ['10.244.10.1'], ['10.96.0.10']],
      [
        ['172.31.1.12', 'fd00:31:1::12'],
        ['10.245.10.0/24', 'fd00:10:245:10::/64'],
        ['10.245.10.1', 'fd00:10:245:10::1'],
        ['10.97.0.10', 'fd00:10:97::a'],
      ],
      [['fd00:31:1::13'], ['fd00:10:246:10::/64'], ['fd00:10:246:10::1'], ['fd00:10:98::a']],
    ]);
    expect(plan.nodes[0]!.routes).to.deep.equal([
      { podCidr: '10.245.10.0/24', via: '172.31.1.12' },
      { podCidr: 'fd00:10:245:10::/64', via: 'fd00:31:1::12' },
      { podCidr: 'fd00:10:246:10::/64', via: 'fd00:31:1::13' },
    ]);
  });

  it("keeps every node's addresses in its ranges, clear of the fake nodes, and its link names within Linux's 15 characters", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_SLOT }),
        fc.integer({ min: 1, max: MAX_CLUSTERS }),
        fc.constantFrom(...FAMILIES),
        (slot, count, families) => {
          const nets = networks(count, false, families);
          const plan = dataPathPlan(slot, nets);
          expect(plan.bridge.length).to.be.at.most(15);
          for (const [i, node] of plan.nodes.entries()) {
            const net = nets[i]!;
            expect(node.hostVeth.length).to.be.at.most(15);
            expect(ipInCidr(node.underlay.IPv4, plan.subnet)).to.equal(true);
            expect(ipInCidr(node.underlay.IPv6, plan.subnet6)).to.equal(true);
            expect(node.nodeIps).to.deep.equal(families.map((f) => node.underlay[f]));
            for (const f of families.keys()) {
              expect(ipInCidr(node.podGateways[f]!, node.podCidrs[f]!)).to.equal(true);
              expect(ipInCidr(node.podCidrs[f]!.split('/')[0]!, net.podCidrs[f]!)).to.equal(true);
              expect(ipInCidr(node.dnsServiceIps[f]!, net.serviceCidrs[f]!)).to.equal(true);
              for (const fake of net.nodes) expect(node.podCidrs[f]).to.not.equal(fake.podCidrs[f]);
            }
            // Every other node's pods, and nothing else, are routed, each through that node's address of the range's family.
            expect(node.routes.map((r) => r.podCidr).sort()).to.deep.equal(
              plan.nodes
                .filter((o) => o !== node)
                .flatMap((o) => o.podCidrs)
                .sort(),
            );
            for (const r of node.routes)
              expect(ipInCidr(r.via, r.podCidr.includes(':') ? plan.subnet6 : plan.subnet)).to.equal(true);
            // The apiserver refuses IPv6 text in any but the canonical form.
            for (const text of [node.underlay.IPv6, ...node.podCidrs, ...node.podGateways, ...node.dnsServiceIps])
              expect(canonical(text)).to.equal(text);
          }
          expect(new Set(plan.nodes.map((n) => n.nodeIp)).size).to.equal(count);
        },
      ),
    );
  });

  it('refuses clusters that share a pod CIDR, and slots out of range', () => {
    expect(() => dataPathPlan(0, networks(2, true))).to.throw(/pod CIDR per cluster/);
    expect(() => dataPathPlan(MAX_SLOT + 1, networks(2))).to.throw(RangeError);
    expect(() => dataPathPlan(-1, networks(2))).to.throw(RangeError);
  });

  it("reads the cgroup v1 hierarchies from mountinfo, name=systemd's too, not cgroup2", () => {
    const mountinfo = [
      '30 24 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec - tmpfs tmpfs ro,mode=755',
      '31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
      '32 30 0:28 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
      '33 30 0:29 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
      '34 30 0:30 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
      '35 30 0:31 / /sys/fs/cgroup/pids rw,relatime shared:9 - cgroup cgroup rw,pids',
    ].join('\n');
    expect(cgroupV1Hierarchies(mountinfo)).to.deep.equal([
      '/sys/fs/cgroup/cpu',
      '/sys/fs/cgroup/memory',
      '/sys/fs/cgroup/systemd',
      '/sys/fs/cgroup/pids',
    ]);
  });
});
