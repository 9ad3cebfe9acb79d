// The data path's links: the host bridge (the "VPC", IPv4 and IPv6), one network namespace per real node with a veth on
// the bridge, and the routes between the nodes' pod ranges of each family; and the one host limit the nodes need raised. Only addresses of the plan are routed (no default route anywhere),
// so pod traffic cannot leave the testbed's namespaces.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { DataPathPlan, RealNodePlan } from './plan.ts';
import { run, tryRun } from './run.ts';

const ip = (args: string[], what: string) => run('ip', args, what);

async function createNodeNamespace(plan: DataPathPlan, node: RealNodePlan): Promise<void> {
  const what = `real node ${node.name}: network namespace ${node.netns}`;
  await ip(['netns', 'add', node.netns], what);
  await ip(['link', 'add', node.hostVeth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', node.netns], what);
  await ip(['link', 'set', node.hostVeth, 'master', plan.bridge, 'up'], what);
  const inNs = (args: string[]) => ip(['-n', node.netns, ...args], what);
  await inNs(['link', 'set', 'lo', 'up']);
  await inNs(['addr', 'add', `${node.underlay.IPv4}/24`, 'dev', 'eth0']);
  // No duplicate address detection: the plan's addresses are unique, and a tentative address cannot be bound.
  await inNs(['addr', 'add', `${node.underlay.IPv6}/64`, 'dev', 'eth0', 'nodad']);
  await inNs(['link', 'set', 'eth0', 'up']);
  for (const r of node.routes) await inNs(['route', 'add', r.podCidr, 'via', r.via, 'dev', 'eth0']);
  // Forwarding between eth0 and the pods' bridge, both families; bridged pod-to-pod traffic through netfilter so that
  // kube-proxy's DNAT of a Service on the same node is undone on the way back; no reverse-path drops of the other
  // nodes' pods.
  await run(
    'ip',
    [
      'netns',
      'exec',
      node.netns,
      'sysctl',
      '-qw',
      'net.ipv4.ip_forward=1',
      'net.ipv6.conf.all.forwarding=1',
      'net.bridge.bridge-nf-call-iptables=1',
      'net.bridge.bridge-nf-call-ip6tables=1',
      'net.ipv4.conf.all.rp_filter=0',
      'net.ipv4.conf.default.rp_filter=0',
    ],
    what,
  );
}

/**
 * Inotify instances per user: kubelets, kube-proxies and containerd each take several, and the default of 128 ran out
 * with two data-path ClusterSets on one machine (kube-proxy exited with "too many open files"). Only ever raised.
 */
const INOTIFY_INSTANCES = 8192;
const INOTIFY_SYSCTL = '/proc/sys/fs/inotify/max_user_instances';

function raiseInotifyInstances(): void {
  if (Number(readFileSync(INOTIFY_SYSCTL, 'utf8')) < INOTIFY_INSTANCES)
    writeFileSync(INOTIFY_SYSCTL, String(INOTIFY_INSTANCES));
}

export async function createHostNetwork(plan: DataPathPlan): Promise<void> {
  raiseInotifyInstances();
  const what = `data-path bridge ${plan.bridge}`;
  await ip(['link', 'add', plan.bridge, 'type', 'bridge'], what);
  await ip(['addr', 'add', `${plan.hostIp}/24`, 'dev', plan.bridge], what);
  await ip(['addr', 'add', `${plan.hostIp6}/64`, 'dev', plan.bridge, 'nodad'], what);
  await ip(['link', 'set', plan.bridge, 'up'], what);
  for (const node of plan.nodes) await createNodeNamespace(plan, node);
}

/** Removes the namespaces (their veths go with them) and the bridge; whatever is already gone is skipped. */
export async function deleteHostNetwork(plan: DataPathPlan): Promise<void> {
  for (const node of plan.nodes) await tryRun('ip', ['netns', 'delete', node.netns]);
  for (const netns of bridgeHostNamespaces(plan)) await tryRun('ip', ['netns', 'delete', netns]);
  await tryRun('ip', ['link', 'delete', plan.bridge]);
}

/** First host number of the hosts outside every cluster (outside-host.ts, and the ECS tasks of the tests): clear of the host (.1) and the nodes (.11-). */
const BRIDGE_HOST_BASE = 100;

/** The network namespace of bridge host `index`, named after the bridge so that clean-up finds it. */
export function bridgeHostNamespace(plan: DataPathPlan, index: number): string {
  return `${plan.bridge}-host${index}`;
}

/** Every bridge host's namespace that exists now (one a test left behind included). */
function bridgeHostNamespaces(plan: DataPathPlan): string[] {
  if (!existsSync('/run/netns')) return [];
  const own = new RegExp(`^${plan.bridge}-host\\d+$`);
  return readdirSync('/run/netns').filter((name) => own.test(name));
}

/**
 * A host on the bridge outside every cluster, as an ECS task or an EC2 instance sits in the VPC: its own network
 * namespace with an address on the bridge (172.31.<slot>.<100 + index>) and routes to every real node's pod ranges, so
 * pods reach it and it answers them; nothing else is routed. Returns its namespace and address.
 */
export async function createBridgeHost(plan: DataPathPlan, index: number): Promise<{ netns: string; ip: string }> {
  if (!Number.isInteger(index) || index < 0 || index > 150)
    throw new RangeError(`bridge host index must be a whole number from 0 to 150, got ${index}`);
  const netns = bridgeHostNamespace(plan, index);
  const veth = `${plan.bridge}b${index}`;
  const address = `172.31.${plan.slot}.${BRIDGE_HOST_BASE + index}`;
  const what = `bridge host ${netns}`;
  await ip(['netns', 'add', netns], what);
  await ip(['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns], what);
  await ip(['link', 'set', veth, 'master', plan.bridge, 'up'], what);
  const inNs = (args: string[]) => ip(['-n', netns, ...args], what);
  await inNs(['link', 'set', 'lo', 'up']);
  await inNs(['addr', 'add', `${address}/24`, 'dev', 'eth0']);
  await inNs(['link', 'set', 'eth0', 'up']);
  for (const node of plan.nodes)
    for (const podCidr of node.podCidrs.filter((c) => !c.includes(':')))
      await inNs(['route', 'add', podCidr, 'via', node.underlay.IPv4, 'dev', 'eth0']);
  return { netns, ip: address };
}

/** Removes a bridge host's namespace (its veth goes with it); nothing when it is gone already. */
export async function deleteBridgeHost(plan: DataPathPlan, index: number): Promise<void> {
  await tryRun('ip', ['netns', 'delete', bridgeHostNamespace(plan, index)]);
}
