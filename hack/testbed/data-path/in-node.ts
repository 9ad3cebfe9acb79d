// How a real node's process is started: it joins the node's cgroup (so a stop finds it and everything it forks),
// then enters the node's network namespace. `privateMounts` also gives it a mount namespace of its own that sees the
// host's mounts but keeps its own to itself: containerd's image, rootfs and pod-netns mounts then vanish with its last
// process instead of piling up on the host.
import type { ProcessSpec } from '../supervisor.ts';
import type { RealNodePlan } from './plan.ts';

const JOIN_AND_EXEC = 'for f in $MCS_TESTBED_CGROUP_PROCS; do echo $$ > "$f"; done; exec "$@"';

export function inNode(
  node: RealNodePlan,
  cgroupProcs: readonly string[],
  spec: { name: string; command: string; args: string[]; logPath: string; privateMounts?: boolean },
): ProcessSpec {
  const mounts = spec.privateMounts ? ['unshare', '--mount', '--propagation', 'slave'] : [];
  return {
    name: spec.name,
    command: 'sh',
    args: [
      '-c',
      JOIN_AND_EXEC,
      'in-node',
      'nsenter',
      `--net=/run/netns/${node.netns}`,
      '--',
      ...mounts,
      spec.command,
      ...spec.args,
    ],
    logPath: spec.logPath,
    env: { ...process.env, MCS_TESTBED_CGROUP_PROCS: cgroupProcs.join(' ') },
  };
}
