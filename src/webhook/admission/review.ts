// AdmissionReview (W1; admission.k8s.io/v1, v1beta1 accepted) in and out: the reply keeps the request's
// apiVersion and uid, carries `allowed`, a status on denial, warnings, and mutations as a base64 JSON Patch.

import type { Decision } from './decision.ts';

export const ADMISSION_VERSIONS = ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const;
export type AdmissionVersion = (typeof ADMISSION_VERSIONS)[number];

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
const OPERATIONS: readonly string[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  subResource: string;
  name: string;
  namespace: string;
  operation: Operation;
  username: string;
  /** The object as it would be stored; null on DELETE. */
  object: unknown;
  /** The stored object on UPDATE and DELETE; null on CREATE. */
  oldObject: unknown;
  dryRun: boolean;
}

export type ParsedReview<T> = { ok: true; apiVersion: string; request: T } | { ok: false; message: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The request part of a review body, or why the body is not a review of one of the accepted apiVersions. */
export function reviewRequest(
  body: unknown,
  kind: string,
  versions: readonly string[],
): ParsedReview<Record<string, unknown>> {
  if (!isRecord(body)) return { ok: false, message: `the body must be a JSON object (${kind})` };
  const apiVersion = str(body.apiVersion);
  if (!versions.includes(apiVersion)) {
    return { ok: false, message: `unsupported ${kind} apiVersion "${apiVersion}": expected ${versions.join(' or ')}` };
  }
  if (body.kind !== kind) return { ok: false, message: `expected kind ${kind}, got "${str(body.kind)}"` };
  if (!isRecord(body.request)) return { ok: false, message: `${kind} has no request object` };
  if (str(body.request.uid) === '') return { ok: false, message: `${kind} request has no uid` };
  return { ok: true, apiVersion, request: body.request };
}

function groupVersionKind(v: unknown): GroupVersionKind | undefined {
  if (!isRecord(v) || typeof v.group !== 'string' || typeof v.version !== 'string' || typeof v.kind !== 'string')
    return undefined;
  return { group: v.group, version: v.version, kind: v.kind };
}

export function parseAdmissionReview(body: unknown): ParsedReview<AdmissionRequest> {
  const review = reviewRequest(body, 'AdmissionReview', ADMISSION_VERSIONS);
  if (!review.ok) return review;
  const r = review.request;
  const kind = groupVersionKind(r.kind);
  if (!kind) return { ok: false, message: 'AdmissionReview request.kind must be {group, version, kind}' };
  const operation = str(r.operation);
  if (!OPERATIONS.includes(operation)) {
    return {
      ok: false,
      message: `AdmissionReview request.operation "${operation}" is not one of ${OPERATIONS.join(', ')}`,
    };
  }
  return {
    ok: true,
    apiVersion: review.apiVersion,
    request: {
      uid: str(r.uid),
      kind,
      subResource: str(r.subResource),
      name: str(r.name),
      namespace: str(r.namespace),
      operation: operation as Operation,
      username: isRecord(r.userInfo) ? str(r.userInfo.username) : '',
      // Only what the operation defines: a stray oldObject on CREATE (or object on DELETE) is not a stored object.
      object: operation === 'DELETE' ? null : (r.object ?? null),
      oldObject: operation === 'CREATE' ? null : (r.oldObject ?? null),
      dryRun: r.dryRun === true,
    },
  };
}

/** metav1.Status reasons, so kubectl prints `Error from server (Forbidden)` rather than a bare error. */
const STATUS_REASON: Record<number, string> = {
  400: 'BadRequest',
  403: 'Forbidden',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

export function admissionResponse(apiVersion: string, uid: string, decision: Decision): Record<string, unknown> {
  const response: Record<string, unknown> = { uid, allowed: decision.allowed };
  if (!decision.allowed)
    response.status = {
      code: decision.code,
      reason: STATUS_REASON[decision.code] ?? 'Forbidden',
      message: decision.message,
    };
  if (decision.warnings.length > 0) response.warnings = decision.warnings;
  if (decision.patch.length > 0) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(decision.patch)).toString('base64');
  }
  return { apiVersion, kind: 'AdmissionReview', response };
}
