// kube-apiserver for one cluster: TLS with client certificates, service-account token signing, RBAC, and the
// admission plugins a production cluster runs (kubeadm's set: the defaults plus NodeRestriction), webhooks included.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { binary } from './paths.ts';
import type { ClusterPki, KeyPair } from './pki.ts';
import { isOk } from './probe.ts';
import type { ManagedProcess, Supervisor } from './supervisor.ts';

/** Listed explicitly (not left to the binary's defaults) so a test can rely on each, and the docs can name them. */
export const ADMISSION_PLUGINS = [
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'TaintNodesByCondition',
  'PodSecurity',
  'Priority',
  'DefaultTolerationSeconds',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'NodeRestriction',
] as const;

/**
 * The audit log's policy: metadata of every write to the kinds mcs-cloudmap manages, nothing else, so tests can count
 * at the apiserver who wrote what and when (the worker's User-Agent names its replica). Leases and Events are left out:
 * a replica that lost leadership still writes them by design.
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
  resources:
  - group: ""
    resources: [services]
  - group: discovery.k8s.io
    resources: [endpointslices]
  - group: multicluster.x-k8s.io
    resources: [serviceimports, serviceimports/status, serviceexports, serviceexports/status]
- level: None
`;

/** The audit log of the apiserver whose component logs are in `logsDir`: one JSON event per line. */
export function auditLogPath(logsDir: string): string {
  return join(logsDir, 'kube-apiserver-audit.log');
}

export interface ApiserverSpec {
  clusterId: string;
  logsDir: string;
  port: number;
  etcdUrl: string;
  /** One range per IP family, the primary first. */
  serviceCidrs: readonly string[];
  pki: ClusterPki;
  /** With a real node (data path): listen on every address, and the client certificate for its kubelet (exec, logs). */
  kubeletClient?: KeyPair;
}

export interface Apiserver {
  proc: ManagedProcess;
  server: string;
}

export async function startApiserver(sup: Supervisor, spec: ApiserverSpec, timeoutMs: number): Promise<Apiserver> {
  const server = `https://127.0.0.1:${spec.port}`;
  const { pki } = spec;
  const auditPolicy = join(dirname(spec.logsDir), 'audit-policy.yaml');
  writeFileSync(auditPolicy, AUDIT_POLICY);
  const proc = sup.start({
    name: `kube-apiserver (${spec.clusterId})`,
    command: binary('kube-apiserver'),
    args: [
      '--advertise-address=127.0.0.1',
      // A real node's kubelet, kube-proxy and CoreDNS dial it from their network namespace, at the bridge's address.
      `--bind-address=${spec.kubeletClient ? '0.0.0.0' : '127.0.0.1'}`,
      ...(spec.kubeletClient
        ? [
            `--kubelet-client-certificate=${spec.kubeletClient.cert}`,
            `--kubelet-client-key=${spec.kubeletClient.key}`,
            '--kubelet-preferred-address-types=InternalIP',
          ]
        : []),
      `--secure-port=${spec.port}`,
      `--etcd-servers=${spec.etcdUrl}`,
      `--service-cluster-ip-range=${spec.serviceCidrs.join(',')}`,
      `--client-ca-file=${pki.ca.cert}`,
      `--tls-cert-file=${pki.apiserver.cert}`,
      `--tls-private-key-file=${pki.apiserver.key}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      '--authorization-mode=Node,RBAC',
      `--enable-admission-plugins=${ADMISSION_PLUGINS.join(',')}`,
      '--allow-privileged=true',
      // Endpoints may not hold loopback addresses, and nothing in a testbed cluster could dial the apiserver through
      // the `kubernetes` Service anyway.
      '--endpoint-reconciler-type=none',
      // Webhooks and conversion referenced by Service are dialled at the Service's endpoint addresses instead of its
      // (unroutable) ClusterIP: a selector-less Service whose EndpointSlice lists this machine's address reaches a
      // webhook server running here (see docs/testbed.md).
      '--enable-aggregator-routing=true',
      '--profiling=false',
      `--audit-policy-file=${auditPolicy}`,
      `--audit-log-path=${auditLogPath(spec.logsDir)}`,
    ],
    logPath: join(spec.logsDir, 'kube-apiserver.log'),
  });
  const tls = { ca: pki.ca.cert, client: pki.admin };
  await proc.waitReady('/readyz answers ok', () => isOk(`${server}/readyz`, tls), timeoutMs);
  return { proc, server };
}
