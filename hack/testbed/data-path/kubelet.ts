// The kubelet of one real node: in the node's network namespace (its address is the node's InternalIP), pods under
// the node's cgroup, containerd as its runtime, kube-dns's ClusterIP as the pods' nameserver.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { urlHost } from '../network.ts';
import { binary } from '../paths.ts';
import type { ManagedProcess, Supervisor } from '../supervisor.ts';
import { isOk } from '../probe.ts';
import { inNode } from './in-node.ts';
import type { RealNodePlan } from './plan.ts';

export const KUBELET_HEALTHZ_PORT = 10248;

export interface KubeletSpec {
  node: RealNodePlan;
  cgroupProcs: readonly string[];
  /** The node's directory: kubelet root, certificates, config. */
  dir: string;
  logsDir: string;
  kubeconfig: string;
  caCert: string;
  containerdSocket: string;
}

function kubeletConfig(spec: KubeletSpec, resolvConf: string): Record<string, unknown> {
  const { node } = spec;
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: node.nodeIp,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: node.nodeIp,
    healthzPort: KUBELET_HEALTHZ_PORT,
    // Reached only from the apiserver over the testbed's bridge: client certificates of the cluster's CA, no
    // SubjectAccessReview round trip.
    authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: spec.caCert } },
    authorization: { mode: 'AlwaysAllow' },
    cgroupDriver: 'cgroupfs',
    cgroupRoot: `/${node.cgroup}`,
    cgroupsPerQOS: true,
    // The machine's cgroups are v1 (docs/testbed.md "Data path"); 1.33 still runs on it when not told to refuse.
    failCgroupV1: false,
    containerRuntimeEndpoint: `unix://${spec.containerdSocket}`,
    // Not the default /var/log/pods, which both clusters' kubelets would share: each one's container GC removes the log
    // directories of pods it does not know, so `kubectl logs` of the other node's pods would fail at random.
    podLogsDir: join(spec.dir, 'pod-logs'),
    clusterDNS: [node.dnsServiceIp],
    clusterDomain: 'cluster.local',
    // Pods with dnsPolicy Default get no nameserver of the host: nothing outside the testbed answers.
    resolvConf,
    failSwapOn: false,
    nodeStatusUpdateFrequency: '10s',
    serializeImagePulls: false,
    // The images are imported, never pulled: a disk filling up must not make the kubelet delete them.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
      'nodefs.inodesFree': '1%',
    },
    shutdownGracePeriod: '0s',
    rotateCertificates: false,
    serverTLSBootstrap: false,
    registerNode: true,
  };
}

export async function startKubelet(sup: Supervisor, spec: KubeletSpec, timeoutMs: number): Promise<ManagedProcess> {
  const resolvConf = join(spec.dir, 'resolv.conf');
  writeFileSync(resolvConf, '');
  const configPath = join(spec.dir, 'kubelet.yaml');
  writeFileSync(configPath, stringify(kubeletConfig(spec, resolvConf)));
  const proc = sup.start(
    inNode(spec.node, spec.cgroupProcs, {
      name: `kubelet (${spec.node.name})`,
      command: binary('kubelet'),
      args: [
        `--config=${configPath}`,
        `--kubeconfig=${spec.kubeconfig}`,
        `--root-dir=${join(spec.dir, 'kubelet')}`,
        `--cert-dir=${join(spec.dir, 'kubelet', 'pki')}`,
        `--hostname-override=${spec.node.name}`,
        // One address per family, the primary first: the Node's InternalIPs, and the families of its pods' podIPs.
        `--node-ip=${spec.node.nodeIps.join(',')}`,
        '--v=1',
      ],
      logPath: join(spec.logsDir, 'kubelet.log'),
    }),
  );
  await proc.waitReady(
    '/healthz answers ok',
    () => isOk(`http://${urlHost(spec.node.nodeIp)}:${KUBELET_HEALTHZ_PORT}/healthz`),
    timeoutMs,
  );
  return proc;
}
