// `npm run chaos [-- --soak=10m]`: the webhook against hostile and broken clients, longer than CI allows, loopback only,
// bounded in connections and time. The server runs in its own process with the benchmark's 10,000-object caches.
//   1. slowloris: mixed reviews at --rate alone, then with --slow slow connections open (TLS handshake, headers and body
//      trickled a byte a second); p50/p99 of both, how the server cut the slow connections, RSS before and after;
//   2. soak: mixed reviews at --soak-rate for --soak with --hostile-share of the requests hostile (every kind of
//      test/support/hostile-clients.ts in turn) and --soak-slow slow connections throughout; RSS every 30 s.
// Prints Markdown with the load average beside each figure, and writes bench/results/chaos-slowloris-*.json and
// chaos-soak-*.json, the rows of docs/reliability.md. Exits 1 if a review failed or a hostile client got an answer
// other than the expected one.
// `npm run chaos -- --cloudmap`: instead, the Cloud Map fault matrix on a testbed ClusterSet (bench/cloudmap-chaos.ts).

import { cpus, totalmem } from 'node:os';
import {
  boolOption,
  durationOption,
  formatHelp,
  intOption,
  parseOptions,
  stringOption,
} from '../src/config/options.ts';
import { describeSlow, load, slowlorisRun, soakRun } from '../test/support/chaos-runs.ts';
import { cloudMapMatrix, FAULT_KINDS, type FaultKind } from './cloudmap-chaos.ts';
import { fmt, mib, startServerProcess } from '../test/support/webhook-client.ts';
import { resultOfThisRun, resultsOption, writeResult } from '../hack/results/result-file.ts';

const specs = {
  slow: intOption('slow', 'CHAOS_SLOW', 200, 'Slowloris connections held open in the slowloris run.', 1, 5_000),
  rate: intOption('rate', 'CHAOS_RATE', 1_000, 'Reviews per second in the slowloris run.', 1),
  slowDuration: durationOption(
    'slow-duration',
    'CHAOS_SLOW_DURATION',
    60_000,
    'Length of each half of the slowloris run (alone, then under attack).',
  ),
  soak: durationOption('soak', 'CHAOS_SOAK', 600_000, 'Length of the soak.'),
  soakRate: intOption(
    'soak-rate',
    'CHAOS_SOAK_RATE',
    500,
    'Requests per second in the soak, hostile ones included.',
    1,
  ),
  hostilePercent: intOption(
    'hostile-percent',
    'CHAOS_HOSTILE_PERCENT',
    10,
    "Percentage of the soak's requests that are hostile.",
    1,
    100,
  ),
  soakSlow: intOption('soak-slow', 'CHAOS_SOAK_SLOW', 20, 'Slowloris connections held open during the soak.', 0, 5_000),
  maxRequestBytes: intOption(
    'max-request-bytes',
    'CHAOS_MAX_REQUEST_BYTES',
    1 << 20,
    "The server's --max-request-bytes (oversized requests are one byte more).",
    1024,
  ),
  cloudmap: boolOption(
    'cloudmap',
    'CHAOS_CLOUDMAP',
    false,
    'Run the Cloud Map fault matrix on a testbed ClusterSet instead of the webhook runs.',
  ),
  cloudmapServices: intOption(
    'cloudmap-services',
    'CHAOS_CLOUDMAP_SERVICES',
    50,
    'Services exported in the Cloud Map fault matrix (half from each cluster).',
    2,
    1_000,
  ),
  cloudmapFaultDuration: durationOption(
    'cloudmap-fault-duration',
    'CHAOS_CLOUDMAP_FAULT_DURATION',
    60_000,
    'How long each fault configuration lasts.',
  ),
  cloudmapRounds: intOption(
    'cloudmap-rounds',
    'CHAOS_CLOUDMAP_ROUNDS',
    3,
    'Rounds of changes to every service while the faults last.',
    1,
    100,
  ),
  cloudmapKinds: stringOption(
    'cloudmap-kinds',
    'CHAOS_CLOUDMAP_KINDS',
    'throttle,error,stall',
    'Kinds of fault: throttle (ThrottlingException), error (500/503), stall (5 s, then 504).',
  ),
  cloudmapPercents: stringOption(
    'cloudmap-percents',
    'CHAOS_CLOUDMAP_PERCENTS',
    '10,30,50',
    'Shares of Cloud Map calls that fail, in percent.',
  ),
  results: resultsOption,
};

