// kube-scheduler for one cluster (kwok simulates kubelets but does not schedule pods).
import type { ClusterPki } from './pki.ts';
import { startControlPlaneComponent } from './control-plane-component.ts';
import type { ManagedProcess, Supervisor } from './supervisor.ts';

export interface SchedulerSpec {
  clusterId: string;
  logsDir: string;
  kubeconfig: string;
  port: number;
  pki: ClusterPki;
}

export function startScheduler(sup: Supervisor, spec: SchedulerSpec, timeoutMs: number): Promise<ManagedProcess> {
  return startControlPlaneComponent(
    sup,
    {
      binary: 'kube-scheduler',
      clusterId: spec.clusterId,
      logsDir: spec.logsDir,
      kubeconfig: spec.kubeconfig,
      serving: spec.pki.schedulerServing,
      caCert: spec.pki.ca.cert,
      port: spec.port,
      extraArgs: [],
    },
    timeoutMs,
  );
}
