// Helpers of the src/kube integration tests: a TCP proxy whose connections the test can cut (a real network failure
// between an adapter and a real apiserver), kubeconfigs that go through it, CRD installation, test namespaces and a
// logger whose JSON lines the test can read.
import { KubeConfig } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { createServer, connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { pino, type Logger } from 'pino';
import { waitFor } from '../../../hack/testbed/wait.ts';
import { kubeClientFor } from '../../../src/kube/client.ts';
import { NAMESPACES, resourcePath } from '../../../src/kube/resources.ts';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';

const run = promisify(execFile);

export interface CuttableProxy {
  /** https://127.0.0.1:<port>: the apiserver's certificate is valid for 127.0.0.1 on any port. */
  readonly url: string;
  /** Destroys every open connection (watches see a reset). */
  cut(): void;
  /** Cuts, and resets every new connection until up(). */
  down(): void;
  /** Every open connection goes silent in both directions and stays open (a stalled peer); new ones work. */
  stall(): void;
  up(): void;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 in front of `target` (an https://host:port URL). */
export async function startCuttableProxy(target: string): Promise<CuttableProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let refusing = false;
  const server = createServer((client) => {
    if (refusing) return client.resetAndDestroy();
    const upstream = connect(Number(port), hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    for (const s of pair) {
      sockets.add(s);
      s.on('close', () => { sockets.delete(s); pairs.delete(pair); });
      s.on('error', () => { client.destroy(); upstream.destroy(); });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  const cut = () => {
    for (const s of sockets) s.resetAndDestroy();
  };
  return {
    url: `https://127.0.0.1:${address.port}`,
    cut,
    down: () => { refusing = true; cut(); },
    stall: () => {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    up: () => { refusing = false; },
    close: () => new Promise<void>((resolve) => { cut(); server.close(() => resolve()); }),
  };
}

/** A copy of `kc` whose cluster is reached at `server` instead. */
export function kubeConfigVia(kc: KubeConfig, server: string): KubeConfig {
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: kc.clusters.map((c) => ({ ...c, server })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return copy;
}

/** Installs the project's CRDs (crds/) with kubectl and waits until they are served. */
export async function installCrds(kubeconfigPath: string): Promise<void> {
  await run(kubectlBinary(), ['--kubeconfig', kubeconfigPath, 'apply', '--server-side', '--force-conflicts', '-k', 'crds/']);
  await run(kubectlBinary(), ['--kubeconfig', kubeconfigPath, 'wait', '--for=condition=Established', '--timeout=60s',
    'crd/serviceexports.multicluster.x-k8s.io', 'crd/serviceimports.multicluster.x-k8s.io', 'crd/clusterproperties.about.k8s.io']);
}

/** Creates a namespace with a unique name starting with `prefix`. */
export async function createTestNamespace(kc: KubeConfig, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await kubeClientFor(kc).request({ method: 'POST', path: resourcePath(NAMESPACES), body: { metadata: { name } } });
  return name;
}

export async function deleteNamespace(kc: KubeConfig, name: string): Promise<void> {
  await kubeClientFor(kc).request({ method: 'DELETE', path: resourcePath(NAMESPACES, undefined, name) }).catch(() => {});
}

/** Polls until `check` returns true (a throw counts as not yet). */
export function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  return waitFor(what, async () => check(), { timeoutMs, intervalMs: 50 });
}

/** A pino logger shaped like createLogger's (level as a label) whose JSON lines are collected in `lines`. */
export function captureLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug', formatters: { level: (label) => ({ level: label }) } }, sink), lines };
}
