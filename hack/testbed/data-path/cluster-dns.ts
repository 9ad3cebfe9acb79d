// Cluster DNS of a cluster with a real node: stock CoreDNS on the node's address, port 53, serving cluster.local and,
// with the kubernetes plugin's multicluster option, clusterset.local (docs/dns.md), behind the kube-system/kube-dns
// Service whose ClusterIP the kubelet gives pods as their nameserver. No forward plugin: names outside the two zones get
// no answer from outside the testbed. Its fallthrough names only the reverse zones: with no plugin after kubernetes, a
// name passed on would get SERVFAIL instead of NXDOMAIN.
import { CoreV1Api, DiscoveryV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Resolver } from 'node:dns/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answers, kubernetesBlock } from '../coredns.ts';
import { binary } from '../paths.ts';
import type { ManagedProcess, Supervisor } from '../supervisor.ts';
import { inNode } from './in-node.ts';
import type { RealNodePlan } from './plan.ts';

export interface ClusterDnsSpec {
  node: RealNodePlan;
  cgroupProcs: readonly string[];
  dir: string;
  logsDir: string;
  /** A kubeconfig that reaches the apiserver from the node's namespace. */
  kubeconfig: string;
  context: string;
}

function corefile(spec: ClusterDnsSpec): string {
  return [
    '.:53 {',
    `  bind ${spec.node.nodeIps.join(' ')}`,
    '  errors',
    ...kubernetesBlock(spec.kubeconfig, spec.context, {
      zones: ['in-addr.arpa', 'ip6.arpa'],
      lines: ['pods insecure', 'fallthrough in-addr.arpa ip6.arpa'],
    }),
    '}',
    '',
  ].join('\n');
}

export async function startClusterDns(
  sup: Supervisor,
  spec: ClusterDnsSpec,
  timeoutMs: number,
): Promise<ManagedProcess> {
  const path = join(spec.dir, 'Corefile');
  writeFileSync(path, corefile(spec));
  const proc = sup.start(
    inNode(spec.node, spec.cgroupProcs, {
      name: `coredns (${spec.node.name})`,
      command: binary('coredns'),
      args: ['-conf', path],
      logPath: join(spec.logsDir, 'coredns.log'),
    }),
  );
  const resolver = new Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([spec.node.nodeIp]);
  // A name that exists: the testbed starts without the ServiceImport CRD, and until CoreDNS has listed ServiceImports
  // (it retries until the CRD is installed) it answers SERVFAIL for names it does not find.
  await proc.waitReady(
    'answers DNS queries on port 53',
    () => answers(resolver, 'kubernetes.default.svc.cluster.local'),
    timeoutMs,
  );
  return proc;
}

/**
 * kube-system/kube-dns: the pods' nameserver address, a selector-less Service with a ClusterIP of each cluster family and
 * an EndpointSlice per family whose one endpoint is CoreDNS at the node's address of that family.
 */
export async function createKubeDnsService(kc: KubeConfig, node: RealNodePlan): Promise<void> {
  const ports = [
    { name: 'dns', port: 53, protocol: 'UDP' },
    { name: 'dns-tcp', port: 53, protocol: 'TCP' },
  ];
  const what = `${node.clusterId}: kube-system/kube-dns`;
  try {
    await kc.makeApiClient(CoreV1Api).createNamespacedService({
      namespace: 'kube-system',
      body: {
        metadata: { name: 'kube-dns', labels: { 'k8s-app': 'kube-dns' } },
        spec: {
          clusterIP: node.dnsServiceIp,
          clusterIPs: node.dnsServiceIps,
          ipFamilies: [...node.ipFamilies],
          ipFamilyPolicy: node.ipFamilies.length > 1 ? 'RequireDualStack' : 'SingleStack',
          ports: ports.map((p) => ({ ...p, targetPort: 53 })),
        },
      },
    });
    await Promise.all(
      node.ipFamilies.map((family, i) =>
        kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
          namespace: 'kube-system',
          body: {
            metadata: {
              name: `kube-dns-testbed-${family.toLowerCase()}`,
              labels: {
                'kubernetes.io/service-name': 'kube-dns',
                'endpointslice.kubernetes.io/managed-by': 'testbed.mcs-cloudmap.io',
              },
            },
            addressType: family,
            endpoints: [{ addresses: [node.nodeIps[i]!], conditions: { ready: true } }],
            ports,
          },
        }),
      ),
    );
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`, { cause: err });
  }
}
