// What kube-controller-manager and kube-scheduler have in common: a kubeconfig (also used for delegated authn/authz),
// a TLS health endpoint on loopback served with a certificate from the cluster's CA, and no leader election (one
// replica; a fresh lease would only delay the start).
import { join } from 'node:path';
import { binary, type BinaryName } from './paths.ts';
import type { KeyPair } from './pki.ts';
import { isOk } from './probe.ts';
import type { ManagedProcess, Supervisor } from './supervisor.ts';

export interface ComponentSpec {
  binary: BinaryName & ('kube-controller-manager' | 'kube-scheduler');
  clusterId: string;
  logsDir: string;
  kubeconfig: string;
  serving: KeyPair;
  caCert: string;
  port: number;
  extraArgs: string[];
}

export async function startControlPlaneComponent(
  sup: Supervisor,
  spec: ComponentSpec,
  timeoutMs: number,
): Promise<ManagedProcess> {
  const proc = sup.start({
    name: `${spec.binary} (${spec.clusterId})`,
    command: binary(spec.binary),
    args: [
      `--kubeconfig=${spec.kubeconfig}`,
      `--authentication-kubeconfig=${spec.kubeconfig}`,
      `--authorization-kubeconfig=${spec.kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${spec.port}`,
      `--tls-cert-file=${spec.serving.cert}`,
      `--tls-private-key-file=${spec.serving.key}`,
      '--leader-elect=false',
      ...spec.extraArgs,
    ],
    logPath: join(spec.logsDir, `${spec.binary}.log`),
  });
  await proc.waitReady(
    '/healthz answers ok',
    () => isOk(`https://127.0.0.1:${spec.port}/healthz`, { ca: spec.caCert }),
    timeoutMs,
  );
  return proc;
}
