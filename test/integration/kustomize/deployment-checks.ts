// What every Deployment we ship must have: liveness and readiness probes, CPU and memory requests and
// limits, and a security context under which the container cannot run as root or gain privileges.
import type { Manifest } from './build.ts';

interface Probe {
  httpGet: { path: string; port: string | number };
}
export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  envFrom?: { configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    privileged?: boolean;
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
}
interface AffinityTerm {
  podAffinityTerm: { labelSelector: { matchLabels: Record<string, string> } };
}
export interface Deployment extends Manifest {
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      spec: {
        serviceAccountName: string;
        securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
        affinity?: { podAntiAffinity?: { preferredDuringSchedulingIgnoredDuringExecution?: AffinityTerm[] } };
        containers: Container[];
        volumes?: { name: string; secret?: { secretName: string } }[];
      };
    };
  };
}

export function deploymentProblems(d: Deployment): string[] {
  const out: string[] = [];
  const pod = d.spec.template.spec;
  for (const c of pod.containers) {
    const where = `${d.metadata.name}/${c.name}`;
    if (!c.livenessProbe) out.push(`${where}: no livenessProbe`);
    if (!c.readinessProbe) out.push(`${where}: no readinessProbe`);
    for (const kind of ['requests', 'limits'] as const) {
      for (const r of ['cpu', 'memory']) if (!c.resources?.[kind]?.[r]) out.push(`${where}: no ${r} ${kind}`);
    }
    const sc = c.securityContext ?? {};
    const nonRoot = sc.runAsNonRoot ?? pod.securityContext?.runAsNonRoot;
    const user = sc.runAsUser ?? pod.securityContext?.runAsUser;
    if (nonRoot !== true) out.push(`${where}: may run as root (runAsNonRoot is not true)`);
    if (user === 0) out.push(`${where}: runs as user 0`);
    if (sc.privileged === true) out.push(`${where}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${where}: allowPrivilegeEscalation is not false`);
    if (sc.readOnlyRootFilesystem !== true) out.push(`${where}: root filesystem is writable`);
    if (!sc.capabilities?.drop?.includes('ALL') || (sc.capabilities.add ?? []).length > 0)
      out.push(`${where}: capabilities not all dropped`);
  }
  return out;
}

/**
 * The environment the container gets: the ConfigMap (envFrom) overlaid with `env`. Downward-API values cannot be known
 * here, so they read `<fieldPath>`.
 */
export function effectiveEnv(c: Container, configMap: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  if ((c.envFrom ?? []).some((e) => e.configMapRef?.name.startsWith('mcs-cloudmap-config')))
    Object.assign(env, configMap);
  for (const e of c.env ?? []) env[e.name] = e.value ?? `<${e.valueFrom?.fieldRef?.fieldPath ?? 'unknown'}>`;
  return env;
}

/** The container port number a probe or Service targetPort names (by name or number); undefined when not declared. */
export function resolvePort(c: Container, port: string | number): number | undefined {
  const declared = (c.ports ?? []).find((p) => (typeof port === 'number' ? p.containerPort === port : p.name === port));
  return declared?.containerPort;
}
