// One review from its body to its answer, as plain functions with no HTTP and no logger, so the main thread (bodies of
// ordinary size) and the review worker thread (large bodies, W6) run the same code: the worker reads the body and
// answers mutation and conversion whole; of a validation it settles what the request alone decides and leaves a small
// lookup (../admission/validate.ts) that the main thread decides against its caches.

import { deny, type Decision } from '../admission/decision.ts';
import { mutateAdmission } from '../admission/mutate.ts';
import { admissionResponse, parseAdmissionReview, type AdmissionRequest } from '../admission/review.ts';
import {
  decideLookup,
  projectLookup,
  readValidation,
  requestRef,
  type Lookup,
  type Reading,
  type ValidationContext,
} from '../admission/validate.ts';
import type { WriterIdentities } from '../admission/worker-only-writes.ts';
import { convertReview, parseConversionReview } from '../conversion/review.ts';
import { exceededBound } from './json-depth.ts';
import type { RequestResult, WebhookName } from './metrics.ts';

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
const BOUNDS = { depth: MAX_JSON_DEPTH, containers: MAX_JSON_CONTAINERS, keys: MAX_JSON_KEYS, values: MAX_JSON_VALUES };

/** A body error as body-parser reports it (type) or as the bound scan does. */
export interface BodyError {
  type?: string;
  message?: string;
  limit?: number;
  bytesPerSecond?: number;
}

/** The bound scan's verdict as a body error, or undefined when `body` is within the bounds (W5, W6). */
export function boundError(body: Uint8Array): BodyError | undefined {
  const exceeded = exceededBound(body, BOUNDS);
  if (exceeded === undefined) return undefined;
  return exceeded === 'depth'
    ? { type: 'entity.too.deep', message: 'too deep' }
    : { type: 'entity.too.many', message: `too many ${exceeded}` };
}

/** What body errors mean, in words a caller can act on. */
export function bodyErrorMessage(err: BodyError): string {
  switch (err.type) {
    case 'entity.too.large':
      return `request body is larger than the limit of ${err.limit} bytes (--max-request-bytes)`;
    case 'entity.parse.failed':
      return `request body is not valid JSON: ${err.message}`;
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return `unsupported request body encoding: ${err.message}; send UTF-8 JSON`;
    case 'entity.too.deep':
      return `request body nests JSON deeper than ${MAX_JSON_DEPTH} levels; send a review of a Kubernetes object`;
    case 'entity.too.many':
      return `request body holds more than ${MAX_JSON_CONTAINERS} JSON objects and arrays, ${MAX_JSON_KEYS} keys or ${MAX_JSON_VALUES} values; send a review of a Kubernetes object`;
    case 'request.aborted':
      return 'the client aborted the request before the body was complete';
    case 'request.too.slow':
      return `request body arrived too slowly: ${err.message}; a large body holds the one large-body slot while it is read and must arrive at ${err.bytesPerSecond} bytes/s or faster, as the apiserver sends it (W6)`;
    default:
      return `cannot read the request body: ${err.message}`;
  }
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg: string;
}

/** An HTTP answer with what metrics and logs say of it. */
export interface Answer {
  status: number;
  body: unknown;
  kind: string;
  operation: string;
  result: RequestResult;
  logs: LogLine[];
}

/** The request as the answer and the log lines name it. */
export interface RequestSummary {
  uid: string;
  kind: string;
  operation: string;
  ref: string;
  username: string;
  dryRun: boolean;
}

/** A validation read without the caches: the main thread finishes it (finishReview). Small plain data. */
export interface PendingValidation {
  apiVersion: string;
  request: RequestSummary;
  lookup: Lookup;
}

export type Stage = { answer: Answer } | { pending: PendingValidation };

export function statusAnswer(status: number, message: string): Answer {
  return {
    status,
    body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: status, message },
    kind: '',
    operation: '',
    result: 'invalid',
    logs: [],
  };
}

function summary(request: AdmissionRequest): RequestSummary {
  return {
    uid: request.uid,
    kind: request.kind.kind,
    operation: request.operation,
    ref: requestRef(request),
    username: request.username,
    dryRun: request.dryRun,
  };
}

/** Runs the rules; one that throws becomes a denial that says so, with its stack logged. */
function guarded(webhook: WebhookName, request: RequestSummary, logs: LogLine[], read: () => Reading): Reading {
  try {
    return read();
  } catch (err) {
    logs.push({
      level: 'error',
      fields: {
        event: 'rule-error',
        webhook,
        uid: request.uid,
        kind: request.kind,
        object: request.ref,
        err: (err as Error).stack,
      },
      msg: 'admission rule threw',
    });
    return {
      decision: deny(`mcs-cloudmap could not evaluate ${request.kind} ${request.ref}: ${(err as Error).message}`, 500),
    };
  }
}

