import { expect } from 'chai';
import fc from 'fast-check';
import { ABOUT_GROUP, MCS_GROUP } from '../../../src/core/names.ts';
import { convertObject, EPOCH, LEGACY_REASON } from '../../../src/webhook/conversion/convert.ts';
import { convertReview, parseConversionReview } from '../../../src/webhook/conversion/review.ts';
import { customObjectError } from '../../../src/webhook/crd/object-validation.ts';
import type { CustomKind } from '../../../src/webhook/crd/schemas.ts';

const GROUP: Record<CustomKind, string> = {
  ServiceExport: MCS_GROUP,
  ServiceImport: MCS_GROUP,
  ClusterProperty: ABOUT_GROUP,
};
const versionArb = fc.constantFrom('v1alpha1', 'v1beta1');
const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
const time = fc
  .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
  .map((d) => d.toISOString().replace(/\.\d+Z$/, 'Z'));
const stringMap = fc.dictionary(label, fc.string({ maxLength: 20 }), { maxKeys: 3 });
/** Fields a newer peer might write, which no schema of ours lists: they must survive every conversion. */
const unknownFields = fc.dictionary(fc.stringMatching(/^x[A-Za-z]{1,8}$/), fc.jsonValue({ maxDepth: 2 }), {
  maxKeys: 2,
});

const metadata = (namespaced: boolean) =>
  fc.record({
    name: label,
    uid: fc.uuid(),
    resourceVersion: fc.nat().map(String),
    creationTimestamp: time,
    labels: stringMap,
    ...(namespaced ? { namespace: label } : {}),
  });

const condition = fc.record({
  type: fc.constantFrom('Valid', 'Ready', 'Conflict'),
  status: fc.constantFrom('True', 'False', 'Unknown'),
  reason: fc.constantFrom('Exported', 'PortConflict,TypeConflict', 'NoService'),
  message: fc.string({ maxLength: 40 }),
  lastTransitionTime: time,
  observedGeneration: fc.nat(),
});
const conditions = fc.uniqueArray(condition, { selector: (c) => c.type, maxLength: 3 });

function withUnknown<T extends object>(arb: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.tuple(arb, unknownFields).map(([known, extra]) => ({ ...extra, ...known }));
}

const objects: Record<CustomKind, fc.Arbitrary<Record<string, unknown>>> = {
  ServiceExport: withUnknown(
    fc.record(
      {
        kind: fc.constant('ServiceExport'),
        metadata: metadata(true),
        spec: withUnknown(
          fc.record({ exportedLabels: stringMap, exportedAnnotations: stringMap }, { requiredKeys: [] }),
        ),
        status: withUnknown(fc.record({ conditions }, { requiredKeys: [] })),
      },
      { requiredKeys: ['kind', 'metadata'] },
    ),
  ),
  ServiceImport: withUnknown(
    fc.record(
      {
        kind: fc.constant('ServiceImport'),
        metadata: metadata(true),
        spec: withUnknown(
          fc.record(
            {
              type: fc.constantFrom('ClusterSetIP', 'Headless'),
              ports: fc.array(
                withUnknown(
                  fc.record(
                    {
                      name: label,
                      protocol: fc.constantFrom('TCP', 'UDP', 'SCTP'),
                      port: fc.integer({ min: 1, max: 65535 }),
                      appProtocol: fc.constant('http'),
                    },
                    { requiredKeys: ['port'] },
                  ),
                ),
                { maxLength: 3 },
              ),
              ips: fc.array(fc.ipV4(), { maxLength: 2 }),
              sessionAffinity: fc.constantFrom('ClientIP', 'None'),
              ipFamilies: fc.constantFrom(['IPv4'], ['IPv6'], ['IPv4', 'IPv6']),
            },
            { requiredKeys: ['type', 'ports'] },
          ),
        ),
        status: withUnknown(
          fc.record(
            {
              clusters: fc.uniqueArray(withUnknown(fc.record({ cluster: label })), {
                selector: (c) => c.cluster,
                maxLength: 3,
              }),
              conditions,
              endpointSliceObjects: fc.constantFrom('Present', 'Absent'),
            },
            { requiredKeys: [] },
          ),
        ),
      },
      { requiredKeys: ['kind', 'metadata', 'spec'] },
    ),
  ),
  ClusterProperty: withUnknown(
    fc.record({
      kind: fc.constant('ClusterProperty'),
      metadata: metadata(false),
      spec: withUnknown(fc.record({ value: fc.string({ minLength: 1, maxLength: 60 }) })),
    }),
  ),
};

