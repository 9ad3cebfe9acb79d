// kubectl invocations of the local install: server-side apply, waiting for CRDs, service-account tokens and the
// kubeconfig built from one, so each host process acts under its own service account and RBAC as it would in a pod.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify, parse } from 'yaml';
import type { Manifest } from './manifests.ts';
import { kubectlBinary } from '../testbed/paths.ts';

function kubectl(kubeconfig: string, args: string[], input?: string): string {
  try {
    return execFileSync(kubectlBinary(), ['--kubeconfig', kubeconfig, ...args], {
      encoding: 'utf8',
      input,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(
      `kubectl ${args.slice(0, 3).join(' ')} against ${kubeconfig} failed: ${stderr.trim() || (err as Error).message}`,
      { cause: err },
    );
  }
}

export function applyManifests(kubeconfig: string, manifests: Manifest[]): void {
  kubectl(
    kubeconfig,
    ['apply', '--server-side', '--force-conflicts', '--field-manager=mcs-cloudmap-local', '-f', '-'],
    manifests.map((m) => stringify(m)).join('---\n'),
  );
}

/**
 * Points the conversion webhook of CRDs that already exist at `clientConfig`, removing any in-cluster `service` form.
 * Server-side apply alone would keep another field manager's `service` beside our `url`, which the apiserver refuses.
 */
export function pointConversionAt(
  kubeconfig: string,
  manifests: Manifest[],
  clientConfig: Record<string, unknown>,
): void {
  const names = manifests.filter((m) => m.kind === 'CustomResourceDefinition').map((m) => m.metadata.name);
  const existing = new Set(
    kubectl(kubeconfig, ['get', 'crd', '-o', 'name'])
      .split('\n')
      .map((l) => l.replace('customresourcedefinition.apiextensions.k8s.io/', '')),
  );
  const patch = JSON.stringify({
    spec: { conversion: { webhook: { clientConfig: { service: null, url: null, caBundle: null, ...clientConfig } } } },
  });
  for (const name of names.filter((n) => existing.has(n)))
    kubectl(kubeconfig, ['patch', 'crd', name, '--type=merge', '-p', patch]);
}

export function waitForCrds(kubeconfig: string, manifests: Manifest[]): void {
  const crds = manifests.filter((m) => m.kind === 'CustomResourceDefinition').map((m) => `crd/${m.metadata.name}`);
  kubectl(kubeconfig, ['wait', '--for=condition=Established', '--timeout=60s', ...crds]);
}

/** A kubeconfig for `namespace/serviceAccount` with a token from the TokenRequest API, against the same server and CA. */
export function serviceAccountKubeconfig(
  adminKubeconfig: string,
  namespace: string,
  serviceAccount: string,
  outPath: string,
): string {
  const token = kubectl(adminKubeconfig, ['create', 'token', serviceAccount, '-n', namespace, '--duration=24h']).trim();
  const admin = parse(readFileSync(adminKubeconfig, 'utf8')) as {
    clusters: { name: string; cluster: Record<string, unknown> }[];
    'current-context': string;
  };
  const cluster = admin.clusters[0]!;
  writeFileSync(
    outPath,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [cluster],
      users: [{ name: serviceAccount, user: { token } }],
      contexts: [
        { name: admin['current-context'], context: { cluster: cluster.name, user: serviceAccount, namespace } },
      ],
      'current-context': admin['current-context'],
    }),
    { mode: 0o600 },
  );
  return outPath;
}
