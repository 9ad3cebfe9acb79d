// The data path's address plan and the cgroup hierarchies it reads: pure, no machine state.
import { expect } from 'chai';
import fc from 'fast-check';
import { cgroupV1Hierarchies } from '../../../hack/testbed/data-path/node-cgroup.ts';
import { dataPathPlan, MAX_SLOT } from '../../../hack/testbed/data-path/plan.ts';
import { clusterNetwork, ipv4InCidr, MAX_CLUSTERS } from '../../../hack/testbed/network.ts';

const networks = (count: number, shared = false) => Array.from({ length: count }, (_, i) => clusterNetwork(i + 1, shared, 'us-east-1'));

describe('testbed data-path plan', () => {
  it('gives slot 0 of a 2-cluster ClusterSet one bridge, a node per cluster and routes to the other node\'s pods', () => {
    const plan = dataPathPlan(0, networks(2));
    expect(plan).to.include({ bridge: 'mcsdp0', subnet: '172.31.0.0/24', hostIp: '172.31.0.1' });
    expect(plan.nodes).to.deep.equal([
      {
        clusterId: 'cls1', name: 'cls1-real-0', netns: 'mcsdp0-cls1', hostVeth: 'mcsdp0h1', nodeIp: '172.31.0.11',
        podCidr: '10.244.10.0/24', podGateway: '10.244.10.1', dnsServiceIp: '10.96.0.10', cgroup: 'mcsdp0-cls1',
        routes: [{ podCidr: '10.245.10.0/24', via: '172.31.0.12' }],
      },
      {
        clusterId: 'cls2', name: 'cls2-real-0', netns: 'mcsdp0-cls2', hostVeth: 'mcsdp0h2', nodeIp: '172.31.0.12',
        podCidr: '10.245.10.0/24', podGateway: '10.245.10.1', dnsServiceIp: '10.97.0.10', cgroup: 'mcsdp0-cls2',
        routes: [{ podCidr: '10.244.10.0/24', via: '172.31.0.11' }],
      },
    ]);
  });

  it('keeps every node\'s addresses in its ranges, clear of the fake nodes, and its link names within Linux\'s 15 characters', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: MAX_SLOT }), fc.integer({ min: 1, max: MAX_CLUSTERS }), (slot, count) => {
      const nets = networks(count);
      const plan = dataPathPlan(slot, nets);
      expect(plan.bridge.length).to.be.at.most(15);
      for (const [i, node] of plan.nodes.entries()) {
        const net = nets[i]!;
        expect(node.hostVeth.length).to.be.at.most(15);
        expect(ipv4InCidr(node.nodeIp, plan.subnet)).to.equal(true);
        expect(ipv4InCidr(node.podGateway, node.podCidr)).to.equal(true);
        expect(ipv4InCidr(node.podCidr.split('/')[0]!, net.podCidr)).to.equal(true);
        expect(ipv4InCidr(node.dnsServiceIp, net.serviceCidr)).to.equal(true);
        for (const fake of net.nodes) expect(node.podCidr).to.not.equal(fake.podCidr);
        // Every other node's pods, and nothing else, are routed.
        expect(node.routes.map((r) => r.podCidr).sort()).to.deep.equal(plan.nodes.filter((o) => o !== node).map((o) => o.podCidr).sort());
      }
      expect(new Set(plan.nodes.map((n) => n.nodeIp)).size).to.equal(count);
    }));
  });

  it('refuses clusters that share a pod CIDR, and slots out of range', () => {
    expect(() => dataPathPlan(0, networks(2, true))).to.throw(/pod CIDR per cluster/);
    expect(() => dataPathPlan(MAX_SLOT + 1, networks(2))).to.throw(RangeError);
    expect(() => dataPathPlan(-1, networks(2))).to.throw(RangeError);
  });

  it('reads the cgroup v1 hierarchies from mountinfo, name=systemd\'s too, not cgroup2', () => {
    const mountinfo = [
      '30 24 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec - tmpfs tmpfs ro,mode=755',
      '31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
      '32 30 0:28 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
      '33 30 0:29 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
      '34 30 0:30 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
      '35 30 0:31 / /sys/fs/cgroup/pids rw,relatime shared:9 - cgroup cgroup rw,pids',
    ].join('\n');
    expect(cgroupV1Hierarchies(mountinfo)).to.deep.equal(['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/memory', '/sys/fs/cgroup/systemd', '/sys/fs/cgroup/pids']);
  });
});
