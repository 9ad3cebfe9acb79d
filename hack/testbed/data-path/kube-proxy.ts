// kube-proxy of one real node, iptables mode, in the node's network namespace: each cluster's Service rules live in
// its own node's tables, so two clusters never write the same ones. Dual-stack: iptables and ip6tables both, the
// primary family the one of the node's primary address.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { urlHost } from '../network.ts';
import { binary } from '../paths.ts';
import { isOk } from '../probe.ts';
import type { ManagedProcess, Supervisor } from '../supervisor.ts';
import { inNode } from './in-node.ts';
import type { RealNodePlan } from './plan.ts';

export const KUBE_PROXY_HEALTHZ_PORT = 10256;

export interface KubeProxySpec {
  node: RealNodePlan;
  cgroupProcs: readonly string[];
  dir: string;
  logsDir: string;
  kubeconfig: string;
  /** The cluster's whole pod CIDRs: traffic from them is not masqueraded, so a pod sees its real client's address. */
  clusterCidrs: readonly string[];
}

export async function startKubeProxy(sup: Supervisor, spec: KubeProxySpec, timeoutMs: number): Promise<ManagedProcess> {
  const { node } = spec;
  const configPath = join(spec.dir, 'kube-proxy.yaml');
  writeFileSync(
    configPath,
    stringify({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig: spec.kubeconfig },
      hostnameOverride: node.name,
      bindAddress: node.nodeIp,
      healthzBindAddress: `${urlHost(node.nodeIp)}:${KUBE_PROXY_HEALTHZ_PORT}`,
      metricsBindAddress: `${urlHost(node.nodeIp)}:10249`,
      mode: 'iptables',
      clusterCIDR: spec.clusterCidrs.join(','),
      // Zero leaves the kernel's conntrack settings alone: the table size is the host's, not a namespace's, to set.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      iptables: { syncPeriod: '30s', minSyncPeriod: '0s' },
    }),
  );
  const proc = sup.start(
    inNode(node, spec.cgroupProcs, {
      name: `kube-proxy (${node.name})`,
      command: binary('kube-proxy'),
      args: [`--config=${configPath}`, '--v=1'],
      logPath: join(spec.logsDir, 'kube-proxy.log'),
    }),
  );
  await proc.waitReady(
    '/healthz answers ok',
    () => isOk(`http://${urlHost(node.nodeIp)}:${KUBE_PROXY_HEALTHZ_PORT}/healthz`),
    timeoutMs,
  );
  return proc;
}
