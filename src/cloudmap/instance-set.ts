// Pure helpers over lists of Cloud Map instances as the API returns them.
import { ATTR_CLUSTERSET_ID } from '../core/names.ts';
import type { CloudMapInstance } from '../core/types.ts';

export function inClusterset(instances: readonly CloudMapInstance[], clustersetId: string): CloudMapInstance[] {
  return instances.filter((i) => i.attributes[ATTR_CLUSTERSET_ID] === clustersetId);
}

function sameAttributes(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/** True when both lists hold the same instances (ids and attributes), in any order. */
export function sameInstances(a: readonly CloudMapInstance[], b: readonly CloudMapInstance[]): boolean {
  if (a.length !== b.length) return false;
  const byId = new Map(b.map((i) => [i.id, i]));
  return a.every((i) => {
    const other = byId.get(i.id);
    return other !== undefined && sameAttributes(i.attributes, other.attributes);
  });
}
