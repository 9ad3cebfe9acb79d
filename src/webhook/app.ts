// The express application: /validate, /mutate and /convert (AdmissionReview and ConversionReview over JSON), plus
// /healthz, /readyz and /metrics. Anything that is not a well-formed review gets a 4xx with a metav1.Status saying what
// is wrong; a rule that throws becomes a denial that says so, never a crash.

import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../observability/log.ts';
import { answerProbe, type ProbeOptions } from '../runtime/health-server.ts';
import { deny, type Decision } from './admission/decision.ts';
import { mutateAdmission } from './admission/mutate.ts';
import { admissionResponse, parseAdmissionReview, type AdmissionRequest } from './admission/review.ts';
import { requestRef, validateAdmission, type ValidationContext } from './admission/validate.ts';
import { convertReview, parseConversionReview } from './conversion/review.ts';
import { Slots } from './body-slots.ts';
import { exceededBound } from './json-depth.ts';
import type { RequestResult, WebhookMetrics, WebhookName } from './metrics.ts';

export interface AppOptions {
  validation: ValidationContext;
  metrics: WebhookMetrics;
  logger: Logger;
  /** True once the caches are synced and until shutdown starts. */
  ready: () => boolean;
  maxRequestBytes: number;
}

/**
 * Deepest JSON nesting accepted. A review around a Kubernetes object (managedFields included) stays within a few dozen
 * levels; deeper bodies are refused before parsing, as everything after JSON.parse recurses over them (W5).
 */
export const MAX_JSON_DEPTH = 100;
/**
 * Most objects and arrays, keys, and values (commas) in one body. The largest review we are sent (an EndpointSlice of
 * 1,000 endpoints, old and new, with managedFields) holds a few tens of thousands of each; a hostile body of the same
 * size made of `{}`, distinct keys or short strings holds millions and costs 10 to 60 times its size in heap and
 * seconds of parsing, so it is refused before parsing (W6).
 */
export const MAX_JSON_CONTAINERS = 100_000;
export const MAX_JSON_KEYS = 100_000;
export const MAX_JSON_VALUES = 250_000;
/** Bodies of at least this many bytes (or of unknown length) take a large-body slot before they are read (W6). */
export const LARGE_BODY_BYTES = 256 * 1024;
/**
 * Large bodies read and parsed at once. Within the bounds above a body at the default limit still costs up to some
 * 100 MiB of heap while it is parsed and decided (docs/reliability.md), so one at a time keeps the server within the
 * Deployment's 256 MiB heap and 512 Mi with its caches; more large bodies wait their turn, in arrival order, and
 * reviews of ordinary size never wait.
 */
export const LARGE_BODY_SLOTS = 1;
/** Longest rest of the large-body slot after use (body-slots.ts); short against the apiserver's 5 s call timeout. */
export const LARGE_BODY_MAX_REST_MS = 2_000;

/** Kinds named in metrics; anything else counts as `other` so a stray caller cannot grow the label set. */
const METRIC_KINDS = new Set(['ServiceExport', 'ServiceImport', 'ClusterProperty', 'Service', 'EndpointSlice']);

function status(res: Response, code: number, message: string): void {
  res.status(code).json({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message });
}

/** What body-parser's errors mean, in words a caller can act on. */
function bodyErrorMessage(err: { type?: string; message?: string; limit?: number }): string {
  switch (err.type) {
    case 'entity.too.large': return `request body is larger than the limit of ${err.limit} bytes (--max-request-bytes)`;
    case 'entity.parse.failed': return `request body is not valid JSON: ${err.message}`;
    case 'encoding.unsupported':
    case 'charset.unsupported': return `unsupported request body encoding: ${err.message}; send UTF-8 JSON`;
    case 'entity.too.deep': return `request body nests JSON deeper than ${MAX_JSON_DEPTH} levels; send a review of a Kubernetes object`;
    case 'entity.too.many': return `request body holds more than ${MAX_JSON_CONTAINERS} JSON objects and arrays, ${MAX_JSON_KEYS} keys or ${MAX_JSON_VALUES} values; send a review of a Kubernetes object`;
    case 'request.aborted': return 'the client aborted the request before the body was complete';
    default: return `cannot read the request body: ${err.message}`;
  }
}

