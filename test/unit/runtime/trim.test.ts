import { expect } from 'chai';
import fc from 'fast-check';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { keepFields, keepMetadata, LAST_APPLIED_ANNOTATION, pick, trimMetadata } from '../../../src/runtime/trim.ts';

const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }];

describe('informer cache trims (what the caches keep; docs/benchmarks.md)', () => {
  it('drops managedFields and the last-applied annotation, keeps every other metadata field', () => {
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      ['managedFields only', { name: 'a', managedFields }, { name: 'a' }],
      [
        'last-applied is the only annotation: no annotations left',
        { name: 'a', annotations: { [LAST_APPLIED_ANNOTATION]: '{}' } },
        { name: 'a' },
      ],
      [
        'other annotations stay',
        { name: 'a', annotations: { [LAST_APPLIED_ANNOTATION]: '{}', team: 'x' } },
        { name: 'a', annotations: { team: 'x' } },
      ],
      [
        'everything the readers use stays',
        {
          name: 'a',
          namespace: 'n',
          uid: 'u',
          resourceVersion: '7',
          generation: 2,
          creationTimestamp: 't',
          deletionTimestamp: 'd',
          labels: { l: 'v' },
          finalizers: ['f'],
          ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: 'ou' }],
          managedFields,
        },
        {
          name: 'a',
          namespace: 'n',
          uid: 'u',
          resourceVersion: '7',
          generation: 2,
          creationTimestamp: 't',
          deletionTimestamp: 'd',
          labels: { l: 'v' },
          finalizers: ['f'],
          ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: 'ou' }],
        },
      ],
    ];
    for (const [what, input, want] of cases)
      expect(trimMetadata(input as KubeObject['metadata']), what).to.deep.equal(want);
  });

  it('never keeps managedFields or last-applied, never loses another field (property)', () => {
    const key = fc
      .string({ minLength: 1, maxLength: 8 })
      .filter((k) => !['managedFields', 'annotations', '__proto__'].includes(k));
    fc.assert(
      fc.property(
        fc.dictionary(key, fc.string()),
        fc.dictionary(
          fc.string({ minLength: 1 }).filter((k) => k !== '__proto__'),
          fc.string(),
        ),
        fc.boolean(),
        (fields, annotations, lastApplied) => {
          const meta = {
            name: 'x',
            ...fields,
            managedFields,
            annotations: lastApplied ? { ...annotations, [LAST_APPLIED_ANNOTATION]: '{}' } : annotations,
          };
          const trimmed = trimMetadata(meta);
          expect(trimmed).to.not.have.property('managedFields');
          expect(trimmed.annotations ?? {}).to.not.have.property(LAST_APPLIED_ANNOTATION);
          for (const [k, v] of Object.entries(fields)) expect(trimmed[k]).to.equal(v);
          const { [LAST_APPLIED_ANNOTATION]: _, ...others } = meta.annotations;
          if (Object.keys(others).length > 0) expect(trimmed.annotations).to.deep.equal(others);
        },
      ),
    );
  });

  it('keepFields keeps apiVersion, kind, trimmed metadata and only the named fields that are present', () => {
    type Svc = KubeObject & { spec?: unknown; status?: unknown };
    const trim = keepFields<Svc>('spec');
    const svc: Svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'a', managedFields },
      spec: { type: 'ClusterIP' },
      status: { loadBalancer: {} },
    };
    expect(trim(svc)).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'a' },
      spec: { type: 'ClusterIP' },
    });
    expect(trim({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'b' } })).to.not.have.property('spec');
  });

  it('keepMetadata keeps name, namespace, resourceVersion and the named fields that are present, nothing else', () => {
    const meta = {
      name: 'a',
      namespace: 'n',
      uid: 'u',
      resourceVersion: '7',
      creationTimestamp: 't',
      labels: { l: 'v' },
      managedFields,
    };
    expect(keepMetadata(meta)).to.deep.equal({ name: 'a', namespace: 'n', resourceVersion: '7' });
    expect(keepMetadata(meta, 'creationTimestamp', 'annotations')).to.deep.equal({
      name: 'a',
      namespace: 'n',
      resourceVersion: '7',
      creationTimestamp: 't',
    });
    expect(keepMetadata({ name: 'cluster-scoped' })).to.deep.equal({ name: 'cluster-scoped' });
  });

  it('pick keeps only the named fields that are present', () => {
    expect(pick({ a: 1, b: 2, c: undefined as number | undefined }, ['a', 'c'])).to.deep.equal({ a: 1 });
  });
});
