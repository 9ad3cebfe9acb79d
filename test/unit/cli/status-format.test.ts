import { expect } from 'chai';
import fc from 'fast-check';
import { formatConditions, formatStatusJson, formatStatusTable, renderTable } from '../../../src/cli/status-format.ts';
import { buildStatusReport } from '../../../src/cli/status-model.ts';
import { condition, HEALTHY_EXPORT_CONDITIONS, tutorialClusters, tutorialCloudMap } from './fixtures.ts';

describe('mcs-cloudmap status: formatting', () => {
  it('renders the tutorial ClusterSet as a table per namespace with exports, imports and Cloud Map instances', () => {
    const text = formatStatusTable(buildStatusReport(tutorialClusters(), tutorialCloudMap()));
    expect(text).to.equal(
      [
        'CONTEXT  CLUSTER ID  CLUSTERSET ID  SERVER',
        'cls1     cls1        clusterset1    https://127.0.0.1:6443',
        'cls2     cls2        clusterset1    https://127.0.0.1:6444',
        '',
        'Cloud Map: us-west-2 via http://127.0.0.1:5000, CLUSTERSET_ID=clusterset1',
        '',
        'NAMESPACE  SERVICE      CONTEXT   SIDE       TYPE          IPS         PORTS   CLUSTERS  ENDPOINTS  CONDITIONS',
        'demo       nginx-hello  cls1      export     ClusterSetIP  -           80/TCP  cls1      3/3        Conflict:NoConflicts Ready:Exported Valid',
        'demo       nginx-hello  cls1      import     ClusterSetIP  10.96.0.20  80/TCP  cls1      cls1=3/3   Ready',
        'demo       nginx-hello  cls2      import     ClusterSetIP  10.97.0.20  80/TCP  cls1      cls1=3/3   Ready',
        'demo       nginx-hello  cloudmap  instances  -             -           -       cls1      cls1=3/3   -',
        '',
        'ENDPOINTS: ready/total addresses (Cloud Map: ready/total instances) per cluster id; ! marks what needs attention.',
        '',
        'No problems found.',
      ].join('\n'),
    );
  });

  it('X3: marks unhealthy conditions with ! and lists the problems with their messages', () => {
    const clusters = tutorialClusters();
    clusters[0]!.exports[0]!.conditions = [
      ...HEALTHY_EXPORT_CONDITIONS.slice(0, 2),
      condition('Conflict', 'True', 'TypeConflict', 'cls2 exports Headless; the oldest export wins.'),
    ];
    const text = formatStatusTable(buildStatusReport(clusters));
    expect(text).to.contain('!Conflict:TypeConflict Ready:Exported Valid');
    expect(text).to.contain(
      'Problems (1):\n  cls1 demo/nginx-hello: Conflict=True (TypeConflict): cls2 exports Headless; the oldest export wins.',
    );
  });

  it('I8: marks an import whose EndpointSlices are Absent (GEP-1748 gateways then do not route to them)', () => {
    const clusters = tutorialClusters();
    clusters[1]!.imports[0]!.endpointSliceObjects = 'Absent';
    delete clusters[0]!.imports[0]!.endpointSliceObjects;
    const text = formatStatusTable(buildStatusReport(clusters));
    expect(text).to.match(/cls2 +import .* cls1=3\/3 !slices:Absent +Ready/);
    expect(text).to.match(/cls1 +import .* cls1=3\/3 +Ready/);
  });

  it('shows an unreachable cluster and a Cloud Map service that does not exist', () => {
    const clusters = tutorialClusters();
    clusters[1] = {
      context: 'cls2',
      server: 'https://127.0.0.1:6444',
      exports: [],
      imports: [],
      error: 'context "cls2": cannot reach',
    };
    const cm = tutorialCloudMap();
    cm.services[0] = { namespace: 'demo', name: 'nginx-hello', found: false, instancesByCluster: {} };
    const text = formatStatusTable(buildStatusReport(clusters, cm));
    expect(text).to.contain('cls2     !unreachable  -');
    expect(text).to.match(/cloudmap\s+instances\s+-\s+-\s+-\s+-\s+0\s+!not found/);
  });

  it('says so when there is nothing to show', () => {
    const text = formatStatusTable(
      buildStatusReport([{ context: 'a', server: 's', clusterId: 'a', clustersetId: 'x', exports: [], imports: [] }]),
    );
    expect(text).to.contain('No ServiceExports or ServiceImports in the inspected clusters.');
  });

  it('--output json is the report itself', () => {
    const report = buildStatusReport(tutorialClusters(), tutorialCloudMap());
    expect(JSON.parse(formatStatusJson(report))).to.deep.equal(report);
  });

  it('formatConditions: sorted by type, reason shown unless it repeats the type', () => {
    expect(formatConditions([])).to.equal('-');
    expect(formatConditions([condition('Ready', 'False', 'Pending'), condition('Valid', 'True', 'Valid')])).to.equal(
      '!Ready:Pending Valid',
    );
  });

  it('renderTable: every column starts at the same offset on every line (property)', () => {
    const cell = fc.string({ unit: fc.constantFrom('a', 'b', '1', '-', '/'), maxLength: 12 });
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 5 })
          .chain((n) =>
            fc.tuple(
              fc.array(cell, { minLength: n, maxLength: n }),
              fc.array(fc.array(cell, { minLength: n, maxLength: n }), { maxLength: 6 }),
            ),
          ),
        ([headers, rows]) => {
          const lines = renderTable(headers, rows).split('\n');
          expect(lines).to.have.length(rows.length + 1);
          const all = [headers, ...rows];
          const widths = headers.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
          all.forEach((r, li) => {
            let offset = 0;
            r.forEach((c, i) => {
              expect(lines[li]!.slice(offset, offset + c.length)).to.equal(c);
              offset += widths[i]! + 2;
            });
          });
        },
      ),
    );
  });
});
