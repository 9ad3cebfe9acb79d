// Builds kustomizations with the kubectl on PATH (kustomize v5 built in) and parses the output into plain objects.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';

export const KUSTOMIZE_DIR = fileURLToPath(new URL('../../../kustomize/', import.meta.url));

/** base plus every folder of kustomize/overlays: a new overlay is tested without touching the tests. */
export function kustomizations(): string[] {
  const overlays = readdirSync(`${KUSTOMIZE_DIR}overlays`, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => `overlays/${d.name}`);
  return ['base', ...overlays.sort()];
}

/** Every folder of kustomize/components (a component is built on top of base: kustomizeBuildWithBase). */
export function components(): string[] {
  return readdirSync(`${KUSTOMIZE_DIR}components`, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => `components/${d.name}`)
    .sort();
}

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** Builds `dir`: a folder of kustomize/, or an absolute path. */
export function kustomizeBuild(dir: string): { yaml: string; objects: Manifest[] } {
  const yaml = execFileSync(kubectlBinary(), ['kustomize', isAbsolute(dir) ? dir : `${KUSTOMIZE_DIR}${dir}`], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const objects = parseAllDocuments(yaml).map((d) => {
    if (d.errors.length > 0) throw new Error(`kubectl kustomize ${dir} printed invalid YAML: ${d.errors[0]!.message}`);
    return d.toJS() as Manifest;
  });
  return { yaml, objects };
}

/** kustomize/base with the given components, as an overlay that uses them builds it. */
export function kustomizeBuildWithBase(components: readonly string[]): { yaml: string; objects: Manifest[] } {
  const dir = mkdtempSync(join(tmpdir(), 'mcs-kustomize-'));
  try {
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      JSON.stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        // kustomize takes no absolute roots.
        resources: [relative(dir, `${KUSTOMIZE_DIR}base`)],
        components: components.map((c) => relative(dir, KUSTOMIZE_DIR + c)),
      }),
    );
    return kustomizeBuild(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function find(objects: readonly Manifest[], kind: string, name: string): Manifest {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`${kind} ${name} is not in the build output`);
  return o;
}
