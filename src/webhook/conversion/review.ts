// ConversionReview (W2; apiextensions.k8s.io/v1, v1beta1 accepted): convertedObjects in request order, each
// with apiVersion = desiredAPIVersion; result Success, or Failed with the first object's problem.

import { reviewRequest, type ParsedReview } from '../admission/review.ts';
import { convertObject } from './convert.ts';

export const CONVERSION_VERSIONS = ['apiextensions.k8s.io/v1', 'apiextensions.k8s.io/v1beta1'] as const;

export interface ConversionRequest {
  uid: string;
  desiredAPIVersion: string;
  objects: unknown[];
}

export function parseConversionReview(body: unknown): ParsedReview<ConversionRequest> {
  const review = reviewRequest(body, 'ConversionReview', CONVERSION_VERSIONS);
  if (!review.ok) return review;
  const { uid, desiredAPIVersion, objects } = review.request;
  if (typeof desiredAPIVersion !== 'string' || desiredAPIVersion === '') {
    return { ok: false, message: 'ConversionReview request has no desiredAPIVersion' };
  }
  if (!Array.isArray(objects)) return { ok: false, message: 'ConversionReview request.objects must be a list' };
  return { ok: true, apiVersion: review.apiVersion, request: { uid: uid as string, desiredAPIVersion, objects } };
}

export interface ConversionOutcome {
  body: Record<string, unknown>;
  /** Kinds seen (for metrics) and whether every object converted. */
  kind: string;
  succeeded: boolean;
}

export function convertReview(apiVersion: string, request: ConversionRequest): ConversionOutcome {
  const convertedObjects: unknown[] = [];
  let failure: string | undefined;
  for (const [i, object] of request.objects.entries()) {
    const converted = convertObject(object, request.desiredAPIVersion);
    if (!converted.ok) {
      failure = `object ${i}: ${converted.message}`;
      break;
    }
    convertedObjects.push(converted.object);
  }
  const first = request.objects[0] as { kind?: unknown } | undefined;
  const kind = typeof first?.kind === 'string' ? first.kind : '';
  const response =
    failure === undefined
      ? { uid: request.uid, convertedObjects, result: { status: 'Success' } }
      : { uid: request.uid, convertedObjects: [], result: { status: 'Failed', message: failure } };
  return { body: { apiVersion, kind: 'ConversionReview', response }, kind, succeeded: failure === undefined };
}
