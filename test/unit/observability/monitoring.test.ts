// The alerts and the dashboard of kustomize/components/monitoring read only metrics the processes register, under the
// one naming scheme (every metric is mcs_cloudmap_*), and the dashboard has a panel for every metric of their own. The
// names come from the registries the worker and the webhook server build at start-up, not from a list.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { METRIC_PREFIX } from '../../../src/observability/metric-names.ts';
import { createWebhookMetrics, DEPRECATED_PREFIX } from '../../../src/webhook/transport/metrics.ts';
import { createWorkerMetrics } from '../../../src/worker/metrics.ts';
import { dashboardQueries, dashboardVariableQueries, metricNames, ruleGroups } from '../../support/monitoring.ts';

/** The series names a registry exposes: a histogram's _bucket, _sum and _count, a summary's quantiles, _sum and _count. */
async function exposedNames(registry: Registry): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    const suffixes = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] }[String(m.type)] ?? [
      '',
    ];
    for (const s of suffixes) names.add(m.name + s);
  }
  return names;
}

/** The headings of a page of docs/, without their markup. */
function headings(file: string): string[] {
  const text = readFileSync(new URL(`../../../docs/${file}`, import.meta.url), 'utf8');
  return [...text.matchAll(/^#+ (.+)$/gm)].map((m) => m[1]!.replaceAll('`', ''));
}

/** Each name the expressions read that no process exposes under the one scheme, with where it is read. */
function unknownNames(exprs: readonly { where: string; expr: string }[], exposed: ReadonlySet<string>): string[] {
  return exprs.flatMap(({ where, expr }) =>
    metricNames(expr)
      .filter((n) => !exposed.has(n) || !n.startsWith(METRIC_PREFIX))
      .map((n) => `${where}: ${n}`),
  );
}

describe('monitoring: alerts and dashboard against the metrics the processes register', () => {
  let exposed: Set<string>;
  let own: Set<string>;

  before(async () => {
    const worker = await exposedNames(createWorkerMetrics().registry);
    const webhook = await exposedNames(createWebhookMetrics().registry);
    exposed = new Set([...worker, ...webhook]);
    // Their own metrics: the worker's without the Node.js process metrics, the webhook server's mcs_cloudmap_webhook_*.
    own = new Set([
      ...(await createWorkerMetrics({ processMetrics: false }).registry.getMetricsAsJSON()).map((m) => m.name),
      ...(await createWebhookMetrics().registry.getMetricsAsJSON())
        .map((m) => m.name)
        .filter((n) => n.startsWith(`${METRIC_PREFIX}webhook_`)),
    ]);
  });

  const alertExprs = () =>
    ruleGroups().flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
  const panelExprs = () => [
    ...dashboardQueries().map((q) => ({ where: `panel "${q.panel}"`, expr: q.expr })),
    ...dashboardVariableQueries().map((q) => ({ where: 'dashboard variable', expr: q })),
  ];

  it("the registries hold the worker's and the webhook server's metrics (the check has names to check against)", () => {
    expect(exposed).to.include.keys(
      'mcs_cloudmap_leader',
      'mcs_cloudmap_webhook_request_duration_seconds_bucket',
      'mcs_cloudmap_process_cpu_seconds_total',
    );
    expect(own.size).to.be.greaterThan(20);
  });

  it('every alert reads metrics, and only registered mcs_cloudmap_* ones', () => {
    const exprs = alertExprs();
    expect(exprs.length).to.be.greaterThan(10);
    for (const { where, expr } of exprs) expect(metricNames(expr), where).to.not.have.lengthOf(0);
    expect(unknownNames(exprs, exposed)).to.deep.equal([]);
  });

  it('every dashboard query and variable reads metrics, and only registered mcs_cloudmap_* ones', () => {
    const exprs = panelExprs();
    expect(exprs.length).to.be.greaterThan(20);
    for (const { where, expr } of exprs) expect(metricNames(expr), where).to.not.have.lengthOf(0);
    expect(unknownNames(exprs, exposed)).to.deep.equal([]);
  });

  it('the check finds a misspelled metric, a deprecated name and a histogram read without its suffix (it can fail)', () => {
    const exprs = [
      { where: 'a', expr: 'sum(rate(mcs_cloudmap_cloudmap_call_total[5m]))' },
      { where: 'b', expr: `sum(rate(${DEPRECATED_PREFIX}requests_total[5m]))` },
      { where: 'c', expr: 'rate(mcs_cloudmap_reconcile_duration_seconds[5m])' },
      { where: 'd', expr: 'rate(mcs_cloudmap_reconcile_duration_seconds_bucket[5m])' },
    ];
    expect(unknownNames(exprs, exposed)).to.deep.equal([
      'a: mcs_cloudmap_cloudmap_call_total',
      'b: mcs_webhook_requests_total',
      'c: mcs_cloudmap_reconcile_duration_seconds',
    ]);
  });

  it('the dashboard has a panel for every metric of the worker and the webhook server', () => {
    const read = new Set(
      panelExprs()
        .flatMap(({ expr }) => metricNames(expr))
        .map((n) => n.replace(/_(bucket|sum|count)$/, '')),
    );
    expect([...own].filter((n) => !read.has(n))).to.deep.equal([]);
  });

  it('every alert has a for: duration, a severity, a summary and a description that names the section of the docs that says what to do', () => {
    const names = new Set<string>();
    for (const rule of ruleGroups().flatMap((g) => g.rules)) {
      expect(names.has(rule.alert), `${rule.alert} twice`).to.equal(false);
      names.add(rule.alert);
      expect(rule.for, rule.alert).to.match(/^\d+[smh]$/);
      expect(rule.labels?.severity, rule.alert).to.be.oneOf(['warning', 'critical']);
      expect(rule.annotations?.summary, rule.alert).to.be.a('string').and.not.equal('');
      const sections = [...(rule.annotations?.description ?? '').matchAll(/docs\/([a-z-]+\.md) "([^"]+)"/g)];
      expect(sections, `${rule.alert} names a section of the docs`).to.not.have.lengthOf(0);
      for (const [, file, section] of sections)
        expect(headings(file!), `${rule.alert}: ${file} "${section}"`).to.satisfy((h: string[]) =>
          h.some((t) => t.startsWith(section!)),
        );
    }
  });
});
