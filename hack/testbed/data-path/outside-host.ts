// A machine in the "VPC" that belongs to no cluster, e.g. an EC2 instance: a network namespace with a veth on the data
// path's bridge, an address of the bridge's subnet and a route to every real node's pod ranges through that node, as
// the VPC's route tables give. It runs no kubelet and has no kubeconfig: what it reaches, it reaches by DNS and IP.
// Its resolver is the one `nameserver` names, as a VPC's DHCP options name the Route 53 Resolver: `ip netns exec`
// shows /etc/netns/<netns>/resolv.conf as /etc/resolv.conf to the commands it runs.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataPathPlan } from './plan.ts';
import { run, tryRun } from './run.ts';

/** Host part of the outside host's addresses on the bridge: clear of the host (1) and the nodes (11 and up). */
const HOST_NUMBER = 200;

export interface OutsideHost {
  netns: string;
  /** Its IPv4 address on the bridge. */
  address: string;
  /** Runs a command inside its network namespace; resolves to stdout, rejects with the command line and stderr. */
  exec(command: string, args: readonly string[]): Promise<string>;
  remove(): Promise<void>;
}

export async function addOutsideHost(plan: DataPathPlan, nameserver: string): Promise<OutsideHost> {
  const netns = `${plan.bridge}-out`;
  const etc = join('/etc/netns', netns);
  const hostVeth = `${plan.bridge}ho`;
  const address = plan.subnet.replace(/\.0\/24$/, `.${HOST_NUMBER}`);
  const what = `outside host ${netns}`;
  const ip = (args: string[]) => run('ip', args, what);
  // One left by a run that was killed is replaced.
  await tryRun('ip', ['netns', 'delete', netns]);
  await ip(['netns', 'add', netns]);
  const remove = async () => {
    await tryRun('ip', ['netns', 'delete', netns]);
    rmSync(etc, { recursive: true, force: true });
  };
  try {
    mkdirSync(etc, { recursive: true });
    writeFileSync(join(etc, 'resolv.conf'), `nameserver ${nameserver}\noptions timeout:1 attempts:2\n`);
    await ip(['link', 'add', hostVeth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
    await ip(['link', 'set', hostVeth, 'master', plan.bridge, 'up']);
    await ip(['-n', netns, 'link', 'set', 'lo', 'up']);
    await ip(['-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
    await ip(['-n', netns, 'link', 'set', 'eth0', 'up']);
    for (const node of plan.nodes)
      for (const podCidr of node.podCidrs.filter((c) => !c.includes(':')))
        await ip(['-n', netns, 'route', 'add', podCidr, 'via', node.underlay.IPv4, 'dev', 'eth0']);
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    netns,
    address,
    exec: (command, args) => run('ip', ['netns', 'exec', netns, command, ...args], `${what}: ${command}`),
    remove,
  };
}
