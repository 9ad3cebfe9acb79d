// What the traffic benchmark deploys in namespace `traffic`: the tutorial's nginx (hello page naming the pod) as
// Deployment `nginx` behind Service `nginx-hello` in every cluster, a client pod per cluster, and in the exporting
// cluster Service `nginx-pair` over `nginx` and a second Deployment `spare` (the in-cluster twin of a Service that
// another cluster also exports).
import { service, serviceExport } from '../../test/support/workloads.ts';

export const NS = 'traffic';
export const SERVICE = 'nginx-hello';
export const PAIR_SERVICE = 'nginx-pair';
const NGINX_IMAGE = 'docker.io/nginxdemos/hello:plain-text';
const TOOLS_IMAGE = 'docker.io/nicolaka/netshoot:v0.15';

export interface NginxSettings {
  replicas: number;
  /** Seconds of `sleep` before nginx is told to stop (the usual preStop hook); 0: none, as in the tutorial. */
  preStopS: number;
}

function nginxDeployment(name: string, app: string, s: NginxSettings): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas: s.replicas,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app, tier: 'hello' } },
        spec: {
          containers: [
            {
              name: 'nginx',
              image: NGINX_IMAGE,
              imagePullPolicy: 'IfNotPresent',
              ports: [{ containerPort: 80 }],
              readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 2, failureThreshold: 1 },
              ...(s.preStopS > 0
                ? { lifecycle: { preStop: { exec: { command: ['sleep', String(s.preStopS)] } } } }
                : {}),
            },
          ],
        },
      },
    },
  };
}

export function nginx(s: NginxSettings): object {
  return nginxDeployment('nginx', 'nginx', s);
}

/** Pods that `nginx-pair` selects besides nginx's, and `nginx-hello` does not. */
export function spare(s: NginxSettings): object {
  return nginxDeployment('spare', 'spare', s);
}

export function services(exporting: boolean): object[] {
  return [
    service(NS, SERVICE, { selector: { app: 'nginx' } }),
    ...(exporting ? [service(NS, PAIR_SERVICE, { selector: { tier: 'hello' } })] : []),
  ];
}

export function nginxExport(): object {
  return serviceExport(NS, SERVICE);
}

/** At most one nginx pod evicted at a time, as docs/install.md recommends. */
export function disruptionBudget(): object {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'nginx', namespace: NS },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'nginx' } } },
  };
}

export const CLIENT_POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'client', namespace: NS },
  spec: {
    terminationGracePeriodSeconds: 0,
    containers: [
      { name: 'client', image: TOOLS_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', 'infinity'] },
    ],
  },
};
