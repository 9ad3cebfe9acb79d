// The data path's links: the host bridge (the "VPC", IPv4 and IPv6), one network namespace per real node with a veth on
// the bridge, and the routes between the nodes' pod ranges of each family; and the one host limit the nodes need raised. Only addresses of the plan are routed (no default route anywhere),
// so pod traffic cannot leave the testbed's namespaces.
import { readFileSync, writeFileSync } from 'node:fs';
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
  await tryRun('ip', ['link', 'delete', plan.bridge]);
}
