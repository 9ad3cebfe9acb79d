// cert-manager's published CRDs, from the Go module github.com/cert-manager/cert-manager (deploy/crds/*.yaml), so our
// Issuers and Certificates are validated by the real schemas. Its cainjector and controller cannot be built from Go
// modules (TESTBED.md); only the CRDs are needed for a server-side dry-run.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

export const CERT_MANAGER_VERSION = 'v1.17.2';
const MODULE = 'github.com/cert-manager/cert-manager';
/** The kinds our cert-manager component uses. */
const FILES = ['crd-certificates.yaml', 'crd-issuers.yaml'];

export type CertManagerCrds = { crds: Record<string, unknown>[] } | { missing: string };

function jsonError(stdout: string | undefined): string | undefined {
  try {
    return (JSON.parse(stdout ?? '') as { Error?: string }).Error;
  } catch {
    return undefined;
  }
}

export function certManagerCrds(): CertManagerCrds {
  let dir: string;
  try {
    const out = execFileSync('go', ['mod', 'download', '-json', `${MODULE}@${CERT_MANAGER_VERSION}`], {
      cwd: tmpdir(), encoding: 'utf8', env: { ...process.env, GOWORK: 'off', GOFLAGS: '-mod=mod' }, timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'],
    });
    dir = (JSON.parse(out) as { Dir?: string; Error?: string }).Dir ?? '';
    if (!dir) throw new Error(out.slice(0, 300));
  } catch (err) {
    // go's own complaint (no network, GOPROXY=off, ...) is the JSON's Error on stdout, or stderr; the error's message
    // only repeats the command.
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    const why = jsonError(stdout) ?? (stderr?.trim() || (err as Error).message);
    return { missing: `go mod download ${MODULE}@${CERT_MANAGER_VERSION} failed: ${why.split('\n')[0]}` };
  }
  // The files are Helm templates: directives sit in comments, and only the labels hold template expressions.
  const crds = FILES.map((f) => {
    const crd = parse(readFileSync(join(dir, 'deploy', 'crds', f), 'utf8')) as { metadata: { labels?: unknown; annotations?: unknown } };
    delete crd.metadata.labels;
    delete crd.metadata.annotations;
    return crd as unknown as Record<string, unknown>;
  });
  return { crds };
}
