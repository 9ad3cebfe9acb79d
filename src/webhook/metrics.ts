// Prometheus metrics of the webhook server: requests by webhook, kind, operation and result, and their latency.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type WebhookName = 'validate' | 'mutate' | 'convert';
/** allowed, warned (allowed with warnings), denied, converted, failed (conversion), invalid (4xx: not a review). */
export type RequestResult = 'allowed' | 'warned' | 'denied' | 'converted' | 'failed' | 'invalid';

export interface WebhookMetrics {
  registry: Registry;
  observe(webhook: WebhookName, kind: string, operation: string, result: RequestResult, seconds: number): void;
  setCertificateExpiry(unixSeconds: number): void;
}

export function createWebhookMetrics(): WebhookMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'mcs_webhook_' });
  const requests = new Counter({
    name: 'mcs_webhook_requests_total',
    help: 'Admission and conversion requests by webhook, kind, operation and result.',
    labelNames: ['webhook', 'kind', 'operation', 'result'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'mcs_webhook_request_duration_seconds',
    help: 'Time from request body received to response written, by webhook.',
    labelNames: ['webhook'] as const,
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  const certExpiry = new Gauge({
    name: 'mcs_webhook_certificate_expiry_timestamp_seconds',
    help: 'notAfter of the serving certificate in use.',
    registers: [registry],
  });
  return {
    registry,
    observe(webhook, kind, operation, result, seconds) {
      requests.inc({ webhook, kind: kind || 'unknown', operation: operation || 'unknown', result });
      latency.observe({ webhook }, seconds);
    },
    setCertificateExpiry: (unixSeconds) => certExpiry.set(unixSeconds),
  };
}
