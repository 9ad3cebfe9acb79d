// What the monitoring component (kustomize/components/monitoring) asks of Prometheus: the alerting rules and the
// dashboard's queries, read from the files that kustomize and the chart ship, and the metric names each one reads.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const COMPONENT = new URL('../../kustomize/components/monitoring/', import.meta.url);

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

/** The PrometheusRule's groups, as Prometheus loads them. */
export function ruleGroups(): RuleGroup[] {
  const rule = parse(readFileSync(new URL('prometheus-rule.yaml', COMPONENT), 'utf8')) as {
    spec: { groups: RuleGroup[] };
  };
  return rule.spec.groups;
}

export interface DashboardQuery {
  panel: string;
  expr: string;
}

interface DashboardJson {
  panels: { title: string; targets?: { expr: string }[] }[];
  templating: { list: { name: string; type: string; query: unknown }[] };
}

function dashboardJson(): DashboardJson {
  return JSON.parse(readFileSync(new URL('mcs-cloudmap-dashboard.json', COMPONENT), 'utf8')) as DashboardJson;
}

/** Every PromQL query of the dashboard's panels. */
export function dashboardQueries(): DashboardQuery[] {
  return dashboardJson().panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

/** The queries of the dashboard's variables (Grafana's label_values(), not PromQL). */
export function dashboardVariableQueries(): string[] {
  return dashboardJson()
    .templating.list.filter((v) => v.type === 'query')
    .map((v) => v.query as string);
}

/**
 * A dashboard query as Prometheus would get it from Grafana: Grafana's interval variables ($__rate_interval, ...) given
 * a duration; the other variables sit inside label matchers' strings and stay as they are.
 */
export function asPromql(dashboardExpr: string): string {
  return dashboardExpr.replace(/\$__\w+/g, '5m');
}

/** The project's metric names (mcs_*, the old mcs_webhook_* ones too) an expression reads. */
export function metricNames(expr: string): string[] {
  return [...new Set(expr.match(/\bmcs_[a-z0-9_]+/g) ?? [])];
}
