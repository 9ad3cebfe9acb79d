// Runs the helm binary the installer builds (hack/install-testbed.sh) on charts/mcs-cloudmap and parses what it renders.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { binary } from '../../../hack/testbed/paths.ts';
import type { Manifest } from '../kustomize/build.ts';

export const CHART = fileURLToPath(new URL('../../../charts/mcs-cloudmap/', import.meta.url));
export const RELEASE_NAMESPACE = 'mcs-cloudmap-system';
/** The API version helm must see served for the chart to render the ClusterProperties (their CRD exists). */
export const CLUSTER_PROPERTY_API = 'about.k8s.io/v1beta1/ClusterProperty';

/** The chart's example values files (ci/), by name: each is linted, templated and checked. */
export function valuesFiles(): Map<string, string> {
  const dir = `${CHART}ci/`;
  return new Map(
    readdirSync(dir)
      .filter((f) => f.endsWith('-values.yaml'))
      .sort()
      .map((f) => [f.replace(/-values\.yaml$/, ''), dir + f]),
  );
}

export interface HelmResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function helm(args: readonly string[], env: NodeJS.ProcessEnv = {}): HelmResult {
  const r = spawnSync(binary('helm'), args, { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function mustHelm(args: readonly string[]): string {
  const r = helm(args);
  if (r.status !== 0) throw new Error(`helm ${args.join(' ')} failed (exit ${r.status}): ${r.stderr.trim()}`);
  return r.stdout;
}

export interface TemplateOptions {
  files?: readonly string[];
  set?: Readonly<Record<string, string>>;
  apiVersions?: readonly string[];
}

/** `helm template` arguments for values files, --set pairs and extra served API versions. */
export function valuesArgs(o: TemplateOptions): string[] {
  return [
    ...(o.files ?? []).flatMap((f) => ['-f', f]),
    ...Object.entries(o.set ?? {}).flatMap(([k, v]) => ['--set-string', `${k}=${v}`]),
    ...(o.apiVersions ?? []).flatMap((a) => ['--api-versions', a]),
  ];
}

export function helmTemplate(o: TemplateOptions = {}): Manifest[] {
  const yaml = mustHelm(['template', 'mcs-cloudmap', CHART, '--namespace', RELEASE_NAMESPACE, ...valuesArgs(o)]);
  return parseAllDocuments(yaml)
    .map((d) => {
      if (d.errors.length > 0) throw new Error(`helm template printed invalid YAML: ${d.errors[0]!.message}`);
      return d.toJS() as Manifest;
    })
    .filter((m) => m !== null);
}
