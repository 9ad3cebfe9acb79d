// Which services each cluster of bench:sync's 3-cluster ClusterSet exports, and what the imports must then hold: two
// exporting clusters whose services overlap by half (cls1 the first three quarters, cls2 the last three quarters),
// and one cluster that only imports; or one exporting cluster (cls1, every service) and two that only import. Pure.

export interface ExportRange {
  /** Index of the cluster in the ClusterSet (0: cls1). */
  readonly cluster: number;
  /** Services `from` … `to - 1`. */
  readonly from: number;
  readonly to: number;
}

export function exportRanges(services: number, exportingClusters: 1 | 2 = 2): ExportRange[] {
  if (exportingClusters === 1) return [{ cluster: 0, from: 0, to: services }];
  return [
    { cluster: 0, from: 0, to: Math.ceil((services * 3) / 4) },
    { cluster: 1, from: Math.floor(services / 4), to: services },
  ];
}

/** Endpoints every cluster's import of service i holds: `endpoints` from each cluster exporting it. */
export function expectedEndpoints(ranges: readonly ExportRange[], i: number, endpoints: number): number {
  return ranges.filter((r) => i >= r.from && i < r.to).length * endpoints;
}

/**
 * The Cloud Map writes no controller can avoid for this layout, by API: a namespace per Kubernetes namespace plus the
 * ClusterSet's marker namespace, a service per exported name plus the marker service, an instance per exported
 * endpoint plus each exporting cluster's marker instance per namespace (docs/design.md "Cost").
 */
export function unavoidableWrites(
  ranges: readonly ExportRange[],
  services: number,
  namespaces: number,
  endpoints: number,
): Record<string, number> {
  const exported = ranges.reduce((n, r) => n + (r.to - r.from), 0);
  return {
    CreateHttpNamespace: namespaces + 1,
    CreateService: services + 1,
    RegisterInstance: exported * endpoints + ranges.length * namespaces,
  };
}

/** The layout in words: who exports what, and who only imports. */
export function describeLayout(ranges: readonly ExportRange[], clusterIds: readonly string[]): string {
  const exporters = ranges.map((r) => `${clusterIds[r.cluster]} exports ${r.from}…${r.to - 1}`);
  const overlap = ranges.length === 2 ? ` (overlap ${ranges[0]!.to - ranges[1]!.from})` : '';
  const importers = clusterIds.filter((_, c) => !ranges.some((r) => r.cluster === c));
  return `${exporters.join(', ')}${overlap}, ${importers.join(' and ')} ${importers.length === 1 ? 'imports' : 'import'} only`;
}
