// The suite reads one kubeconfig with a context per cluster (-contexts cls1,cls2); the testbed writes one file per
// cluster. This merges them. Pure: kubeconfig texts in, one text out.
import { parse, stringify } from 'yaml';

interface Named {
  name: string;
}
interface Kubeconfig {
  clusters?: Named[];
  users?: Named[];
  contexts?: Named[];
}

export function mergeKubeconfigs(texts: readonly string[]): string {
  const docs = texts.map((t) => parse(t) as Kubeconfig);
  const merged = { clusters: [] as Named[], users: [] as Named[], contexts: [] as Named[] };
  for (const doc of docs) {
    for (const key of ['clusters', 'users', 'contexts'] as const) {
      for (const entry of doc[key] ?? []) {
        if (merged[key].some((e) => e.name === entry.name))
          throw new Error(`two kubeconfigs name the same ${key.slice(0, -1)} "${entry.name}"`);
        merged[key].push(entry);
      }
    }
  }
  const first = merged.contexts[0];
  if (!first) throw new Error('no context in the kubeconfigs');
  return stringify({ apiVersion: 'v1', kind: 'Config', ...merged, 'current-context': first.name });
}
