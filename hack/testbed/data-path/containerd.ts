// containerd for one real node (CRI with runc and the CNI bridge plugin), in the node's network namespace so that the
// CNI plugins it runs build the pods' bridge there; every path under the node's directory, so nodes never share state.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ManagedProcess, Supervisor } from '../supervisor.ts';
import { inNode } from './in-node.ts';
import type { RealNodePlan } from './plan.ts';
import { DATA_PATH_TOOLS, SANDBOX_IMAGE } from './prerequisites.ts';
import { run } from './run.ts';

export interface Containerd {
  proc: ManagedProcess;
  /** unix socket path of its CRI and API. */
  socket: string;
}

function config(dir: string, socket: string, cniConfDir: string): string {
  return `version = 2
root = "${join(dir, 'root')}"
state = "${join(dir, 'state')}"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${socket}"

[ttrpc]
  address = "${socket}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "${join(dir, 'opt')}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${SANDBOX_IMAGE}"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  # The kubelet asks -998 for sandboxes; lowering oom_score_adj needs CAP_SYS_RESOURCE, which this machine's root lacks
  # (runc's init then dies with "can't get final child's PID from pipe"). Clamp to containerd's own value instead.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "${DATA_PATH_TOOLS.runc}"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${DATA_PATH_TOOLS.cniBinDir}"
    conf_dir = "${cniConfDir}"
    max_conf_num = 1
`;
}

/**
 * The pods' network: a bridge (cni0, the pods' gateway) and host-local addresses from the node's pod ranges, one
 * address of each of the cluster's families per pod (the first the primary, as the kubelet reports podIPs).
 */
function cniConfig(node: RealNodePlan, ipamDir: string): string {
  return `${JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: 'mcs-testbed',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: node.podCidrs.map((subnet, i) => [{ subnet, gateway: node.podGateways[i] }]),
            routes: node.ipFamilies.map((f) => ({ dst: f === 'IPv4' ? '0.0.0.0/0' : '::/0' })),
            dataDir: ipamDir,
          },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

export async function startContainerd(
  sup: Supervisor,
  node: RealNodePlan,
  cgroupProcs: readonly string[],
  dir: string,
  logsDir: string,
  timeoutMs: number,
): Promise<Containerd> {
  const cniConfDir = join(dir, 'cni', 'net.d');
  mkdirSync(cniConfDir, { recursive: true });
  writeFileSync(join(cniConfDir, '10-mcs-testbed.conflist'), cniConfig(node, join(dir, 'cni', 'ipam')));
  const socket = join(dir, 'containerd.sock');
  const configPath = join(dir, 'containerd.toml');
  writeFileSync(configPath, config(join(dir, 'containerd'), socket, cniConfDir));
  const proc = sup.start(
    inNode(node, cgroupProcs, {
      name: `containerd (${node.name})`,
      command: DATA_PATH_TOOLS.containerd,
      args: ['--config', configPath],
      logPath: join(logsDir, 'containerd.log'),
      privateMounts: true,
    }),
  );
  await proc.waitReady(
    'answers on its socket',
    async () => {
      if (!existsSync(socket)) return false;
      await run(DATA_PATH_TOOLS.ctr, ['--address', socket, 'version'], `containerd of ${node.name}`);
      return true;
    },
    timeoutMs,
  );
  return { proc, socket };
}

/** Loads a docker or OCI archive into the node's CRI namespace, where the kubelet finds its images. */
export async function importImages(socket: string, archive: string, nodeName: string): Promise<void> {
  await run(
    DATA_PATH_TOOLS.ctr,
    ['--address', socket, '--namespace', 'k8s.io', 'images', 'import', archive],
    `importing ${archive} into the containerd of ${nodeName}`,
  );
}
