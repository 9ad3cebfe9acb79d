// Helpers of the src/kube integration tests: kubeconfigs that go through a proxy (test/support/proxy.ts), CRD
// installation, test namespaces and a logger whose JSON lines the test can read.
import { KubeConfig } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { pino, type Logger } from 'pino';
import { parse } from 'yaml';
import { pointConversionAt } from '../../../hack/local/kubectl.ts';
import type { Manifest } from '../../../hack/local/manifests.ts';
import { kubeClientFor } from '../../../src/kube/client.ts';
import { NAMESPACES, resourcePath } from '../../../src/kube/resources.ts';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';

const run = promisify(execFile);

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

const CRD_FILES = ['serviceexports.yaml', 'serviceimports.yaml', 'clusterproperties.yaml'];

/**
 * Installs the project's CRDs (crds/) with kubectl and waits until they are served. A suite before this one on the same
 * ClusterSet may have aimed their conversion at a webhook server on the host (hack/local): server-side apply would keep
 * that `url` beside crds/' in-cluster `service`, which the apiserver refuses, so the conversion goes back to crds/' first.
 */
export async function installCrds(kubeconfigPath: string): Promise<void> {
  const crds = CRD_FILES.map(
    (f) => parse(readFileSync(new URL(`../../../crds/${f}`, import.meta.url), 'utf8')) as Manifest,
  );
  const inCluster = (crds[0]!.spec as { conversion: { webhook: { clientConfig: Record<string, unknown> } } }).conversion
    .webhook.clientConfig;
  pointConversionAt(kubeconfigPath, crds, inCluster);
  await run(kubectlBinary(), [
    '--kubeconfig',
    kubeconfigPath,
    'apply',
    '--server-side',
    '--force-conflicts',
    '-k',
    'crds/',
  ]);
  await run(kubectlBinary(), [
    '--kubeconfig',
    kubeconfigPath,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/serviceexports.multicluster.x-k8s.io',
    'crd/serviceimports.multicluster.x-k8s.io',
    'crd/clusterproperties.about.k8s.io',
  ]);
}

/** Creates a namespace with a unique name starting with `prefix`. */
export async function createTestNamespace(kc: KubeConfig, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await kubeClientFor(kc).request({ method: 'POST', path: resourcePath(NAMESPACES), body: { metadata: { name } } });
  return name;
}

export async function deleteNamespace(kc: KubeConfig, name: string): Promise<void> {
  await kubeClientFor(kc)
    .request({ method: 'DELETE', path: resourcePath(NAMESPACES, undefined, name) })
    .catch(() => {});
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
