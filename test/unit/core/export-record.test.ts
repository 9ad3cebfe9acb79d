import { expect } from 'chai';
import fc from 'fast-check';
import { resolveImport } from '../../../src/core/conflicts.ts';
import { decodeExportRecord, EXPORT_RECORD_MAX, exportRecordAnnotations } from '../../../src/core/export-record.ts';
import { EXPORT_RECORD_ANNOTATION } from '../../../src/core/names.ts';
import { clusterExport, exportsArb, nearlyAgreeingExportsArb, port } from './import-fixtures.ts';

const record = (exports: Parameters<typeof exportRecordAnnotations>[0]) =>
  exportRecordAnnotations(exports)[EXPORT_RECORD_ANNOTATION];

describe('core/export-record (X1–X3 at admission)', () => {
  it('X1–X3 property: resolving the record read back gives exactly what resolving the exports gave', () => {
    fc.assert(
      fc.property(fc.oneof(exportsArb, nearlyAgreeingExportsArb), (exports) => {
        const resolved = resolveImport(exports);
        const decoded = decodeExportRecord(record(resolved.exports));
        expect(decoded).to.not.equal(undefined);
        const again = resolveImport(decoded!);
        expect([again.properties, again.clusters, again.conflict]).to.deep.equal([
          resolved.properties,
          resolved.clusters,
          resolved.conflict,
        ]);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the precedence key and leaves out what conflicts do not read (targetPort, endpoints)', () => {
    const [entry] = decodeExportRecord(
      record([clusterExport('east', 1234, { ports: [{ ...port('http', 80), targetPort: 'web' }] })]),
    )!;
    expect(entry).to.deep.equal({
      clusterId: 'east',
      exportCreationTimestamp: 1234,
      type: 'ClusterSetIP',
      ports: [port('http', 80)],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      exportedLabels: {},
      exportedAnnotations: {},
    });
  });

  const good = JSON.parse(record([clusterExport('east', 1)])!) as Array<Record<string, unknown>>;
  const malformed: Array<[string, string | undefined]> = [
    ['absent', undefined],
    ['not JSON', '{'],
    ['not a list', '{}'],
    ['an entry without a cluster id', JSON.stringify([{ ...good[0], clusterId: undefined }])],
    ['a time that is not a number', JSON.stringify([{ ...good[0], exportCreationTimestamp: '1' }])],
    ['an unknown type', JSON.stringify([{ ...good[0], type: 'ExternalName' }])],
    ['a port with a bad protocol', JSON.stringify([{ ...good[0], ports: [{ name: '', protocol: 'ICMP', port: 1 }] }])],
    ['a label that is not a string', JSON.stringify([{ ...good[0], exportedLabels: { a: 1 } }])],
    ['an unknown IP family', JSON.stringify([{ ...good[0], ipFamilies: ['IPv5'] }])],
  ];
  for (const [what, text] of malformed) {
    it(`reads ${what} as no record, without throwing`, () => {
      expect(decodeExportRecord(text)).to.equal(undefined);
    });
  }

  it("leaves the annotation out rather than exceed the API server's annotation size limit", () => {
    const big = Array.from({ length: 80 }, (_, i) =>
      clusterExport(`c${i}`, i, {
        exportedLabels: { l: 'x'.repeat(1000) },
        exportedAnnotations: { a: 'y'.repeat(1000) },
      }),
    );
    expect(exportRecordAnnotations(big)).to.deep.equal({});
    expect(record(big.slice(0, 40))!.length).to.be.at.most(EXPORT_RECORD_MAX);
  });
});
