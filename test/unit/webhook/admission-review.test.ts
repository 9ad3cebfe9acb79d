import { expect } from 'chai';
import { allow, deny } from '../../../src/webhook/admission/decision.ts';
import { admissionResponse, parseAdmissionReview } from '../../../src/webhook/admission/review.ts';

const body = (over: Record<string, unknown> = {}, request: Record<string, unknown> = {}) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: 'u-1',
    kind: { group: 'multicluster.x-k8s.io', version: 'v1beta1', kind: 'ServiceExport' },
    resource: { group: 'multicluster.x-k8s.io', version: 'v1beta1', resource: 'serviceexports' },
    name: 'web',
    namespace: 'demo',
    operation: 'CREATE',
    userInfo: { username: 'alice', groups: ['dev'] },
    object: { metadata: { name: 'web' } },
    oldObject: null,
    dryRun: true,
    ...request,
  },
  ...over,
});

describe('AdmissionReview (W1)', () => {
  it('parses what the apiserver sends', () => {
    const parsed = parseAdmissionReview(body());
    expect(parsed).to.deep.equal({
      ok: true,
      apiVersion: 'admission.k8s.io/v1',
      request: {
        uid: 'u-1',
        kind: { group: 'multicluster.x-k8s.io', version: 'v1beta1', kind: 'ServiceExport' },
        subResource: '',
        name: 'web',
        namespace: 'demo',
        operation: 'CREATE',
        username: 'alice',
        object: { metadata: { name: 'web' } },
        oldObject: null,
        dryRun: true,
      },
    });
  });
  it('accepts admission.k8s.io/v1beta1 and answers in it', () => {
    const parsed = parseAdmissionReview(body({ apiVersion: 'admission.k8s.io/v1beta1' }));
    expect(parsed.ok && parsed.apiVersion).to.equal('admission.k8s.io/v1beta1');
    expect(admissionResponse('admission.k8s.io/v1beta1', 'u', allow()).apiVersion).to.equal('admission.k8s.io/v1beta1');
  });
  const bad: Array<[string, unknown, RegExp]> = [
    ['not an object', [1, 2], /the body must be a JSON object \(AdmissionReview\)/],
    [
      'another apiVersion',
      body({ apiVersion: 'admission.k8s.io/v2' }),
      /unsupported AdmissionReview apiVersion "admission.k8s.io\/v2": expected admission.k8s.io\/v1 or admission.k8s.io\/v1beta1/,
    ],
    ['another kind', body({ kind: 'ConversionReview' }), /expected kind AdmissionReview/],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, /no request object/],
    ['no uid', body({}, { uid: '' }), /request has no uid/],
    ['a malformed kind', body({}, { kind: 'ServiceExport' }), /request.kind must be \{group, version, kind\}/],
    [
      'an unknown operation',
      body({}, { operation: 'PATCH' }),
      /operation "PATCH" is not one of CREATE, UPDATE, DELETE, CONNECT/,
    ],
  ];
  for (const [what, input, message] of bad) {
    it(`rejects ${what} with a message saying what is expected`, () => {
      const parsed = parseAdmissionReview(input);
      expect(parsed.ok).to.equal(false);
      expect(!parsed.ok && parsed.message).to.match(message);
    });
  }

  it('an allowed response carries the uid, warnings and a base64 JSON Patch', () => {
    const patch = [{ op: 'add' as const, path: '/metadata/finalizers', value: ['f'] }];
    const out = admissionResponse('admission.k8s.io/v1', 'u-1', allow(['careful'], patch));
    expect(out).to.deep.equal({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'u-1',
        allowed: true,
        warnings: ['careful'],
        patchType: 'JSONPatch',
        patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
      },
    });
  });
  it('a denial carries status code, reason and message, and nothing else', () => {
    expect(admissionResponse('admission.k8s.io/v1', 'u-1', deny('no')).response).to.deep.equal({
      uid: 'u-1',
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: 'no' },
    });
    expect(
      (admissionResponse('admission.k8s.io/v1', 'u-1', deny('bad', 400)).response as { status: unknown }).status,
    ).to.deep.equal({ code: 400, reason: 'BadRequest', message: 'bad' });
  });
});
