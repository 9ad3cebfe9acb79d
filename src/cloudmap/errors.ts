// Errors of the Cloud Map adapter: how SDK failures are classified (throttle, transient, final) and the error type
// callers see, which always says which call failed, for which namespace/service/instance, and whether it is retried.

/** What a Cloud Map call was about; every field is optional, the error message names those present. */
export interface CallContext {
  readonly namespace?: string;
  readonly namespaceId?: string;
  readonly service?: string;
  readonly serviceId?: string;
  readonly instanceId?: string;
  readonly operationId?: string;
}

export type ErrorClass = 'throttle' | 'transient' | 'timeout' | 'final';

/** Error codes AWS services use for request-rate throttling. */
const THROTTLE_CODES = new Set([
  'ThrottlingException',
  'Throttling',
  'ThrottledException',
  'RequestLimitExceeded',
  'TooManyRequestsException',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ProvisionedThroughputExceededException',
]);

const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'RequestTimeout',
  'RequestTimeoutException',
  'InternalFailure',
  'ServiceUnavailable',
]);

/**
 * No (complete) answer in time on our side: the SDK's connection or idle-socket timeout, the caller's per-attempt
 * deadline (CallTimeoutError), or the kernel's connect timeout. Retried like transient failures, counted apart.
 */
const TIMEOUT_CODES = new Set(['TimeoutError', 'ETIMEDOUT']);

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $retryable?: { throttling?: unknown };
}

function shape(err: unknown): SdkErrorShape {
  return typeof err === 'object' && err !== null ? err : {};
}

/** The AWS error code (`ServiceNotFound`, `ThrottlingException`, ...) or the Node.js network error code. */
export function errorCode(err: unknown): string | undefined {
  const e = shape(err);
  if (typeof e.code === 'string') return e.code;
  if (typeof e.name === 'string' && e.name !== 'Error') return e.name;
  return undefined;
}