const perSecond = (rate: number) => `${rate.toLocaleString('en-US')}/s`;
const lasting = (ms: number) => (ms >= 60_000 ? `${Number((ms / 60_000).toFixed(1))} minutes` : `${ms / 1000} s`);

async function main(): Promise<number> {
  if (process.argv.includes('--help')) {
    console.log(formatHelp('npm run chaos: the webhook under slowloris and a soak with hostile traffic.', specs));
    return 0;
  }
  const opts = parseOptions(specs, process.argv.slice(2));
  if (opts.cloudmap) {
    const kinds = opts.cloudmapKinds.split(',').map((k) => k.trim());
    const unknown = kinds.filter((k) => !(k in FAULT_KINDS));
    const percents = opts.cloudmapPercents.split(',').map(Number);
    if (unknown.length > 0)
      throw new Error(
        `--cloudmap-kinds: unknown kind(s) ${unknown.join(', ')}; use ${Object.keys(FAULT_KINDS).join(', ')}`,
      );
    if (percents.some((p) => !(p > 0 && p <= 100)))
      throw new Error(
        `--cloudmap-percents: ${opts.cloudmapPercents}: give percentages between 1 and 100, separated by commas`,
      );
    console.log(
      `# Cloud Map chaos — ${new Date().toISOString()}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load ${load()}\n`,
    );
    return cloudMapMatrix({
      services: opts.cloudmapServices,
      faultMs: opts.cloudmapFaultDuration,
      rounds: opts.cloudmapRounds,
      kinds: kinds as FaultKind[],
      percents,
      results: opts.results,
    });
  }
  const server = await startServerProcess(opts.maxRequestBytes);
  try {
    console.log(
      `# webhook chaos — ${new Date().toISOString()}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load ${load()}`,
    );
    console.log(`server RSS after filling the caches: ${mib(await server.rss())} MiB\n`);

    const s = await slowlorisRun(server, opts.slow, opts.rate, opts.slowDuration);
    console.log(
      `## slowloris: ${opts.slow} slow connections, mixed reviews at ${opts.rate}/s, ${opts.slowDuration / 1000} s each (load ${s.load})\n`,
    );
    console.log('| traffic | reviews | failed | p50 ms | p99 ms | max ms | achieved/s |');
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    for (const [what, r] of [
      ['alone', s.baseline],
      [`with ${opts.slow} slow connections`, s.underAttack],
    ] as const) {
      console.log(
        `| ${what} | ${r.n} | ${r.errors.length} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${fmt(r.rps)} |`,
      );
    }
    console.log(`\n${describeSlow(s.slow)}; server RSS ${mib(s.rssBefore)} → ${mib(s.rssAfter)} MiB\n`);
    const cut = Object.values(s.slow.cut).reduce((a, b) => a + b, 0);
    writeResult(
      resultOfThisRun({
        benchmark: 'chaos',
        scenario: `slowloris-${opts.slow}-at-${opts.rate}-per-second`,
        size: `${opts.slow} slow connections, reviews at ${perSecond(opts.rate)}, ${lasting(opts.slowDuration)} alone then ${lasting(opts.slowDuration)} with them`,
        load: s.load,
        figures: [
          {
            name: 'reviews failed',
            value: s.baseline.errors.length + s.underAttack.errors.length,
            unit: '',
            atMost: 0,
            detail: `of ${(s.baseline.n + s.underAttack.n + s.baseline.errors.length + s.underAttack.errors.length).toLocaleString('en-US')}`,
          },
          {
            name: 'review p99 alone',
            value: Number(fmt(s.baseline.p99)),
            unit: 'ms',
            detail: `p50 ${fmt(s.baseline.p50)} ms`,
          },
          {
            name: 'review p99 with the slow connections',
            value: Number(fmt(s.underAttack.p99)),
            unit: 'ms',
            detail: `p50 ${fmt(s.underAttack.p50)} ms`,
          },
          {
            name: 'slow connections opened and cut by the server',
            value: cut,
            unit: '',
            detail: `${s.slow.opened} opened`,
          },
          {
            name: 'server RSS with them open',
            value: Number(mib(s.rssAfter)),
            unit: 'MiB',
            detail: `${mib(s.rssBefore)} MiB before`,
          },
        ],
      }),
      opts.results,
    );

    const soak = await soakRun(server, {
      rate: opts.soakRate,
      durationMs: opts.soak,
      hostileShare: opts.hostilePercent / 100,
      slow: opts.soakSlow,
      sampleEveryMs: 30_000,
      maxRequestBytes: opts.maxRequestBytes,
    });
    const [first, last] = [soak.rss[1] ?? soak.rss[0]!, soak.rss[soak.rss.length - 1]!];
    const slope = (last[1] - first[1]) / 2 ** 20 / ((last[0] - first[0]) / 60);
    const sent = Object.values(soak.hostile).reduce((a, h) => a + h.sent, 0);
    console.log(
      `## soak: ${opts.soak / 60_000} min at ${opts.soakRate}/s, ${opts.hostilePercent} % hostile, ${opts.soakSlow} slow connections (load ${soak.load})\n`,
    );
    console.log(
      `${soak.reviews.n} reviews answered 200, ${soak.reviews.errors.length} failed: p50 ${fmt(soak.reviews.p50)} ms, p99 ${fmt(soak.reviews.p99)} ms, max ${fmt(soak.reviews.max)} ms; ${sent} hostile requests:`,
    );
    console.log(
      Object.entries(soak.hostile)
        .map(
          ([k, h]) =>
            `${k} ${h.sent}${h.unanswered ? ` (${h.unanswered} closed unanswered)` : ''}${h.unexpected ? ` (${h.unexpected} unexpected)` : ''}`,
        )
        .join(', '),
    );
    console.log(`${describeSlow(soak.slow)}`);
    console.log(`\nserver RSS MiB: ${soak.rss.map(([t, b]) => `${t.toFixed(0)}s=${mib(b)}`).join(' ')}`);
    console.log(
      `server RSS after warm-up ${mib(first[1])} MiB, last ${mib(last[1])} MiB, max ${mib(Math.max(...soak.rss.map(([, b]) => b)))} MiB, trend ${slope.toFixed(2)} MiB/min`,
    );
    const unexpected = Object.values(soak.hostile).reduce((a, h) => a + h.unexpected, 0);
    writeResult(
      resultOfThisRun({
        benchmark: 'chaos',
        scenario: `soak-${opts.soakRate}-per-second`,
        size: `${lasting(opts.soak)} at ${perSecond(opts.soakRate)}, ${opts.hostilePercent} % of requests hostile, ${opts.soakSlow} slow connections`,
        load: `${soak.load} at the end`,
        figures: [
          {
            name: 'reviews failed',
            value: soak.reviews.errors.length,
            unit: '',
            atMost: 0,
            detail: `of ${(soak.reviews.n + soak.reviews.errors.length).toLocaleString('en-US')}`,
          },
          {
            name: 'review p99',
            value: Number(fmt(soak.reviews.p99)),
            unit: 'ms',
            detail: `p50 ${fmt(soak.reviews.p50)} ms`,
          },
          {
            name: 'hostile requests answered otherwise than expected',
            value: unexpected,
            unit: '',
            atMost: 0,
            detail: `of ${sent.toLocaleString('en-US')}`,
          },
          {
            name: 'hostile requests closed unanswered',
            value: Object.values(soak.hostile).reduce((a, h) => a + h.unanswered, 0),
            unit: '',
          },
          {
            name: 'server RSS at the end',
            value: Number(mib(last[1])),
            unit: 'MiB',
            detail: `${mib(first[1])} MiB after warm-up`,
          },
          // A trend needs two samples after the warm-up one: a soak shorter than two sampling periods has none.
          ...(Number.isFinite(slope)
            ? [{ name: 'server RSS trend after warm-up', value: Number(slope.toFixed(2)), unit: 'MiB/min' }]
            : []),
        ],
      }),
      opts.results,
    );
    const failures = [...s.baseline.errors, ...s.underAttack.errors, ...soak.reviews.errors]
      .slice(0, 5)
      .map((e) => `FAILED review: ${e}`);
    for (const e of [...failures, ...soak.examples.map((e) => `UNEXPECTED ${e}`)]) console.log(e);
    return failures.length + soak.examples.length === 0 ? 0 : 1;
  } finally {
    await server.stop();
  }
}

process.exitCode = await main();
