// The express application: /validate, /mutate and /convert (AdmissionReview and ConversionReview over JSON), plus
// /healthz, /readyz and /metrics. Anything that is not a well-formed review gets a 4xx with a metav1.Status saying what
// is wrong; a rule that throws becomes a denial that says so, never a crash.

import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../../observability/log.ts';
import { answerProbe, type ProbeOptions } from '../../runtime/health-server.ts';
import type { ValidationContext } from '../admission/validate.ts';
import { BodyBuffers } from './body-buffers.ts';
import { Slots } from './body-slots.ts';
import { readSized, type Pace } from './large-body.ts';
import type { RequestResult, WebhookMetrics, WebhookName } from './metrics.ts';
import {
  bodyErrorMessage,
  boundError,
  charsetOf,
  finishReview,
  readReview,
  statusAnswer,
  type Answer,
  type BodyJob,
  type BodyReply,
} from './review-answer.ts';
import { ThreadFailure, ThreadPool } from './review-pool.ts';

export interface AppOptions {
  validation: ValidationContext;
  metrics: WebhookMetrics;
  logger: Logger;
  /** True once the caches are synced and until shutdown starts. */
  ready: () => boolean;
  maxRequestBytes: number;
  /** The review worker thread's module and deadline; tests put a faulty one here. */
  reviewThread?: { entry: URL; deadlineMs: number };
}

/**
 * Bodies of at least this many bytes (or of unknown length) are scanned, parsed and answered in the review worker
 * thread, off the event loop (W6). Below it the main thread reads the costliest shape the bounds admit in about half a
 * millisecond (2 ms at 256 KiB, docs/reliability.md), and the reviews the apiserver usually sends (a few KiB) never
 * pay the round trip to the thread.
 */
export const THREAD_BODY_BYTES = 64 * 1024;
/** Bodies of at least this many bytes (or of unknown length) also take a large-body slot before they are read (W6). */
export const LARGE_BODY_BYTES = 256 * 1024;
/**
 * Large bodies read at once. Within the JSON bounds (review-answer.ts) a body at the default limit costs up to some
 * 100 MiB of heap while it is parsed and decided (docs/reliability.md); the one review worker thread parses one body
 * at a time, and one large body read at a time keeps the bytes waiting for it to one body too, so the process stays
 * within the Deployment's 512 Mi beside the main thread's 256 MiB heap. More large bodies wait their turn, in arrival
 * order, and reviews of ordinary size never wait.
 */
export const LARGE_BODY_SLOTS = 1;
/**
 * The pace of a body holding the large-body slot (W6). At least 512 KiB/s on average, judged from 2 s after its read
 * began, so a client that trickles an announced body gives up the slot within about 2 s instead of at the 30 s request
 * deadline. The apiserver writes a review as fast as the network takes it; a body at the 7 MiB default limit that could
 * not keep this pace would take 14 s, past the 5 s timeout of the shipped webhook configurations (30 s at most).
 * At most 6 MiB/s: the main thread decrypts every byte and the chunks drive its collections, so clients sending
 * maximum-size bodies back to back (about 45 MiB/s unbounded) took ordinary reviews' p99 from 2 to 11 ms; at 6 MiB/s it
 * stays under 5 ms (docs/reliability.md), a 7 MiB review is read in 1.2 s, and 16 of them queued for the slot are
 * read within the 30 s request deadline.
 */
export const LARGE_BODY_PACE: Pace = { bytesPerSecond: 512 * 1024, graceMs: 2_000, maxBytesPerSecond: 6 * 1024 * 1024 };
/** Longest rest of the review worker thread after a body (body-slots.ts); short against the apiserver's 5 s timeout. */
export const THREAD_MAX_REST_MS = 2_000;
/**
 * After each body the thread rests three times as long as it worked: back-to-back bodies then keep it to a quarter of a
 * core, half the Deployment's 500m CPU limit, which the main thread shares (a thread busy half the time would use all
 * of it, and CPU throttling would stall the event loop too). Measured in docs/reliability.md.
 */
export const THREAD_REST_PER_HELD = 3;
/**
 * How long the review worker thread may take over one body before it is stopped and replaced and the review answered
 * with an error, so the apiserver's failurePolicy applies: under the apiserver's 5 s call timeout, and several times
 * what a body at the limit takes on a loaded machine (W6).
 */
export const LARGE_BODY_DEADLINE_MS = 4_000;
/** The review worker's module, beside this one: `.ts` when run from source, `.js` in the image's dist/. */
const REVIEW_WORKER = new URL(
  `./review-worker${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`,
  import.meta.url,
);

