// Prometheus' own parser and engine on what kustomize/components/monitoring (and the chart, generated from it) asks
// Prometheus to run, with promtool (built by hack/install-testbed.sh):
// - `promtool check rules` loads the PrometheusRule's groups as Prometheus would (PromQL of every expression, for:
//   durations, label and annotation templates), and every dashboard query as a recording rule, with Grafana's interval
//   variables given a duration;
// - `promtool test rules` evaluates every alert's expression on the series the worker's and the webhook server's real
//   metrics objects expose after a healthy minute, repeated, and after each kind of trouble: each fires exactly the
//   alerts meant for it, with the labels its description uses, and a healthy installation fires none.
// The metric names they read are checked against the processes' registries in test/unit/observability/monitoring.test.ts.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { stringify } from 'yaml';
import { binary } from '../../../hack/testbed/paths.ts';
import { createWebhookMetrics, type WebhookMetrics } from '../../../src/webhook/transport/metrics.ts';
import { createWorkerMetrics, type WorkerMetrics } from '../../../src/worker/metrics.ts';
import { asPromql, dashboardQueries, ruleGroups, type RuleGroup } from '../../support/monitoring.ts';

interface RecordingGroup {
  name: string;
  rules: { record: string; expr: string }[];
}

const NAMESPACE = 'mcs-cloudmap-system';
const REGION = 'us-west-2';
/** Minutes of series each scenario gets, one sample a minute, and when the alerts' expressions are evaluated. */
const MINUTES = 40;
const EVAL_TIME = '30m';
const DAY = 86_400;

/**
 * The series Prometheus would hold after scraping `registry` (in the pod the PodMonitor labels) every minute, when every
 * minute brings what the registry counted: counters and histograms grow by their value each minute, gauges stay.
 */
async function inputSeries(registry: Registry, pod: string): Promise<{ series: string; values: string }[]> {
  const out: { series: string; values: string }[] = [];
  for (const metric of await registry.getMetricsAsJSON()) {
    const cumulative = ['counter', 'histogram', 'summary'].includes(String(metric.type));
    for (const v of metric.values as {
      value: number;
      labels: Record<string, string | number>;
      metricName?: string;
    }[]) {
      // A gauge not measured yet (the event loop lag's before its first sample); no alert reads those.
      if (Number.isNaN(v.value)) continue;
      const labels = { ...v.labels, namespace: NAMESPACE, pod };
      const text = Object.entries(labels)
        .map(([k, x]) => `${k}=${JSON.stringify(String(x))}`)
        .join(', ');
      out.push({
        series: `${v.metricName ?? metric.name}{${text}}`,
        values: cumulative ? `0+${v.value}x${MINUTES}` : `${v.value}x${MINUTES}`,
      });
    }
  }
  return out;
}

interface Installation {
  worker: WorkerMetrics;
  webhook: WebhookMetrics;
}

/** A minute of a healthy installation, through the processes' own metrics objects. */
function healthy(): Installation {
  const worker = createWorkerMetrics({ processMetrics: false });
  const webhook = createWebhookMetrics();
  worker.leader.set(1);
  worker.heartbeats.inc(2);
  worker.regionReachable.set({ region: REGION }, 1);
  const cloudMap = worker.cloudMap(REGION);
  for (let i = 0; i < 10; i++) cloudMap.onCall('DiscoverInstancesRevision', 'success', 20);
  cloudMap.onCall('RegisterInstance', 'success', 40);
  for (const controller of ['export', 'import']) worker.observeReconcile(controller, 'success', 0.02);
  // The export queue busy and progressing; the import queue idle, never having had a key (no work series yet).
  worker.workQueue.added('export');
  worker.workQueue.depth('export', 'normal', 3);
  worker.workQueue.processed('export', 0.02, 'success');
  worker.workQueue.depth('import', 'normal', 0);
  worker.exportToImportLag.observe(0.6);
  worker.clusterPropertiesMissing.set(0);
  worker.silentClusters.set(0);
  webhook.observe('validate', 'ServiceExport', 'CREATE', 'allowed', 0.002);
  webhook.observe('convert', 'ServiceImport', '', 'converted', 0.001);
  // promtool's clock starts at 0: the certificate expires 60 days after it.
  webhook.setCertificateExpiry(60 * DAY);
  return { worker, webhook };
}

