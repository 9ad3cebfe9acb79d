// The traffic benchmark's figures (bench/traffic.ts), its pure half: a scenario's requests, per client stream, shaped
// into failed-request counts for the cross-cluster and in-cluster sides, each with its causes and when and where the
// failures happened, as the result file's figures (hack/results/result-file.ts) and the printed table.
import type { Figure } from '../../hack/results/result-file.ts';
import type { ConnectionMode, RequestRecord } from './traffic-requests.ts';

/** Cross-cluster: clients in an importing cluster by clusterset name or ClusterSet IP; in-cluster: the baseline. */
export type Side = 'cross-cluster' | 'in-cluster';

/** One client's requests during a scenario. */
export interface Stream {
  side: Side;
  /** The cluster the client runs in. */
  cluster: string;
  /** What it asks for, in words: `clusterset name`, `ClusterSet IP`, `cluster.local name`. */
  via: string;
  mode: ConnectionMode;
  records: readonly RequestRecord[];
}

export interface FailedRequest {
  /** Seconds after the scenario's action began (negative: before it). */
  atS: number;
  cause: string;
  endpoint?: string;
  stream: string;
}

export interface SideSummary {
  sent: number;
  failed: number;
  /** Failed requests by cause, most frequent first. */
  causes: Array<[string, number]>;
  failures: FailedRequest[];
}

export function streamName(s: Pick<Stream, 'cluster' | 'via' | 'mode'>): string {
  return `${s.cluster} ${s.via} ${s.mode}`;
}

/** Every stream of `side` together; undefined when the scenario has none (no in-cluster equivalent). */
export function summarizeSide(streams: readonly Stream[], side: Side, actionAt: number): SideSummary | undefined {
  const mine = streams.filter((s) => s.side === side);
  if (mine.length === 0) return undefined;
  const failures = mine
    .flatMap((s) =>
      s.records
        .filter((r) => !r.ok)
        .map(
          (r): FailedRequest => ({
            atS: Math.round((r.at - actionAt) / 100) / 10,
            cause: r.cause ?? 'unknown',
            stream: streamName(s),
            ...(r.endpoint === undefined ? {} : { endpoint: r.endpoint }),
          }),
        ),
    )
    .sort((a, b) => a.atS - b.atS);
  const byCause = new Map<string, number>();
  for (const f of failures) byCause.set(f.cause, (byCause.get(f.cause) ?? 0) + 1);
  return {
    sent: mine.reduce((n, s) => n + s.records.length, 0),
    failed: failures.length,
    causes: [...byCause].sort(([a, x], [b, y]) => y - x || a.localeCompare(b)),
    failures,
  };
}

function seconds(s: number): string {
  return `${s >= 0 ? '+' : ''}${s.toFixed(1)} s`;
}

/** `of 2,345; 3 connect timeout, 1 refused; +4.1 s to +9.8 s` */
export function describeSide(s: SideSummary): string {
  const parts = [`of ${s.sent.toLocaleString('en-US')}`];
  if (s.failed > 0) {
    parts.push(s.causes.map(([cause, n]) => `${n} ${cause}`).join(', '));
    const first = s.failures[0]!.atS;
    const last = s.failures.at(-1)!.atS;
    parts.push(first === last ? `at ${seconds(first)}` : `${seconds(first)} to ${seconds(last)}`);
  }
  return parts.join('; ');
}

export const CROSS_FIGURE = 'failed requests across clusters';
export const IN_CLUSTER_FIGURE = 'failed requests in-cluster (baseline)';

/** The result file's figures: failed requests across clusters and, when the scenario has one, in its baseline. */
export function scenarioFigures(streams: readonly Stream[], actionAt: number): Figure[] {
  const figures: Figure[] = [];
  for (const [side, name] of [
    ['cross-cluster', CROSS_FIGURE],
    ['in-cluster', IN_CLUSTER_FIGURE],
  ] as const) {
    const s = summarizeSide(streams, side, actionAt);
    if (s !== undefined) figures.push({ name, value: s.failed, unit: '', detail: describeSide(s) });
  }
  return figures;
}

/** One line per failed request, for the printed report: `+4.1 s cls2 clusterset name keep-alive: connect timeout (pod nginx-1)`. */
export function failureLines(summary: SideSummary, limit = 40): string[] {
  const lines = summary.failures
    .slice(0, limit)
    .map((f) => `${seconds(f.atS)} ${f.stream}: ${f.cause}${f.endpoint ? ` (endpoint ${f.endpoint})` : ''}`);
  if (summary.failures.length > limit) lines.push(`… and ${summary.failures.length - limit} more`);
  return lines;
}
