// A machine in the "VPC" that belongs to no cluster, e.g. an EC2 instance: a bridge host (host-network.ts, its own
// network namespace on the data path's bridge with routes to every real node's pod ranges, as the VPC's route tables
// give) with a resolver of its own. It runs no kubelet and has no kubeconfig: what it reaches, it reaches by DNS and
// IP. Its resolver is the one `nameserver` names, as a VPC's DHCP options name the Route 53 Resolver: `ip netns exec`
// shows /etc/netns/<netns>/resolv.conf as /etc/resolv.conf to the commands it runs.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bridgeHostNamespace, createBridgeHost, deleteBridgeHost } from './host-network.ts';
import type { DataPathPlan } from './plan.ts';
import { run } from './run.ts';

/** Its bridge host index: clear of the few a test registers as ECS tasks (0 and up). */
const OUTSIDE_HOST_INDEX = 100;

export interface OutsideHost {
  netns: string;
  /** Its IPv4 address on the bridge. */
  address: string;
  /** Runs a command inside its network namespace; resolves to stdout, rejects with the command line and stderr. */
  exec(command: string, args: readonly string[]): Promise<string>;
  /** The IPv4 addresses its resolver gives for `name`, sorted; [] for none. */
  resolve4(name: string): Promise<string[]>;
  remove(): Promise<void>;
}

export async function addOutsideHost(plan: DataPathPlan, nameserver: string): Promise<OutsideHost> {
  const netns = bridgeHostNamespace(plan, OUTSIDE_HOST_INDEX);
  const etc = join('/etc/netns', netns);
  const remove = async () => {
    await deleteBridgeHost(plan, OUTSIDE_HOST_INDEX);
    rmSync(etc, { recursive: true, force: true });
  };
  // One left by a run that was killed is replaced.
  await remove();
  let address: string;
  try {
    mkdirSync(etc, { recursive: true });
    writeFileSync(join(etc, 'resolv.conf'), `nameserver ${nameserver}\noptions timeout:1 attempts:2\n`);
    address = (await createBridgeHost(plan, OUTSIDE_HOST_INDEX)).ip;
  } catch (err) {
    await remove();
    throw err;
  }
  const what = `outside host ${netns}`;
  const exec = (command: string, args: readonly string[]) =>
    run('ip', ['netns', 'exec', netns, command, ...args], `${what}: ${command}`);
  const resolve4 = async (name: string) => {
    try {
      const out = await exec('getent', ['ahostsv4', name]);
      return [...new Set(out.split('\n').map((l) => l.split(/\s+/)[0] ?? ''))].filter(Boolean).sort();
    } catch {
      // getent exits 2 for a name without addresses.
      return [];
    }
  };
  return { netns, address, exec, resolve4, remove };
}