interface Scenario {
  name: string;
  trouble: (i: Installation) => void;
  fires: Record<string, Record<string, string>>;
}

const SCENARIOS: Scenario[] = [
  { name: 'healthy', trouble: () => {}, fires: {} },
  {
    name: 'half the change-marker reads fail',
    fires: { MCSCloudMapCallsFailing: { region: REGION, api: 'DiscoverInstancesRevision' } },
    trouble: ({ worker }) => {
      for (let i = 0; i < 10; i++) worker.cloudMap(REGION).onCall('DiscoverInstancesRevision', 'error', 20);
    },
  },
  {
    name: 'registrations are throttled',
    fires: { MCSCloudMapThrottled: { region: REGION, api: 'RegisterInstance' } },
    trouble: ({ worker }) => worker.cloudMap(REGION).onCall('RegisterInstance', 'throttled', 40),
  },
  {
    name: 'a Region does not answer',
    fires: { MCSCloudMapRegionUnreachable: { region: 'eu-west-1' } },
    trouble: ({ worker }) => worker.regionReachable.set({ region: 'eu-west-1' }, 0),
  },
  {
    name: 'exports over a quota',
    fires: { MCSExportsQuotaLimited: { quota: 'InstancesPerService' } },
    trouble: ({ worker }) => {
      worker.quotaLimitedExports.set({ quota: 'InstancesPerService' }, 2);
      worker.quotaUnregisteredInstances.set({ quota: 'InstancesPerService' }, 150);
    },
  },
  {
    name: 'import reconciles fail',
    fires: { MCSReconcileErrors: { controller: 'import' } },
    trouble: ({ worker }) => {
      for (let i = 0; i < 3; i++) worker.observeReconcile('import', 'error', 0.05);
    },
  },
  {
    name: 'imports lag',
    fires: { MCSExportToImportLagHigh: {} },
    trouble: ({ worker }) => {
      for (let i = 0; i < 5; i++) worker.exportToImportLag.observe(45);
    },
  },
  {
    name: 'no ClusterProperties',
    fires: { MCSClusterPropertiesMissing: {} },
    trouble: ({ worker }) => worker.clusterPropertiesMissing.set(1),
  },
  {
    name: 'another cluster is silent',
    fires: { MCSClusterSilent: {} },
    trouble: ({ worker }) => worker.silentClusters.set(1),
  },
  {
    name: 'the leader writes no heartbeats',
    fires: { MCSHeartbeatsStopped: {} },
    trouble: ({ worker }) => worker.heartbeats.reset(),
  },
  {
    name: 'no replica leads',
    fires: { MCSWorkerNoLeader: {} },
    trouble: ({ worker }) => worker.leader.set(0),
  },
  {
    name: 'the Lease changes hands every minute',
    fires: { MCSWorkerLeaderChanges: {} },
    trouble: ({ worker }) => worker.leaderStarts.inc(),
  },
  {
    name: 'the import queue is stuck',
    fires: { MCSWorkQueueStalled: { name: 'import' } },
    trouble: ({ worker }) => worker.workQueue.depth('import', 'normal', 5),
  },
  {
    name: 'conversions fail',
    fires: { MCSWebhookErrors: { webhook: 'convert' } },
    trouble: ({ webhook }) => webhook.observe('convert', 'ServiceImport', '', 'failed', 0.001),
  },
  {
    name: 'admission is slow',
    fires: { MCSWebhookSlow: { webhook: 'validate' } },
    trouble: ({ webhook }) => {
      for (let i = 0; i < 10; i++) webhook.observe('validate', 'ServiceExport', 'UPDATE', 'allowed', 0.9);
    },
  },
  {
    name: 'the serving certificate expires in 3 days',
    fires: { MCSWebhookCertificateExpiresSoon: {} },
    trouble: ({ webhook }) => webhook.setCertificateExpiry(3 * DAY),
  },
];

