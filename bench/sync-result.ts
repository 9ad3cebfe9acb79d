// The result file of one `npm run bench:sync` run (bench/results/sync-<scenario>.json): the figures docs/benchmarks.md
// shows, with the goals of M6 (staying in sync is cheap), M7 (a change reaches the other clusters in seconds) and M9
// (a worker that starts reads only what changed).
import type { BenchResult, Figure } from '../hack/results/result-file.ts';

/** Worker RSS goals (MiB) by the number of services. */
const RSS_GOALS: Record<number, number> = { 300: 100, 5000: 200, 10000: 250 };

export interface Latency {
  p50: number;
  p99: number;
  n: number;
}

export interface SyncRun {
  services: number;
  exportingClusters: number;
  crossRegion: boolean;
  /** The workers' settings over kustomize/base's ConfigMap (--worker-env). */
  settings: Record<string, string>;
  clusters: string[];
  initialSyncMs: number;
  boundSeconds: number;
  exportLatency: Latency;
  changeLatency: Latency;
  idlePerMinute: number[];
  peakRssMiB: number;
  endRssMiB: number[];
  /** The warm restarts under the Deployment's flags, every worker at once and cls1 alone, each round. */
  restarts: {
    all: boolean;
    readyMs: (number | undefined)[];
    writesLessHeartbeats: number;
    rewritten: number;
    objects: number;
  }[];
  restartTimeoutMs: number;
}

const one = (n: number) => Math.round(n * 10) / 10;

/** The scenario's name part and words: size, exporting clusters, Regions, the account's whole quota. */
export function syncScenario(
  r: Pick<SyncRun, 'services' | 'exportingClusters' | 'crossRegion' | 'settings' | 'clusters'>,
): { scenario: string; size: string } {
  const wholeQuota = r.settings.MCS_CLOUDMAP_QUOTA_SHARE === '100';
  return {
    scenario: `${r.exportingClusters === 1 ? 'one-exporter-' : ''}${r.crossRegion ? 'cross-region-' : ''}${r.services}-services${wholeQuota ? '-whole-quota' : ''}`,
    size:
      `${r.services.toLocaleString('en-US')} services, ${r.exportingClusters === 1 ? 'one exporting cluster' : `${r.clusters.length} clusters`}` +
      `${r.crossRegion ? `, ${r.clusters.at(-1)} in another Region` : ''}${wholeQuota ? ", the account's whole quota" : ''}`,
  };
}

function restartFigure(name: string, rounds: SyncRun['restarts'], timeoutMs: number): Figure {
  const ready = rounds.flatMap((r) => r.readyMs);
  const late = ready.some((ms) => ms === undefined);
  const slowest = late ? timeoutMs : Math.max(...ready.map((ms) => ms!));
  return {
    name,
    value: one(slowest / 1000),
    unit: 's',
    atMost: 10,
    detail: late
      ? 'not all ready within the restart timeout'
      : rounds.map((r) => r.readyMs.map((ms) => `${one(ms! / 1000)}`).join(', ')).join(' / '),
  };
}

function latencyFigure(name: string, l: Latency): Figure {
  return {
    name,
    value: Math.round(l.p99),
    unit: 'ms',
    atMost: 2000,
    detail: `p50 ${Math.round(l.p50).toLocaleString('en-US')} ms, n=${l.n}`,
  };
}

export function syncFigures(r: SyncRun): Figure[] {
  const goal = RSS_GOALS[r.services];
  const warm = r.restarts;
  return [
    {
      name: "initial sync against the quotas' lower bound",
      value: Math.round(r.initialSyncMs / 10 / r.boundSeconds) / 100,
      unit: '×',
      atMost: 1.3,
      detail: `${one(r.initialSyncMs / 1000).toLocaleString('en-US')} s; bound ${Math.round(r.boundSeconds).toLocaleString('en-US')} s`,
    },
    latencyFigure('export→import latency p99', r.exportLatency),
    latencyFigure('endpoint-change latency p99', r.changeLatency),
    {
      name: 'idle Cloud Map calls per cluster, highest',
      value: one(Math.max(...r.idlePerMinute)),
      unit: 'calls/min',
      atMost: 150,
      detail: r.idlePerMinute.map(one).join(', '),
    },
    { name: 'worker RSS peak', value: r.peakRssMiB, unit: 'MiB', atMost: goal },
    {
      name: 'worker RSS at the end, highest',
      value: Math.max(...r.endRssMiB),
      unit: 'MiB',
      atMost: goal,
      detail: r.endRssMiB.join(', '),
    },
    restartFigure(
      'warm restart of every worker at once, slowest ready',
      warm.filter((x) => x.all),
      r.restartTimeoutMs,
    ),
    restartFigure(
      'warm restart of cls1 alone, slowest ready',
      warm.filter((x) => !x.all),
      r.restartTimeoutMs,
    ),
    {
      name: 'Cloud Map writes in the warm restarts, less heartbeats',
      value: warm.reduce((n, x) => n + x.writesLessHeartbeats, 0),
      unit: '',
      atMost: 0,
    },
    {
      name: 'imports and slices rewritten in the warm restarts',
      value: warm.reduce((n, x) => n + x.rewritten, 0),
      unit: '',
      atMost: 0,
      detail: `of ${Math.max(...warm.map((x) => x.objects)).toLocaleString('en-US')} per cluster`,
    },
  ];
}

export function syncResult(r: SyncRun): Pick<BenchResult, 'benchmark' | 'scenario' | 'size' | 'figures'> {
  return { benchmark: 'sync', ...syncScenario(r), figures: syncFigures(r) };
}