export function createApp(options: AppOptions): express.Express {
  const { metrics, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  const json = express.json({
    limit: options.maxRequestBytes, strict: false, type: () => true,
    verify: (_req, _res, body) => {
      const exceeded = exceededBound(body, { depth: MAX_JSON_DEPTH, containers: MAX_JSON_CONTAINERS, keys: MAX_JSON_KEYS, values: MAX_JSON_VALUES });
      if (exceeded === 'depth') throw Object.assign(new Error('too deep'), { status: 400, type: 'entity.too.deep' });
      if (exceeded !== undefined) throw Object.assign(new Error(`too many ${exceeded}`), { status: 400, type: 'entity.too.many' });
    },
  });
  const largeBodies = new Slots(LARGE_BODY_SLOTS, LARGE_BODY_MAX_REST_MS);
  // Before the body is read: a large one waits for a slot, held until its response is done or its client goes (W6).
  // A Content-Length over the limit is refused by the body parser from the header alone, so it never takes a slot.
  const bounded = (req: Request, res: Response, next: NextFunction) => {
    const length = Number(req.get('content-length'));
    if (length < LARGE_BODY_BYTES || length > options.maxRequestBytes) return next();
    void largeBodies.acquire().then((release) => {
      if (req.socket.destroyed) return release();
      res.once('close', release);
      next();
    });
  };
  const requireJson = (req: Request, res: Response, next: NextFunction) => {
    if (!req.is('application/json')) return status(res, 415, `Content-Type must be application/json, got "${req.get('content-type') ?? '(none)'}"`);
    next();
  };
  const timed = (webhook: WebhookName) => (req: Request, res: Response, next: NextFunction) => {
    const start = performance.now();
    res.locals.webhook = webhook;
    res.on('finish', () => {
      const { kind = '', operation = '', result = 'invalid' } = res.locals as { kind?: string; operation?: string; result?: RequestResult };
      metrics.observe(webhook, METRIC_KINDS.has(kind) ? kind : kind === '' ? '' : 'other', operation, result, (performance.now() - start) / 1000);
    });
    next();
  };

  const admission = (webhook: 'validate' | 'mutate', decide: (request: AdmissionRequest) => Decision) => (req: Request, res: Response) => {
    const parsed = parseAdmissionReview(req.body);
    if (!parsed.ok) return status(res, 400, parsed.message);
    const request = parsed.request;
    let decision: Decision;
    try {
      decision = decide(request);
    } catch (err) {
      logger.error({ event: 'rule-error', webhook, uid: request.uid, kind: request.kind.kind, object: requestRef(request), err: (err as Error).stack }, 'admission rule threw');
      decision = deny(`mcs-cloudmap could not evaluate ${request.kind.kind} ${requestRef(request)}: ${(err as Error).message}`, 500);
    }
    const result: RequestResult = !decision.allowed ? 'denied' : decision.warnings.length > 0 ? 'warned' : 'allowed';
    Object.assign(res.locals, { kind: request.kind.kind, operation: request.operation, result });
    const level = result === 'allowed' ? 'debug' : 'info';
    logger[level]({
      event: 'admission', webhook, uid: request.uid, kind: request.kind.kind, operation: request.operation, object: requestRef(request),
      user: request.username, dryRun: request.dryRun, result, ...(decision.allowed ? {} : { message: decision.message }),
      ...(decision.warnings.length > 0 ? { warnings: decision.warnings } : {}), ...(decision.patch.length > 0 ? { patch: decision.patch } : {}),
    }, `${webhook} ${result}`);
    res.json(admissionResponse(parsed.apiVersion, request.uid, decision));
  };

  app.post('/validate', timed('validate'), requireJson, bounded, json, admission('validate', (r) => validateAdmission(r, options.validation)));
  app.post('/mutate', timed('mutate'), requireJson, bounded, json, admission('mutate', mutateAdmission));
  app.post('/convert', timed('convert'), requireJson, bounded, json, (req: Request, res: Response) => {
    const parsed = parseConversionReview(req.body);
    if (!parsed.ok) return status(res, 400, parsed.message);
    const outcome = convertReview(parsed.apiVersion, parsed.request);
    Object.assign(res.locals, { kind: outcome.kind, operation: 'CONVERT', result: outcome.succeeded ? 'converted' : 'failed' });
    if (!outcome.succeeded) {
      logger.warn({ event: 'conversion-failed', uid: parsed.request.uid, desiredAPIVersion: parsed.request.desiredAPIVersion, response: outcome.body.response }, 'conversion failed');
    }
    res.json(outcome.body);
  });
  for (const path of ['/validate', '/mutate', '/convert']) {
    app.all(path, (req, res) => status(res, 405, `${req.method} is not allowed on ${path}: POST a review`));
  }

  const probes = probeOptions(options);
  app.get(['/healthz', '/readyz', '/metrics'], (req, res, next) => { answerProbe(req, res, probes).catch(next); });
  app.use((req, res) => status(res, 404, `no route ${req.method} ${req.path}: use POST /validate, /mutate or /convert`));
  app.use((err: { status?: number; statusCode?: number; type?: string; message?: string }, req: Request, res: Response, _next: NextFunction) => {
    const code = err.status ?? err.statusCode ?? 500;
    if (code >= 400 && code < 500) return status(res, code, bodyErrorMessage(err));
    if (err.type !== undefined) return status(res, 400, bodyErrorMessage(err));
    logger.error({ event: 'http-error', path: req.path, err: err.message }, 'unexpected error');
    status(res, 500, `internal error: ${err.message}`);
  });
  return app;
}

/** What /readyz answers while not ready. */
export const NOT_READY = 'not ready: informer caches not synced yet, or shutting down';

/** /healthz, /readyz and /metrics as src/runtime/health-server.ts answers them, on the HTTPS app as on --metrics-port. */
export function probeOptions(options: Pick<AppOptions, 'metrics' | 'ready'>): ProbeOptions {
  return { registry: options.metrics.registry, ready: () => options.ready() || NOT_READY };
}
