// Health of a running ClusterSet, from its testbed.json: what `npm run testbed -- status` prints.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { dirname } from 'node:path';
import type { ClusterSetState } from './clusterset.ts';
import { adminKeyPair } from './pki.ts';
import { isOk, type ProbeTls } from './probe.ts';

export interface Check {
  /** e.g. "cls1 kube-apiserver /readyz" */
  name: string;
  endpoint: string;
  ok: boolean;
  detail: string;
}

async function check(name: string, endpoint: string, probe: () => Promise<string>): Promise<Check> {
  try {
    return { name, endpoint, ok: true, detail: await probe() };
  } catch (err) {
    return { name, endpoint, ok: false, detail: (err as Error).message.split('\n')[0] ?? '' };
  }
}

async function readyNodes(kubeconfigPath: string, expected: string[]): Promise<string> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const nodes = await kc.makeApiClient(CoreV1Api).listNode();
  const ready = nodes.items
    .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((n) => n.metadata?.name ?? '');
  const missing = expected.filter((n) => !ready.includes(n));
  if (missing.length > 0) throw new Error(`not Ready: ${missing.join(', ')}`);
  return `${ready.length} Ready`;
}

export async function clusterSetHealth(state: ClusterSetState): Promise<Check[]> {
  const ok = (url: string, tls?: ProbeTls) => async () => (await isOk(url, tls), 'ok');
  const checks: Promise<Check>[] = [
    check('Cloud Map emulator (moto)', state.cloudMapEndpoint, ok(`${state.cloudMapEndpoint}/_emulator/config`)),
  ];
  for (const c of state.clusters) {
    const ca = { ca: c.caCertPath };
    const admin = { ca: c.caCertPath, client: adminKeyPair(dirname(c.caCertPath)) };
    checks.push(
      check(`${c.id} etcd`, c.endpoints.etcd, ok(`${c.endpoints.etcd}/health`)),
      check(`${c.id} kube-apiserver /readyz`, c.server, ok(`${c.server}/readyz`, admin)),
      check(
        `${c.id} kube-controller-manager`,
        c.endpoints.controllerManager,
        ok(`${c.endpoints.controllerManager}/healthz`, ca),
      ),
      check(`${c.id} kube-scheduler`, c.endpoints.scheduler, ok(`${c.endpoints.scheduler}/healthz`, ca)),
      check(`${c.id} kwok`, c.endpoints.kwok, ok(`${c.endpoints.kwok}/healthz`)),
      check(`${c.id} nodes`, c.nodeNames.join(','), () => readyNodes(c.kubeconfigPath, c.nodeNames)),
    );
  }
  return Promise.all(checks);
}