describe("promtool on the monitoring component's alerts and dashboard queries", function () {
  this.timeout(60_000);
  const dir = mkdtempSync(join(tmpdir(), 'mcs-promtool-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** `promtool check rules` of one rule file holding `groups`. */
  function checkRules(
    name: string,
    groups: readonly (RuleGroup | RecordingGroup)[],
  ): { status: number | null; output: string } {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, stringify({ groups }));
    const r = spawnSync(binary('promtool'), ['check', 'rules', file], { encoding: 'utf8' });
    return { status: r.status, output: r.stdout + r.stderr };
  }

  /** The dashboard's queries as recording rules, each passed through `prepare`. */
  const dashboardGroup = (prepare: (expr: string) => string): RecordingGroup => ({
    name: 'dashboard',
    rules: dashboardQueries().map((q, i) => ({ record: `dashboard:query_${i}`, expr: prepare(q.expr) })),
  });

  it('the alerting rules load: every expression, duration and template is valid', () => {
    const groups = ruleGroups();
    const r = checkRules('alerts', groups);
    expect(r.output).to.contain(`SUCCESS: ${groups.flatMap((g) => g.rules).length} rules found`);
    expect(r.status).to.equal(0);
  });

  it('every dashboard query parses', () => {
    const group = dashboardGroup(asPromql);
    const r = checkRules('dashboard', [group]);
    expect(r.output).to.contain(`SUCCESS: ${group.rules.length} rules found`);
    expect(r.status).to.equal(0);
  });

  it('each alert fires on the series of its trouble, with its labels, and on no other (promtool test rules)', async () => {
    const rules = ruleGroups().flatMap((g) => g.rules);
    const alertFile = join(dir, 'alerts-under-test.yaml');
    writeFileSync(alertFile, stringify({ groups: ruleGroups() }));
    const tests = [];
    for (const scenario of SCENARIOS) {
      const installation = healthy();
      scenario.trouble(installation);
      tests.push({
        name: scenario.name,
        interval: '1m',
        input_series: [
          ...(await inputSeries(installation.worker.registry, 'mcs-cloudmap-worker-0')),
          ...(await inputSeries(installation.webhook.registry, 'mcs-cloudmap-webhook-0')),
        ],
        // `* 0 + 1`: whether it fires and with which labels, not the value it reports.
        promql_expr_test: rules.map((r) => ({
          expr: `(${r.expr.trim()}) * 0 + 1`,
          eval_time: EVAL_TIME,
          exp_samples:
            r.alert in scenario.fires
              ? [
                  {
                    labels: `{${Object.entries({ namespace: NAMESPACE, ...scenario.fires[r.alert] })
                      .map(([k, v]) => `${k}="${v}"`)
                      .join(', ')}}`,
                    value: 1,
                  },
                ]
              : [],
        })),
      });
    }
    // Every alert has a scenario that fires it.
    expect(rules.map((r) => r.alert).filter((a) => !SCENARIOS.some((s) => a in s.fires))).to.deep.equal([]);
    const testFile = join(dir, 'alerts.test.yaml');
    writeFileSync(testFile, stringify({ rule_files: [alertFile], evaluation_interval: '1m', tests }));
    const r = spawnSync(binary('promtool'), ['test', 'rules', testFile], { encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(r.stdout + r.stderr, r.stdout + r.stderr).to.contain('SUCCESS');
    expect(r.status).to.equal(0);
  });

  it('a broken expression, template or dashboard query fails the check (it can fail)', () => {
    const [first, ...rest] = ruleGroups();
    const rule = first!.rules[0]!;
    const brokenExpr = checkRules('broken-expr', [
      { ...first!, rules: [{ ...rule, expr: rule.expr.replace(/\)\s*$/, '').replace('sum by', 'sum by by') }] },
      ...rest,
    ]);
    expect(brokenExpr.status).to.not.equal(0);
    expect(brokenExpr.output).to.contain('parse error');
    const brokenTemplate = checkRules('broken-template', [
      { ...first!, rules: [{ ...rule, annotations: { summary: '{{ $labels.api ' } }] },
    ]);
    expect(brokenTemplate.status).to.not.equal(0);
    expect(brokenTemplate.output).to.match(/template/i);
    // A Grafana variable left in a range does not parse: what asPromql() is for.
    const raw = checkRules('raw-dashboard', [dashboardGroup((expr) => expr)]);
    expect(raw.status).to.not.equal(0);
    expect(raw.output).to.contain('parse error');
  });
});