function admissionAnswer(
  webhook: WebhookName,
  apiVersion: string,
  request: RequestSummary,
  logs: LogLine[],
  decision: Decision,
): Answer {
  const result: RequestResult = !decision.allowed ? 'denied' : decision.warnings.length > 0 ? 'warned' : 'allowed';
  logs.push({
    level: result === 'allowed' ? 'debug' : 'info',
    fields: {
      event: 'admission',
      webhook,
      uid: request.uid,
      kind: request.kind,
      operation: request.operation,
      object: request.ref,
      user: request.username,
      dryRun: request.dryRun,
      result,
      ...(decision.allowed ? {} : { message: decision.message }),
      ...(decision.warnings.length > 0 ? { warnings: decision.warnings } : {}),
      ...(decision.patch.length > 0 ? { patch: decision.patch } : {}),
    },
    msg: `${webhook} ${result}`,
  });
  return {
    status: 200,
    body: admissionResponse(apiVersion, request.uid, decision),
    kind: request.kind,
    operation: request.operation,
    result,
    logs,
  };
}

/**
 * Everything a parsed body decides without the caches: the whole answer of a mutation or conversion, or of a
 * validation the request alone settles; otherwise the lookup left for finishReview.
 */
export function readReview(webhook: WebhookName, body: unknown, writers: WriterIdentities): Stage {
  if (webhook === 'convert') {
    const parsed = parseConversionReview(body);
    if (!parsed.ok) return { answer: statusAnswer(400, parsed.message) };
    const outcome = convertReview(parsed.apiVersion, parsed.request);
    const logs: LogLine[] = outcome.succeeded
      ? []
      : [
          {
            level: 'warn',
            msg: 'conversion failed',
            fields: {
              event: 'conversion-failed',
              uid: parsed.request.uid,
              desiredAPIVersion: parsed.request.desiredAPIVersion,
              response: outcome.body.response,
            },
          },
        ];
    return {
      answer: {
        status: 200,
        body: outcome.body,
        kind: outcome.kind,
        operation: 'CONVERT',
        result: outcome.succeeded ? 'converted' : 'failed',
        logs,
      },
    };
  }
  const parsed = parseAdmissionReview(body);
  if (!parsed.ok) return { answer: statusAnswer(400, parsed.message) };
  const request = summary(parsed.request);
  const logs: LogLine[] = [];
  const reading = guarded(webhook, request, logs, () =>
    webhook === 'mutate' ? { decision: mutateAdmission(parsed.request) } : readValidation(parsed.request, writers),
  );
  if ('lookup' in reading) return { pending: { apiVersion: parsed.apiVersion, request, lookup: reading.lookup } };
  return { answer: admissionAnswer(webhook, parsed.apiVersion, request, logs, reading.decision) };
}

/** The rest of a validation, against the caches. */
export function finishReview(pending: PendingValidation, ctx: ValidationContext): Answer {
  const logs: LogLine[] = [];
  const reading = guarded('validate', pending.request, logs, () => ({ decision: decideLookup(pending.lookup, ctx) }));
  return admissionAnswer(
    'validate',
    pending.apiVersion,
    pending.request,
    logs,
    (reading as { decision: Decision }).decision,
  );
}

/** A large body as the main thread hands it to the review worker (the bytes are transferred, not copied). */
export interface BodyJob {
  webhook: WebhookName;
  /** The Content-Type's charset, lowercased; '' when none. */
  charset: string;
  body: Uint8Array;
}

/** The worker's reply: the answer with its body as JSON bytes, or a validation for the main thread to finish. */
export type BodyReply = { answer: Omit<Answer, 'body'>; bytes: Uint8Array } | { pending: PendingValidation };

/** The charset parameter of a Content-Type, lowercased; '' when none. */
export function charsetOf(contentType: string | undefined): string {
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  return (m?.[1] ?? m?.[2] ?? '').toLowerCase();
}

function parseBody(job: BodyJob): { ok: true; value: unknown } | { ok: false; answer: Answer } {
  const refuse = (status: number, err: BodyError) => ({
    ok: false as const,
    answer: statusAnswer(status, bodyErrorMessage(err)),
  });
  // As body-parser's JSON parser: UTF-8 unless a UTF charset is named; an empty body reads as {}.
  const charset = job.charset || 'utf-8';
  if (!charset.startsWith('utf-'))
    return refuse(415, { type: 'charset.unsupported', message: `unsupported charset "${charset.toUpperCase()}"` });
  const bound = boundError(job.body);
  if (bound !== undefined) return refuse(400, bound);
  if (job.body.length === 0) return { ok: true, value: {} };
  let text: string;
  try {
    text = new TextDecoder(charset).decode(job.body);
  } catch {
    return refuse(415, { type: 'encoding.unsupported', message: `unsupported charset "${charset.toUpperCase()}"` });
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return refuse(400, { type: 'entity.parse.failed', message: (err as Error).message });
  }
}

/** What the review worker does with one large body: read it, then answer it or leave the validation's lookup (W6). */
export function answerBody(job: BodyJob, writers: WriterIdentities): BodyReply {
  const parsed = parseBody(job);
  const stage = parsed.ok ? readReview(job.webhook, parsed.value, writers) : { answer: parsed.answer };
  if ('pending' in stage) return { pending: { ...stage.pending, lookup: projectLookup(stage.pending.lookup) } };
  const { body, ...answer } = stage.answer;
  // A buffer of its own (Buffer.from may hand out a slice of Node's shared pool, which cannot be transferred).
  return { answer, bytes: new TextEncoder().encode(JSON.stringify(body)) };
}
