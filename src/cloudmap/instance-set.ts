// Pure helpers over lists of Cloud Map instances as the API returns them.
import { latestById } from '../core/instance-id.ts';
import { ATTR_CLUSTERSET_ID } from '../core/names.ts';
import type { CloudMapInstance } from '../core/types.ts';

/** One entry per instance id, the last listed winning: bare moto (without the testbed emulator) appends a copy on re-registration. */
export function dedupeById(instances: readonly CloudMapInstance[]): CloudMapInstance[] {
  return [...latestById(instances).values()];
}

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
