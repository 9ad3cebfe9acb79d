// Errors of Kubernetes API calls, carrying what was attempted (verb, target object, cluster) and what the apiserver
// answered (HTTP status and the Status reason), plus the predicates the adapters branch on.

export interface KubeApiErrorDetails {
  verb: string;
  /** What was addressed: `ServiceImport demo/nginx`, or the REST path when no object is known. */
  target: string;
  cluster: string;
  /** HTTP status; undefined when no response arrived (connection refused, reset, timeout). */
  statusCode?: number;
  /** metav1.Status reason (`Conflict`, `NotFound`, `Expired`, ...). */
  reason?: string;
  /** The apiserver's message, or the transport error's. */
  detail: string;
  cause?: unknown;
}

export class KubeApiError extends Error {
  override name = 'KubeApiError';
  readonly verb: string;
  readonly target: string;
  readonly cluster: string;
  readonly statusCode: number | undefined;
  readonly reason: string | undefined;

  constructor(d: KubeApiErrorDetails) {
    const status = d.statusCode === undefined ? 'no response' : `${d.statusCode}${d.reason ? ` ${d.reason}` : ''}`;
    super(
      `${d.verb} ${d.target} on cluster ${d.cluster}: ${status}: ${d.detail}`,
      d.cause === undefined ? undefined : { cause: d.cause },
    );
    this.verb = d.verb;
    this.target = d.target;
    this.cluster = d.cluster;
    this.statusCode = d.statusCode;
    this.reason = d.reason;
  }
}

function statusOf(err: unknown): number | undefined {
  return err instanceof KubeApiError ? err.statusCode : undefined;
}

export const isNotFound = (err: unknown): boolean => statusOf(err) === 404;
export const isConflict = (err: unknown): boolean =>
  statusOf(err) === 409 && (err as KubeApiError).reason !== 'AlreadyExists';
export const isAlreadyExists = (err: unknown): boolean =>
  statusOf(err) === 409 && (err as KubeApiError).reason === 'AlreadyExists';
/** 422 Invalid: the object, or a patch's `test` operation, was refused. */
export const isInvalid = (err: unknown): boolean => statusOf(err) === 422;
/** 410: the resourceVersion (or continue token) is older than what the apiserver still keeps; relist from scratch. */
export const isGone = (err: unknown): boolean => statusOf(err) === 410;

/** A short text for logs: the message of an Error, else the value itself. */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
