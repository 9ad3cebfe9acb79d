// The CRDs of the other projects our manifests use, as those projects publish them in their Go modules (fetched through
// the Go module proxy), so our objects of their kinds are validated by the real schemas in a server-side dry run:
// cert-manager's Issuers and Certificates (deploy/crds/*.yaml; its cainjector and controller cannot be built from Go
// modules, docs/testbed.md, and only the CRDs are needed), and the Prometheus Operator's PodMonitors and PrometheusRules
// (example/prometheus-operator-crd/*.yaml; v0.85.0 is the newest version of its main module the proxy serves).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

export const CERT_MANAGER_VERSION = 'v1.17.2';
export const PROMETHEUS_OPERATOR_VERSION = 'v0.85.0';

export type PublishedCrds = { crds: Record<string, unknown>[] } | { missing: string };

function jsonError(stdout: string | undefined): string | undefined {
  try {
    return (JSON.parse(stdout ?? '') as { Error?: string }).Error;
  } catch {
    return undefined;
  }
}

/** The CRD files (paths in the module) of a Go module's version, or why they could not be had. */
function crdsOfGoModule(module: string, version: string, files: readonly string[]): PublishedCrds {
  let dir: string;
  try {
    const out = execFileSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
      cwd: tmpdir(),
      encoding: 'utf8',
      env: { ...process.env, GOWORK: 'off', GOFLAGS: '-mod=mod' },
      timeout: 120_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    dir = (JSON.parse(out) as { Dir?: string; Error?: string }).Dir ?? '';
    if (!dir) throw new Error(out.slice(0, 300));
  } catch (err) {
    // go's own complaint (no network, GOPROXY=off, ...) is the JSON's Error on stdout, or stderr; the error's message
    // only repeats the command.
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    const why = jsonError(stdout) ?? (stderr?.trim() || (err as Error).message);
    return { missing: `go mod download ${module}@${version} failed: ${why.split('\n')[0]}` };
  }
  const crds = files.map((f) => {
    const crd = parse(readFileSync(join(dir, f), 'utf8')) as { metadata: { labels?: unknown; annotations?: unknown } };
    // Not needed to validate, and cert-manager's files are Helm templates whose labels hold template expressions.
    delete crd.metadata.labels;
    delete crd.metadata.annotations;
    return crd;
  });
  return { crds };
}

/** The kinds our cert-manager component uses. */
export function certManagerCrds(): PublishedCrds {
  return crdsOfGoModule(
    'github.com/cert-manager/cert-manager',
    CERT_MANAGER_VERSION,
    ['crd-certificates.yaml', 'crd-issuers.yaml'].map((f) => `deploy/crds/${f}`),
  );
}

/** The kinds our monitoring component uses. */
export function prometheusOperatorCrds(): PublishedCrds {
  return crdsOfGoModule(
    'github.com/prometheus-operator/prometheus-operator',
    PROMETHEUS_OPERATOR_VERSION,
    ['podmonitors', 'prometheusrules'].map((k) => `example/prometheus-operator-crd/monitoring.coreos.com_${k}.yaml`),
  );
}
