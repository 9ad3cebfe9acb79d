// Renders a StatusReport for people (aligned text tables grouped by namespace) or for programs (JSON). Pure.
import type { Condition } from '../core/types.ts';
import {
  clusterPlacesOf,
  isHealthy,
  serviceKey,
  servicesOf,
  type EndpointCount,
  type ImportView,
  type StatusReport,
} from './status-model.ts';

/** Left-aligned columns separated by two spaces; trailing spaces trimmed. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `Valid Ready:Exported !Conflict:PortConflict`: the reason after the type, `!` marking what needs attention. */
export function formatConditions(conditions: readonly Condition[]): string {
  if (conditions.length === 0) return '-';
  return [...conditions]
    .sort((a, b) => a.type.localeCompare(b.type))
    .map(
      (c) => `${isHealthy(c) ? '' : '!'}${c.reason === c.type || c.reason === '' ? c.type : `${c.type}:${c.reason}`}`,
    )
    .join(' ');
}

function count(c: EndpointCount): string {
  return `${c.ready}/${c.total}`;
}

function perCluster(byCluster: Record<string, EndpointCount>): string {
  const entries = Object.entries(byCluster).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? '0' : entries.map(([id, c]) => `${id}=${count(c)}`).join(',');
}

/** I8: an import that says its EndpointSlices are Absent is marked, since GEP-1748 gateways then do not route to them. */
function importEndpoints(i: ImportView): string {
  const endpoints = perCluster(i.endpointsByCluster);
  return i.endpointSliceObjects === undefined || i.endpointSliceObjects === 'Present'
    ? endpoints
    : `${endpoints} !slices:${i.endpointSliceObjects}`;
}

function list(values: readonly string[]): string {
  return values.length === 0 ? '-' : values.join(',');
}

const HEADERS = [
  'NAMESPACE',
  'SERVICE',
  'CONTEXT',
  'SIDE',
  'TYPE',
  'IPS',
  'PORTS',
  'CLUSTERS',
  'ENDPOINTS',
  'CONDITIONS',
];

function serviceRows(report: StatusReport): string[][] {
  const rows: string[][] = [];
  const cloudMap = new Map((report.cloudMap?.services ?? []).map((s) => [serviceKey(s.namespace, s.name), s]));
  for (const { namespace, name } of servicesOf(report.clusters)) {
    const key = serviceKey(namespace, name);
    for (const c of report.clusters) {
      const e = c.exports.find((x) => serviceKey(x.namespace, x.name) === key);
      if (e)
        rows.push([
          namespace,
          name,
          c.context,
          'export',
          e.type ?? '-',
          '-',
          list(e.ports),
          c.clusterId ?? '?',
          count(e.endpoints),
          formatConditions(e.conditions),
        ]);
      const i = c.imports.find((x) => serviceKey(x.namespace, x.name) === key);
      if (i)
        rows.push([
          namespace,
          name,
          c.context,
          'import',
          i.type,
          list(i.ips),
          list(i.ports),
          list(i.clusters),
          importEndpoints(i),
          formatConditions(i.conditions),
        ]);
    }
    const s = cloudMap.get(key);
    if (s) {
      const state = s.error !== undefined ? '!error' : s.found ? '-' : '!not found';
      rows.push([
        namespace,
        name,
        'cloudmap',
        'instances',
        '-',
        '-',
        '-',
        list(Object.keys(s.instancesByCluster).sort()),
        perCluster(s.instancesByCluster),
        state,
      ]);
    }
  }
  return rows;
}

export function formatStatusTable(report: StatusReport): string {
  const out: string[] = [];
  out.push(
    renderTable(
      ['CONTEXT', 'CLUSTER ID', 'CLUSTERSET ID', 'SERVER'],
      report.clusters.map((c) => [
        c.context,
        c.error ? '!unreachable' : (c.clusterId ?? '!missing'),
        c.error ? '-' : (c.clustersetId ?? '!missing'),
        c.server,
      ]),
    ),
  );
  if (report.cloudMap) {
    const where = report.cloudMap.endpoint
      ? `${report.cloudMap.region} via ${report.cloudMap.endpoint}`
      : report.cloudMap.region;
    const owner = report.cloudMap.namespaceOwner ? `, namespaces of account ${report.cloudMap.namespaceOwner}` : '';
    out.push(
      '',
      `Cloud Map: ${where}${report.cloudMap.clustersetId ? `, CLUSTERSET_ID=${report.cloudMap.clustersetId}` : ''}${owner}`,
    );
    const places = Object.entries(clusterPlacesOf(report.cloudMap)).sort(([a], [b]) => a.localeCompare(b));
    if (places.length > 0) {
      out.push(
        renderTable(
          ['CLUSTER ID', 'REGIONS', 'ACCOUNTS'],
          places.map(([id, p]) => [id, list(p.regions), list(p.accounts)]),
        ),
      );
    }
  }
  const rows = serviceRows(report);
  out.push('');
  if (rows.length === 0) out.push('No ServiceExports or ServiceImports in the inspected clusters.');
  else
    out.push(
      renderTable(HEADERS, rows),
      '',
      'ENDPOINTS: ready/total addresses (Cloud Map: ready/total instances) per cluster id; ! marks what needs attention.',
    );
  out.push('');
  if (report.problems.length === 0) out.push('No problems found.');
  else {
    out.push(`Problems (${report.problems.length}):`);
    for (const p of report.problems) out.push(`  ${p.where}${p.service ? ` ${p.service}` : ''}: ${p.message}`);
  }
  return out.join('\n');
}

export function formatStatusJson(report: StatusReport): string {
  return JSON.stringify(report, null, 2);
}