/** An object of `kind` at a random served version. */
const versioned = (kind: CustomKind) =>
  fc
    .tuple(objects[kind], versionArb)
    .map(([o, v]): Record<string, unknown> => ({ ...o, apiVersion: `${GROUP[kind]}/${v}` }));

describe('webhook conversion', () => {
  for (const kind of Object.keys(objects) as CustomKind[]) {
    it(`${kind}: v1alpha1 ⇄ v1beta1 round-trips losslessly, unknown fields included (3,000 generated objects)`, () => {
      fc.assert(
        fc.property(versioned(kind), versionArb, (object, target) => {
          expect(customObjectError(kind, object), 'the generator makes valid objects').to.equal(undefined);
          const from = object.apiVersion as string;
          const there = convertObject(object, `${GROUP[kind]}/${target}`);
          if (!there.ok) throw new Error(there.message);
          expect(there.object.apiVersion).to.equal(`${GROUP[kind]}/${target}`);
          expect(there.object.kind).to.equal(kind);
          expect(there.object.metadata, 'name, namespace, uid and the rest of metadata unchanged').to.deep.equal(
            object.metadata,
          );
          const back = convertObject(there.object, from);
          if (!back.ok) throw new Error(back.message);
          expect(back.object).to.deep.equal(object);
        }),
        { numRuns: 3000 },
      );
    });
  }

  it('I8: status.endpointSliceObjects means the same in v1alpha1 and v1beta1 (mcs-api v0.5.1+), so it converts unchanged both ways', () => {
    for (const value of ['Present', 'Absent']) {
      const stored = {
        apiVersion: `${MCS_GROUP}/v1beta1`,
        kind: 'ServiceImport',
        metadata: { name: 'web', namespace: 'demo' },
        spec: { type: 'ClusterSetIP', ports: [] },
        status: { endpointSliceObjects: value },
      };
      const old = convertObject(stored, `${MCS_GROUP}/v1alpha1`);
      expect(old.ok && old.object.status).to.deep.equal({ endpointSliceObjects: value });
      const back = old.ok ? convertObject(old.object, `${MCS_GROUP}/v1beta1`) : old;
      expect(back.ok && back.object).to.deep.equal(stored);
    }
  });

  it('legacy conditions without status, reason, message or lastTransitionTime are completed so the object validates', () => {
    const legacyCondition = fc.record(
      {
        type: fc.constantFrom('Valid', 'Ready', 'Conflict'),
        status: fc.option(fc.constantFrom('True', 'False'), { nil: undefined }),
        reason: fc.option(fc.constantFrom('Exported', ''), { nil: undefined }),
        message: fc.option(fc.string({ maxLength: 10 }), { nil: undefined }),
        lastTransitionTime: fc.option(time, { nil: undefined }),
      },
      { requiredKeys: ['type'] },
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(legacyCondition, { selector: (c) => c.type, minLength: 1, maxLength: 3 }),
        fc.option(time, { nil: undefined }),
        versionArb,
        (legacy, created, target) => {
          const object = {
            apiVersion: `${MCS_GROUP}/v1alpha1`,
            kind: 'ServiceExport',
            metadata: { name: 'web', namespace: 'demo', ...(created ? { creationTimestamp: created } : {}) },
            status: { conditions: legacy },
          };
          const converted = convertObject(object, `${MCS_GROUP}/${target}`);
          if (!converted.ok) throw new Error(converted.message);
          expect(customObjectError('ServiceExport', converted.object)).to.equal(undefined);
          const out = (converted.object.status as { conditions: Record<string, unknown>[] }).conditions;
          for (const [i, c] of legacy.entries()) {
            expect(out[i]!.type).to.equal(c.type);
            expect(out[i]!.reason).to.equal(c.reason || LEGACY_REASON);
            expect(out[i]!.lastTransitionTime).to.equal(c.lastTransitionTime ?? created ?? EPOCH);
            expect(out[i]!.status).to.equal(c.status ?? 'Unknown');
          }
          const again = convertObject(converted.object, object.apiVersion);
          expect(again.ok && again.object.status).to.deep.equal(converted.object.status, 'normalising is idempotent');
        },
      ),
      { numRuns: 1000 },
    );
  });

  const refusals: Array<[string, unknown, string, RegExp]> = [
    ['not an object', 'x', `${MCS_GROUP}/v1beta1`, /not a JSON object/],
    [
      'unknown kind',
      { apiVersion: `${MCS_GROUP}/v1beta1`, kind: 'Widget' },
      `${MCS_GROUP}/v1alpha1`,
      /cannot convert kind "Widget"/,
    ],
    [
      'unknown source version',
      { apiVersion: `${MCS_GROUP}/v2`, kind: 'ServiceExport' },
      `${MCS_GROUP}/v1alpha1`,
      /from apiVersion "multicluster.x-k8s.io\/v2"/,
    ],
    [
      'unknown target version',
      { apiVersion: `${MCS_GROUP}/v1beta1`, kind: 'ServiceExport' },
      `${MCS_GROUP}/v1`,
      /to "multicluster.x-k8s.io\/v1"/,
    ],
    [
      'another group',
      { apiVersion: `${MCS_GROUP}/v1beta1`, kind: 'ClusterProperty' },
      `${ABOUT_GROUP}/v1alpha1`,
      /from apiVersion/,
    ],
  ];
  for (const [what, object, desired, message] of refusals) {
    it(`refuses ${what}, saying what is expected`, () => {
      const r = convertObject(object, desired);
      expect(r.ok).to.equal(false);
      expect(!r.ok && r.message).to.match(message);
    });
  }

  describe('ConversionReview (W2)', () => {
    const review = (objects: unknown[], desiredAPIVersion = `${MCS_GROUP}/v1alpha1`) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: { uid: 'u-1', desiredAPIVersion, objects },
    });

    it('answers with the uid, the objects in request order at the desired version, and Success', () => {
      const objs = ['a', 'b', 'c'].map((name) => ({
        apiVersion: `${MCS_GROUP}/v1beta1`,
        kind: 'ServiceExport',
        metadata: { name, namespace: 'demo' },
      }));
      const parsed = parseConversionReview(review(objs));
      if (!parsed.ok) throw new Error(parsed.message);
      const { body, succeeded } = convertReview(parsed.apiVersion, parsed.request);
      expect(succeeded).to.equal(true);
      expect(body).to.deep.equal({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        response: {
          uid: 'u-1',
          result: { status: 'Success' },
          convertedObjects: objs.map((o) => ({ ...o, apiVersion: `${MCS_GROUP}/v1alpha1` })),
        },
      });
    });
    it('answers Failed with the first bad object and no objects', () => {
      const parsed = parseConversionReview(
        review([{ apiVersion: `${MCS_GROUP}/v1beta1`, kind: 'ServiceExport', metadata: {} }, { kind: 'Widget' }]),
      );
      if (!parsed.ok) throw new Error(parsed.message);
      const { body, succeeded } = convertReview(parsed.apiVersion, parsed.request);
      expect(succeeded).to.equal(false);
      expect((body.response as Record<string, unknown>).result).to.deep.equal({
        status: 'Failed',
        message: 'object 1: cannot convert kind "Widget": expected ServiceExport, ServiceImport or ClusterProperty',
      });
      expect((body.response as Record<string, unknown>).convertedObjects).to.deep.equal([]);
    });
    it('accepts apiextensions.k8s.io/v1beta1 and keeps it in the reply', () => {
      const parsed = parseConversionReview({ ...review([]), apiVersion: 'apiextensions.k8s.io/v1beta1' });
      expect(parsed.ok && convertReview(parsed.apiVersion, parsed.request).body.apiVersion).to.equal(
        'apiextensions.k8s.io/v1beta1',
      );
    });
    const bad: Array<[string, unknown, RegExp]> = [
      ['no request', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }, /no request object/],
      ['no uid', { ...review([]), request: { desiredAPIVersion: 'x', objects: [] } }, /no uid/],
      ['no desiredAPIVersion', { ...review([]), request: { uid: 'u', objects: [] } }, /no desiredAPIVersion/],
      [
        'objects not a list',
        { ...review([]), request: { uid: 'u', desiredAPIVersion: 'x', objects: {} } },
        /must be a list/,
      ],
      [
        'wrong apiVersion',
        { ...review([]), apiVersion: 'apiextensions.k8s.io/v2' },
        /unsupported ConversionReview apiVersion/,
      ],
      ['wrong kind', { ...review([]), kind: 'AdmissionReview' }, /expected kind ConversionReview/],
    ];
    for (const [what, body, message] of bad) {
      it(`rejects a review with ${what}`, () => {
        const parsed = parseConversionReview(body);
        expect(parsed.ok).to.equal(false);
        expect(!parsed.ok && parsed.message).to.match(message);
      });
    }
  });
});
