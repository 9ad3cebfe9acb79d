// kube-controller-manager for one cluster: every default controller (Deployments, ReplicaSets, EndpointSlices,
// ServiceAccounts, namespaces, garbage collection, node lifecycle, ...), each with its own service account as in
// kubeadm clusters, and node IPAM over the cluster's pod CIDRs (one per IP family).
import type { ClusterNetwork } from './network.ts';
import type { ClusterPki } from './pki.ts';
import { startControlPlaneComponent } from './control-plane-component.ts';
import type { ManagedProcess, Supervisor } from './supervisor.ts';

export interface ControllerManagerSpec {
  network: ClusterNetwork;
  logsDir: string;
  kubeconfig: string;
  port: number;
  pki: ClusterPki;
}

export function startControllerManager(
  sup: Supervisor,
  spec: ControllerManagerSpec,
  timeoutMs: number,
): Promise<ManagedProcess> {
  const { pki, network } = spec;
  return startControlPlaneComponent(
    sup,
    {
      binary: 'kube-controller-manager',
      clusterId: network.clusterId,
      logsDir: spec.logsDir,
      kubeconfig: spec.kubeconfig,
      serving: pki.controllerManagerServing,
      caCert: pki.ca.cert,
      port: spec.port,
      extraArgs: [
        `--cluster-name=${network.clusterId}`,
        '--controllers=*',
        '--use-service-account-credentials=true',
        `--service-account-private-key-file=${pki.serviceAccountKey}`,
        `--root-ca-file=${pki.ca.cert}`,
        `--cluster-signing-cert-file=${pki.ca.cert}`,
        `--cluster-signing-key-file=${pki.ca.key}`,
        '--allocate-node-cidrs=true',
        `--cluster-cidr=${network.podCidrs.join(',')}`,
        // Only the flags of the cluster's families: the controller refuses a family's mask size the cluster lacks.
        ...network.ipFamilies.map((f) =>
          f === 'IPv4' ? '--node-cidr-mask-size-ipv4=24' : '--node-cidr-mask-size-ipv6=64',
        ),
        `--service-cluster-ip-range=${network.serviceCidrs.join(',')}`,
      ],
    },
    timeoutMs,
  );
}
