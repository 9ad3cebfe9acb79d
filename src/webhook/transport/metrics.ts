// Prometheus metrics of the webhook server: requests by webhook, kind, operation and result, and their latency, named
// mcs_cloudmap_webhook_* as every metric of the project is mcs_cloudmap_* (the old mcs_webhook_* names too, until 0.3.0).

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { METRIC_PREFIX } from '../../observability/metric-names.ts';

export type WebhookName = 'validate' | 'mutate' | 'convert';
/** allowed, warned (allowed with warnings), denied, converted, failed (conversion), invalid (4xx: not a review). */
export type RequestResult = 'allowed' | 'warned' | 'denied' | 'converted' | 'failed' | 'invalid';

export interface WebhookMetrics {
  registry: Registry;
  observe(webhook: WebhookName, kind: string, operation: string, result: RequestResult, seconds: number): void;
  setCertificateExpiry(unixSeconds: number): void;
}

/** The names before one scheme (src/observability/metric-names.ts): still exported beside the new ones until 0.3.0. */
export const DEPRECATED_PREFIX = 'mcs_webhook_';
const PREFIX = `${METRIC_PREFIX}webhook_`;

/** Each metric under its name and under its deprecated one, updated together. */
function named<T>(make: (prefix: string, help: (text: string) => string) => T): T[] {
  return [
    make(PREFIX, (text) => text),
    make(DEPRECATED_PREFIX, (text) => `${text} Deprecated: use ${PREFIX}*; removed in 0.3.0.`),
  ];
}

export function createWebhookMetrics(): WebhookMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  collectDefaultMetrics({ register: registry, prefix: DEPRECATED_PREFIX });
  const requests = named(
    (prefix, help) =>
      new Counter({
        name: `${prefix}requests_total`,
        help: help('Admission and conversion requests by webhook, kind, operation and result.'),
        labelNames: ['webhook', 'kind', 'operation', 'result'] as const,
        registers: [registry],
      }),
  );
  const latency = named(
    (prefix, help) =>
      new Histogram({
        name: `${prefix}request_duration_seconds`,
        help: help('Time from request body received to response written, by webhook.'),
        labelNames: ['webhook'] as const,
        buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
        registers: [registry],
      }),
  );
  const certExpiry = named(
    (prefix, help) =>
      new Gauge({
        name: `${prefix}certificate_expiry_timestamp_seconds`,
        help: help('notAfter of the serving certificate in use.'),
        registers: [registry],
      }),
  );
  return {
    registry,
    observe(webhook, kind, operation, result, seconds) {
      for (const c of requests) c.inc({ webhook, kind: kind || 'unknown', operation: operation || 'unknown', result });
      for (const h of latency) h.observe({ webhook }, seconds);
    },
    setCertificateExpiry: (unixSeconds) => {
      for (const g of certExpiry) g.set(unixSeconds);
    },
  };
}