export function httpStatus(err: unknown): number | undefined {
  const status = shape(err).$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

/**
 * Throttles slow the API's rate down and are retried; transient failures (network, 5xx) and timeouts are retried
 * without slowing down; everything else (not found, invalid input, access denied) is final for this attempt.
 */
export function classifyError(err: unknown): ErrorClass {
  const e = shape(err);
  const code = errorCode(err);
  const status = httpStatus(err);
  if ((code && THROTTLE_CODES.has(code)) || status === 429 || e.$retryable?.throttling === true) return 'throttle';
  if (code && TIMEOUT_CODES.has(code)) return 'timeout';
  if ((code && TRANSIENT_CODES.has(code)) || (status !== undefined && status >= 500)) return 'transient';
  return 'final';
}

export function describeContext(context: CallContext): string {
  const parts: string[] = [];
  if (context.namespace !== undefined) parts.push(`namespace "${context.namespace}"`);
  if (context.namespaceId !== undefined) parts.push(`namespace id ${context.namespaceId}`);
  if (context.service !== undefined) parts.push(`service "${context.service}"`);
  if (context.serviceId !== undefined) parts.push(`service id ${context.serviceId}`);
  if (context.instanceId !== undefined) parts.push(`instance "${context.instanceId}"`);
  if (context.operationId !== undefined) parts.push(`operation ${context.operationId}`);
  return parts.length ? parts.join(', ') : 'no resource';
}

function messageOf(err: unknown): string {
  return err instanceof Error && err.message && err.message !== 'UnknownError' ? err.message : '';
}

/** A Cloud Map call that failed after the adapter's own retries. */
export class CloudMapCallError extends Error {
  override name = 'CloudMapCallError';
  readonly api: string;
  readonly context: CallContext;
  /** AWS or network error code of the last attempt. */
  readonly code: string | undefined;
  readonly errorClass: ErrorClass;
  readonly attempts: number;

  constructor(api: string, context: CallContext, cause: unknown, attempts: number) {
    const errorClass = classifyError(cause);
    const code = errorCode(cause);
    const detail = [code, messageOf(cause)].filter(Boolean).join(': ') || String(cause);
    const outcome =
      errorClass === 'final'
        ? 'not retried'
        : `gave up after ${attempts} attempts${errorClass === 'throttle' ? ' (throttled)' : errorClass === 'timeout' ? ' (timed out)' : ''}; the change is kept and will be retried`;
    super(`Cloud Map ${api} failed for ${describeContext(context)}: ${detail} (${outcome})`, { cause });
    this.api = api;
    this.context = context;
    this.code = code;
    this.errorClass = errorClass;
    this.attempts = attempts;
  }

  /** True when trying again later may succeed (throttled or transient). */
  get retryable(): boolean {
    return this.errorClass !== 'final';
  }
}

const NOT_FOUND_CODES = new Set([
  'NamespaceNotFound',
  'ServiceNotFound',
  'InstanceNotFound',
  'OperationNotFound',
  'ResourceNotFoundException',
]);

/** True when `err` (a CloudMapCallError or a raw SDK error) says the resource does not exist; `code` narrows it. */
export function isNotFound(err: unknown, code?: string): boolean {
  const actual = err instanceof CloudMapCallError ? err.code : errorCode(err);
  return actual !== undefined && (code === undefined ? NOT_FOUND_CODES.has(actual) : actual === code);
}

/** An attempt that got no complete answer within the call deadline (--cloudmap-call-timeout); its request is aborted. */
export class CallTimeoutError extends Error {
  override name = 'TimeoutError';

  constructor(timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms; the request was abandoned with its connection`);
  }
}

/** A call cut short because its adapter is closing (the reconcilers stop: shutdown, a lost Lease, a new identity). */
export class CallCancelledError extends Error {
  override name = 'CallCancelledError';

  constructor(api: string, context: CallContext) {
    super(`Cloud Map ${api} for ${describeContext(context)} cancelled: the reconcilers are stopping`);
  }
}

/**
 * A call not sent because this replica may no longer hold the leader Lease (its last renewal is older than the renew
 * deadline, e.g. after the process was paused): the standby may be writing already, so this one must not.
 */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';

  constructor(api: string, reason: string) {
    super(`Cloud Map ${api} not sent: ${reason}; this replica stops writing and a standby takes over`);
  }
}

/** A write refused because it would touch another cluster's (or ClusterSet's) instance (M4). */
export class OwnershipError extends Error {
  override name = 'OwnershipError';
}

export interface OperationFailure {
  readonly operationId: string;
  readonly context: CallContext;
  readonly reason: string;
  /** Still pending at the deadline: not failed, only slow. */
  readonly pending?: boolean;
}

/** Cloud Map reported that operations did not succeed (or could not be confirmed). */
export class OperationsFailedError extends Error {
  override name = 'OperationsFailedError';
  readonly failures: readonly OperationFailure[];

  constructor(failures: readonly OperationFailure[]) {
    super(
      `${failures.length} Cloud Map operation(s) did not succeed; the worker will retry them: ` +
        failures.map((f) => `${f.operationId} (${describeContext(f.context)}): ${f.reason}`).join('; '),
    );
    this.failures = failures;
  }
}

/**
 * True when retrying later will do and the failure is no reason to report an export as failed: Cloud Map is busy
 * (throttled, unreachable, operations still running), a cached namespace or service id went stale (another cluster
 * deleted it; the id is dropped and the retry creates or finds it again), or this replica lost the Lease or stops
 * reconciling (the next leader reports).
 */
export function isTemporary(err: unknown): boolean {
  if (err instanceof LeaseLostError || err instanceof CallCancelledError) return true;
  if (err instanceof CloudMapCallError)
    return err.retryable || err.code === 'ServiceNotFound' || err.code === 'NamespaceNotFound';
  return err instanceof OperationsFailedError && err.failures.every((f) => f.pending === true);
}

/** A field the SDK puts on modelled errors (ServiceAlreadyExists.ServiceId, DuplicateRequest.DuplicateOperationId). */
export function causeField(err: unknown, field: string): string | undefined {
  const cause = err instanceof CloudMapCallError ? err.cause : err;
  const value = typeof cause === 'object' && cause !== null ? (cause as Record<string, unknown>)[field] : undefined;
  return typeof value === 'string' ? value : undefined;
}