/** Kinds named in metrics; anything else counts as `other` so a stray caller cannot grow the label set. */
const METRIC_KINDS = new Set(['ServiceExport', 'ServiceImport', 'ClusterProperty', 'Service', 'EndpointSlice']);

function status(res: Response, code: number, message: string): void {
  send(res, statusAnswer(code, message));
}

/** The answer's kind, operation and result, for the request metrics (timed). */
function record(res: Response, answer: Pick<Answer, 'kind' | 'operation' | 'result'>): void {
  Object.assign(res.locals, { kind: answer.kind, operation: answer.operation, result: answer.result });
}

function send(res: Response, answer: Answer): void {
  record(res, answer);
  res.status(answer.status).json(answer.body);
}

export interface WebhookApp {
  app: express.Express;
  /** Stops the review worker thread. */
  readonly close: () => Promise<void>;
}

export function createApp(options: AppOptions): WebhookApp {
  const { metrics, logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  const json = express.json({
    limit: options.maxRequestBytes,
    strict: false,
    type: () => true,
    verify: (_req, _res, body) => {
      const error = boundError(body);
      if (error !== undefined) throw Object.assign(new Error(error.message), { status: 400, type: error.type });
    },
  });
  // Large bodies stay bytes on the main thread: the review worker scans, decodes and parses them (W6).
  const raw = express.raw({ limit: options.maxRequestBytes, type: () => true });
  const threads = new ThreadPool<BodyJob, BodyReply>({
    // One thread: the heap of one parse at a time.
    entry: REVIEW_WORKER,
    deadlineMs: LARGE_BODY_DEADLINE_MS,
    ...options.reviewThread,
    size: 1,
    // No resourceLimits: with the Deployment's --max-old-space-size the process-wide flag prevails over them, and a
    // thread stopped at such a limit took the whole process down (Node v24.21.0). The thread's heap is bounded like the
    // main thread's was: the JSON bounds, and one large body at a time (docs/reliability.md).
    workerData: { writers: options.validation.writers },
  });
  const largeBodies = new Slots(LARGE_BODY_SLOTS);
  // One buffer per slot: a slot's next body is read only once its review is answered. A client that goes while its
  // body is in the thread frees the slot early, and the next body then gets memory of its own.
  const bodyBuffers = new BodyBuffers(options.maxRequestBytes, LARGE_BODY_SLOTS);
  // The thread's turns: one body at a time, then a rest (W6).
  const threadTurns = new Slots(1, THREAD_MAX_REST_MS, THREAD_REST_PER_HELD);
  // Before the body is read: one for the thread is marked, a large one waits for a slot, held until its response is
  // done or its client goes (W6). A Content-Length over the limit is refused by the body parser from the header alone.
  const bounded = (req: Request, res: Response, next: NextFunction) => {
    const length = Number(req.get('content-length'));
    if (length > options.maxRequestBytes) return next();
    if (!(length < THREAD_BODY_BYTES)) res.locals.threaded = true;
    if (length < LARGE_BODY_BYTES) return next();
    void largeBodies.acquire().then((release) => {
      if (req.socket.destroyed) return release();
      res.once('close', release);
      next();
    });
  };
  // A large body of known length and no Content-Encoding is read into one buffer; others through body-parser.
  const large = (req: Request, res: Response, next: NextFunction) => {
    const length = Number(req.get('content-length'));
    if (!Number.isSafeInteger(length) || (req.get('content-encoding') ?? 'identity').toLowerCase() !== 'identity')
      return raw(req, res, next);
    const slot = length >= LARGE_BODY_BYTES;
    const into = slot ? bodyBuffers.take(length) : Buffer.allocUnsafeSlow(length);
    readSized(req, into, slot ? LARGE_BODY_PACE : undefined).then(
      (bytes) => {
        req.body = bytes;
        next();
      },
      (err: unknown) => {
        bodyBuffers.give(into);
        next(err);
      },
    );
  };
  const body = (req: Request, res: Response, next: NextFunction) =>
    (res.locals.threaded === true ? large : json)(req, res, next);
  const requireJson = (req: Request, res: Response, next: NextFunction) => {
    if (!req.is('application/json'))
      return status(res, 415, `Content-Type must be application/json, got "${req.get('content-type') ?? '(none)'}"`);
    next();
  };
  const timed = (webhook: WebhookName) => (req: Request, res: Response, next: NextFunction) => {
    const start = performance.now();
    res.locals.webhook = webhook;
    res.on('finish', () => {
      const {
        kind = '',
        operation = '',
        result = 'invalid',
      } = res.locals as { kind?: string; operation?: string; result?: RequestResult };
      metrics.observe(
        webhook,
        METRIC_KINDS.has(kind) ? kind : kind === '' ? '' : 'other',
        operation,
        result,
        (performance.now() - start) / 1000,
      );
    });
    next();
  };

  const log = (answer: Pick<Answer, 'logs'>) => {
    for (const line of answer.logs) logger[line.level](line.fields, line.msg);
  };
  const respond = (res: Response, answer: Answer) => {
    log(answer);
    send(res, answer);
  };
  // A large body moves to the review worker; what comes back is the answer's bytes or a validation's small lookup.
  const answerLarge = async (webhook: WebhookName, req: Request, res: Response, bytes: Buffer) => {
    req.body = undefined;
    // A shared buffer is read in place; memory of its own moves (a slice of a larger one is copied first).
    const shared = bytes.buffer instanceof SharedArrayBuffer;
    const owned =
      shared || (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) ? bytes : Buffer.from(bytes);
    const job: BodyJob = {
      webhook,
      charset: charsetOf(req.get('content-type')),
      body: new Uint8Array(owned.buffer, owned.byteOffset, owned.byteLength),
    };
    const length = job.body.byteLength;
    const release = await threadTurns.acquire();
    // A client gone while the body waited (the apiserver's timeout) costs the thread nothing.
    if (req.socket.destroyed) {
      bodyBuffers.give(bytes);
      return release();
    }
    let reply: BodyReply;
    try {
      reply = await threads.run(job, shared ? [] : [job.body.buffer as ArrayBuffer]);
    } catch (err) {
      // A stopped thread may still be reading the body as it goes: its buffer is not given back.
      if (!(err instanceof ThreadFailure)) throw err;
      logger.error(
        { event: 'review-thread-failed', webhook, reason: err.reason, bytes: length, err: err.message },
        'review worker thread failed; replaced',
      );
      return status(
        res,
        500,
        `mcs-cloudmap could not answer this ${webhook} review of ${length} bytes: ${err.message} (W6); the webhook's failurePolicy applies`,
      );
    } finally {
      release();
    }
    bodyBuffers.give(bytes);
    if ('pending' in reply) return respond(res, finishReview(reply.pending, options.validation));
    log(reply.answer);
    record(res, reply.answer);
    res
      .status(reply.answer.status)
      .type('application/json; charset=utf-8')
      .send(Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength));
  };
  const review = (webhook: WebhookName) => (req: Request, res: Response, next: NextFunction) => {
    if (res.locals.threaded === true && Buffer.isBuffer(req.body))
      return void answerLarge(webhook, req, res, req.body).catch(next);
    const stage = readReview(webhook, req.body, options.validation.writers);
    respond(res, 'pending' in stage ? finishReview(stage.pending, options.validation) : stage.answer);
  };

  for (const webhook of ['validate', 'mutate', 'convert'] as const)
    app.post(`/${webhook}`, timed(webhook), requireJson, bounded, body, review(webhook));
  for (const path of ['/validate', '/mutate', '/convert']) {
    app.all(path, (req, res) => status(res, 405, `${req.method} is not allowed on ${path}: POST a review`));
  }

  const probes = probeOptions(options);
  app.get(['/healthz', '/readyz', '/metrics'], (req, res, next) => {
    answerProbe(req, res, probes).catch(next);
  });
  app.use((req, res) =>
    status(res, 404, `no route ${req.method} ${req.path}: use POST /validate, /mutate or /convert`),
  );
  app.use(
    (
      err: { status?: number; statusCode?: number; type?: string; message?: string },
      req: Request,
      res: Response,
      _next: NextFunction,
    ) => {
      const code = err.status ?? err.statusCode ?? 500;
      if (err.type === 'request.too.slow') {
        // The rest of the body is not waited for: the connection closes once the answer is written.
        logger.warn(
          { event: 'large-body-too-slow', path: req.path, err: err.message },
          'large body arrived too slowly; connection closed and the large-body slot freed',
        );
        res.set('Connection', 'close');
      }
      if (code >= 400 && code < 500) return status(res, code, bodyErrorMessage(err));
      if (err.type !== undefined) return status(res, 400, bodyErrorMessage(err));
      logger.error({ event: 'http-error', path: req.path, err: err.message }, 'unexpected error');
      status(res, 500, `internal error: ${err.message}`);
    },
  );
  return { app, close: () => threads.close() };
}

/** What /readyz answers while not ready. */
export const NOT_READY = 'not ready: informer caches not synced yet, or shutting down';

/** /healthz, /readyz and /metrics as src/runtime/health-server.ts answers them, on the HTTPS app as on --metrics-port. */
export function probeOptions(options: Pick<AppOptions, 'metrics' | 'ready'>): ProbeOptions {
  return { registry: options.metrics.registry, ready: () => options.ready() || NOT_READY };
}
