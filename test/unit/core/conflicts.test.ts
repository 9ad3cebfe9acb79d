import { expect } from 'chai';
import fc from 'fast-check';
import {
  byPrecedence,
  checkExportAgainstImport,
  CONFLICT_REASONS,
  resolveImport,
  type ConflictReason,
} from '../../../src/core/conflicts.ts';
import type { ClusterExport, ExportedServiceProperties } from '../../../src/core/types.ts';
import { clusterExport, exportsArb, nearlyAgreeingExportsArb, port } from './import-fixtures.ts';

describe('core/conflicts', () => {
  describe('byPrecedence (X1)', () => {
    it('X1: orders the oldest ServiceExport first', () => {
      const exports = [clusterExport('a', 3000), clusterExport('b', 1000), clusterExport('c', 2000)];
      expect(byPrecedence(exports).map((e) => e.clusterId)).to.deep.equal(['b', 'c', 'a']);
      expect(
        exports.map((e) => e.clusterId),
        'input untouched',
      ).to.deep.equal(['a', 'b', 'c']);
    });
    it('X1: breaks ties by cluster id', () => {
      expect(byPrecedence([clusterExport('b', 1000), clusterExport('a', 1000)]).map((e) => e.clusterId)).to.deep.equal([
        'a',
        'b',
      ]);
    });
  });

  describe('resolveImport (X1–X3, I3)', () => {
    it('I3: one export imports as it is, without conflict', () => {
      const only = clusterExport('a', 1000, {
        exportedLabels: { team: 'x' },
        sessionAffinity: 'ClientIP',
        sessionAffinityTimeoutSeconds: 60,
      });
      const r = resolveImport([only]);
      expect(r.clusters).to.deep.equal(['a']);
      expect(r.conflict).to.equal(undefined);
      expect(r.properties).to.deep.equal({
        type: 'ClusterSetIP',
        ports: [port('http', 80)],
        sessionAffinity: 'ClientIP',
        sessionAffinityTimeoutSeconds: 60,
        ipFamilies: ['IPv4'],
        exportedLabels: { team: 'x' },
        exportedAnnotations: {},
      });
    });

    it('I3: status clusters are the exporting clusters, sorted', () => {
      const r = resolveImport([clusterExport('zeta', 1000), clusterExport('alpha', 2000), clusterExport('mid', 500)]);
      expect(r.clusters).to.deep.equal(['alpha', 'mid', 'zeta']);
      expect(r.conflict).to.equal(undefined);
    });

    it('refuses to resolve nothing, saying why', () => {
      expect(() => resolveImport([])).to.throw(/no cluster exports this service/);
    });

    // Each row: what the newer cluster b exports differently from the older cluster a, the reason, and the property
    // that must keep a's value.
    const rows: Array<{
      reason: ConflictReason;
      b: Partial<ExportedServiceProperties>;
      a?: Partial<ExportedServiceProperties>;
      kept: Partial<ExportedServiceProperties>;
    }> = [
      { reason: 'PortConflict', b: { ports: [port('http', 8080)] }, kept: { ports: [port('http', 80)] } },
      { reason: 'TypeConflict', b: { type: 'Headless' }, kept: { type: 'ClusterSetIP' } },
      { reason: 'SessionAffinityConflict', b: { sessionAffinity: 'ClientIP' }, kept: { sessionAffinity: 'None' } },
      {
        reason: 'SessionAffinityConfigConflict',
        a: { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 30 },
        b: { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 60 },
        kept: { sessionAffinityTimeoutSeconds: 30 },
      },
      { reason: 'InternalTrafficPolicyConflict', b: { internalTrafficPolicy: 'Local' }, kept: {} },
      { reason: 'TrafficDistributionConflict', b: { trafficDistribution: 'PreferClose' }, kept: {} },
      { reason: 'LabelsConflict', b: { exportedLabels: { team: 'b' } }, kept: { exportedLabels: {} } },
      { reason: 'AnnotationsConflict', b: { exportedAnnotations: { note: 'b' } }, kept: { exportedAnnotations: {} } },
      { reason: 'IPFamilyConflict', b: { ipFamilies: ['IPv6'] }, kept: { ipFamilies: ['IPv4'] } },
    ];
    for (const row of rows) {
      it(`X3: ${row.reason} when the newer export differs; the oldest export's value wins, both clusters named`, () => {
        // The winner's id sorts last, so only the creation time can make it win.
        const older = clusterExport('zeta', 1000, row.a ?? {});
        const newer = clusterExport('alpha', 2000, { ...row.a, ...row.b });
        for (const exports of [
          [older, newer],
          [newer, older],
        ]) {
          const r = resolveImport(exports);
          expect(r.conflict?.reasons).to.deep.equal([row.reason]);
          expect(r.conflict?.clusters).to.deep.equal(['alpha', 'zeta']);
          expect(r.conflict?.details).to.have.length(1);
          expect(r.conflict?.details[0]).to.include({ reason: row.reason, winner: 'zeta' });
          expect(r.conflict?.details[0]?.losers).to.deep.equal(['alpha']);
          expect(r.properties).to.deep.include(row.kept);
          expect(r.properties).to.deep.equal(resolveImport([older]).properties);
        }
      });
    }

    it('X3: the message is one sentence naming the field, the clusters, whose value wins and what to do', () => {
      const r = resolveImport([clusterExport('east', 1000), clusterExport('west', 2000, { type: 'Headless' })]);
      expect(r.conflict?.message).to.equal(
        'Conflicting type between clusters east and west; the oldest export wins (values from east), ' +
          'so change the Service or ServiceExport in west to match, or stop exporting it there.',
      );
      expect(r.conflict?.details[0]?.description).to.equal(
        'type ClusterSetIP from cluster east (oldest export) wins over Headless from west',
      );
    });

    it('X3: several reasons come in the fixed order and every field is named', () => {
      const r = resolveImport([
        clusterExport('a', 1000),
        clusterExport('b', 2000, {
          ipFamilies: ['IPv6'],
          type: 'Headless',
          ports: [port('web', 80)],
          exportedLabels: { x: 'y' },
        }),
        clusterExport('c', 3000, { type: 'Headless' }),
      ]);
      expect(r.conflict?.reasons).to.deep.equal(['PortConflict', 'TypeConflict', 'LabelsConflict', 'IPFamilyConflict']);
      expect(r.conflict?.message).to.match(
        /^Conflicting ports, type, exportedLabels and ipFamilies between clusters a, b and c;/,
      );
      expect(r.conflict?.message).to.contain('in b and c to match');
      const type = r.conflict?.details.find((d) => d.reason === 'TypeConflict');
      expect(type?.losers).to.deep.equal(['b', 'c']);
      expect(type?.description).to.equal(
        'type ClusterSetIP from cluster a (oldest export) wins over Headless from b and c',
      );
      expect(r.conflict?.details.find((d) => d.reason === 'PortConflict')?.description).to.equal(
        'TCP/80 is "http" in cluster a (older export, wins) but "web" in cluster b',
      );
      expect(r.properties.type).to.equal('ClusterSetIP');
    });

    it('X2: a port clash between two newer clusters names the older of them as the winner', () => {
      const r = resolveImport([
        clusterExport('a', 1000, { ports: [port('http', 80), port('metrics', 9090)] }),
        clusterExport('b', 2000, { ports: [port('http', 80), port('metrics', 9090)] }),
        clusterExport('c', 3000, { ports: [port('http', 80), port('metrics', 9091)] }),
      ]);
      expect(r.properties.ports).to.deep.equal([port('http', 80), port('metrics', 9090)]);
      expect(r.conflict?.details).to.deep.equal([
        {
          reason: 'PortConflict',
          field: 'ports',
          winner: 'a',
          losers: ['c'],
          description: 'port "metrics" is TCP/9090 in cluster a (older export, wins) but TCP/9091 in cluster c',
          consequence: 'so the endpoints of c are left out of port "metrics" and receive no traffic for it',
        },
      ]);
      expect(r.conflict?.clusters).to.deep.equal(['a', 'c']);
    });

    it('X2 (mcs-api v0.5.0 conformance case): ports that differ without clashing are a PortConflict; the import has the union', () => {
      const cls1 = clusterExport('cls1', 1000, { ports: [port('tcp', 42), port('udp', 42, 'UDP')] });
      const cls2 = clusterExport('cls2', 2000, { ports: [port('tcp', 42), port('stcp', 142, 'SCTP')] });
      const r = resolveImport([cls2, cls1]);
      expect(r.properties.ports).to.deep.equal([port('tcp', 42), port('udp', 42, 'UDP'), port('stcp', 142, 'SCTP')]);
      expect(r.conflict?.reasons).to.deep.equal(['PortConflict']);
      expect(r.conflict?.clusters).to.deep.equal(['cls1', 'cls2']);
      expect(r.conflict?.message).to.equal(
        'Conflicting ports between clusters cls1 and cls2; ports of cls2 differ from the oldest export (cls1): ' +
          'adds "stcp" SCTP/142, lacks "udp" UDP/42, and the ServiceImport exposes the union of the ports; ' +
          'the oldest export wins (values from cls1), so change the Service or ServiceExport in cls2 to match, or stop exporting it there.',
      );
    });

    it('X2: the message names both the clash and the ports that differ besides it', () => {
      const r = resolveImport([
        clusterExport('cls1', 1000, { ports: [port('tcp', 42), port('udp', 42, 'UDP')] }),
        clusterExport('cls2', 2000, { ports: [port('tcp', 43)] }),
      ]);
      expect(r.properties.ports).to.deep.equal([port('tcp', 42), port('udp', 42, 'UDP')]);
      expect(r.conflict?.details.map((d) => d.description)).to.deep.equal([
        'port "tcp" is TCP/42 in cluster cls1 (older export, wins) but TCP/43 in cluster cls2',
        'ports of cls2 differ from the oldest export (cls1): lacks "udp" UDP/42',
      ]);
      for (const d of r.conflict!.details) expect(r.conflict?.message).to.contain(d.description);
    });

    it('X3: no conflict for values that mean the same (unset policy = Cluster, unset distribution = empty, unset timeout = 10800)', () => {
      const r = resolveImport([
        clusterExport('a', 1000, { sessionAffinity: 'ClientIP' }),
        clusterExport('b', 2000, {
          sessionAffinity: 'ClientIP',
          sessionAffinityTimeoutSeconds: 10800,
          internalTrafficPolicy: 'Cluster',
          trafficDistribution: '',
        }),
      ]);
      expect(r.conflict).to.equal(undefined);
    });

    it('X3: affinity None against ClientIP is a SessionAffinityConflict only, not also a config conflict', () => {
      const r = resolveImport([
        clusterExport('a', 1000),
        clusterExport('b', 2000, { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 5 }),
      ]);
      expect(r.conflict?.reasons).to.deep.equal(['SessionAffinityConflict']);
    });

    it('X3: an export without IP families (older controller) agrees with any, and the oldest stated families win', () => {
      const r = resolveImport([
        clusterExport('a', 1000, { ipFamilies: [] }),
        clusterExport('b', 2000, { ipFamilies: ['IPv6', 'IPv4'] }),
      ]);
      expect(r.conflict).to.equal(undefined);
      expect(r.properties.ipFamilies).to.deep.equal(['IPv6', 'IPv4']);
    });

    it('X3: IP family order matters (the first family is primary)', () => {
      const r = resolveImport([
        clusterExport('a', 1000, { ipFamilies: ['IPv4', 'IPv6'] }),
        clusterExport('b', 2000, { ipFamilies: ['IPv6', 'IPv4'] }),
      ]);
      expect(r.conflict?.reasons).to.deep.equal(['IPFamilyConflict']);
    });

    it('X1–X3 property: the result does not depend on the order of the exports', () => {
      const arb = fc
        .oneof(exportsArb, nearlyAgreeingExportsArb)
        .chain((exports) =>
          fc.tuple(
            fc.constant(exports),
            fc.shuffledSubarray(exports, { minLength: exports.length, maxLength: exports.length }),
          ),
        );
      fc.assert(
        fc.property(arb, ([exports, shuffled]) => {
          expect(resolveImport(shuffled)).to.deep.equal(resolveImport(exports));
        }),
      );
    });

    it('X2/X3 property: a conflict is reported exactly when some two clusters disagree', () => {
      fc.assert(
        fc.property(fc.oneof(exportsArb, nearlyAgreeingExportsArb), (exports) => {
          const disagree = exports.some((a) => exports.some((b) => a !== b && pairDisagrees(a, b)));
          const { conflict } = resolveImport(exports);
          expect(conflict !== undefined, JSON.stringify(exports)).to.equal(disagree);
          if (conflict) {
            expect(conflict.reasons).to.deep.equal(CONFLICT_REASONS.filter((r) => conflict.reasons.includes(r)));
            for (const d of conflict.details) expect(conflict.message).to.contain(d.field);
          }
        }),
        { numRuns: 1000 },
      );
    });

    it("X1 property: every property but the ports and IP families is the oldest export's", () => {
      fc.assert(
        fc.property(exportsArb, (exports) => {
          const { properties } = resolveImport(exports);
          const {
            clusterId,
            clustersetId,
            namespace,
            name,
            exportCreationTimestamp,
            endpoints,
            ports,
            ipFamilies,
            ...oldest
          } = byPrecedence(exports)[0]!;
          const { ports: merged, ipFamilies: families, ...rest } = properties;
          expect(rest).to.deep.equal(oldest);
        }),
      );
    });
  });

  describe('checkExportAgainstImport (admission)', () => {
    const current = [clusterExport('east', 1000), clusterExport('west', 2000)];
    const none = { conflict: undefined, involved: undefined, loses: false };

    it('X1: a new export (newest) that differs loses, with the winner named', () => {
      const check = checkExportAgainstImport(
        { ...clusterExport('north', Date.now(), { type: 'Headless', ports: [port('http', 8080)] }) },
        current,
      );
      expect(check.loses).to.equal(true);
      expect(check.involved?.reasons).to.deep.equal(['PortConflict', 'TypeConflict']);
      expect(check.involved?.details.map((d) => d.winner)).to.deep.equal(['east', 'east']);
      expect(check.involved?.message).to.contain('in north to match');
    });

    it('a new export that agrees has no conflict', () => {
      expect(checkExportAgainstImport(clusterExport('north', 5000), current)).to.deep.equal(none);
    });

    it("an update replaces the cluster's own current export instead of conflicting with it", () => {
      const check = checkExportAgainstImport(clusterExport('west', 2000, { exportedLabels: { app: 'web' } }), [
        clusterExport('west', 2000, { type: 'Headless' }),
        clusterExport('east', 1000, { exportedLabels: { app: 'web' } }),
      ]);
      expect(check).to.deep.equal(none);
    });

    it('the oldest export wins even when it is the candidate, and the disagreement is still reported', () => {
      const check = checkExportAgainstImport(clusterExport('east', 1000, { sessionAffinity: 'ClientIP' }), current);
      expect(check.loses).to.equal(false);
      expect(check.involved?.details[0]).to.include({ reason: 'SessionAffinityConflict', winner: 'east' });
      expect(check.involved?.details[0]?.losers).to.deep.equal(['west']);
    });

    it('X2/X3: disagreements between other clusters are in the conflict (the worker reports them on every export) but do not involve the candidate', () => {
      const check = checkExportAgainstImport(clusterExport('north', 5000), [
        clusterExport('east', 1000),
        clusterExport('west', 2000, { type: 'Headless' }),
      ]);
      expect(check.conflict?.reasons).to.deep.equal(['TypeConflict']);
      expect([check.involved, check.loses]).to.deep.equal([undefined, false]);
    });
  });
});

/** The X2/X3 rules restated pairwise, as an oracle for the property test. */
function pairDisagrees(a: ClusterExport, b: ClusterExport): boolean {
  const timeout = (e: ClusterExport) => e.sessionAffinityTimeoutSeconds ?? 10800;
  // X2 (mcs-api v0.5.0): any difference of the (name, protocol, port) sets, besides the clashes.
  const portSet = (e: ClusterExport) => JSON.stringify(e.ports.map((p) => `${p.name}|${p.protocol}/${p.port}`).sort());
  const portsClash =
    portSet(a) !== portSet(b) ||
    a.ports.some((p) =>
      b.ports.some((q) =>
        p.name === q.name
          ? p.protocol !== q.protocol ||
            p.port !== q.port ||
            (p.appProtocol !== undefined && q.appProtocol !== undefined && p.appProtocol !== q.appProtocol)
          : p.protocol === q.protocol && p.port === q.port,
      ),
    );
  return (
    portsClash ||
    a.type !== b.type ||
    a.sessionAffinity !== b.sessionAffinity ||
    (a.sessionAffinity === 'ClientIP' && b.sessionAffinity === 'ClientIP' && timeout(a) !== timeout(b)) ||
    (a.internalTrafficPolicy ?? 'Cluster') !== (b.internalTrafficPolicy ?? 'Cluster') ||
    (a.trafficDistribution ?? '') !== (b.trafficDistribution ?? '') ||
    JSON.stringify(Object.entries(a.exportedLabels).sort()) !==
      JSON.stringify(Object.entries(b.exportedLabels).sort()) ||
    JSON.stringify(Object.entries(a.exportedAnnotations).sort()) !==
      JSON.stringify(Object.entries(b.exportedAnnotations).sort()) ||
    (a.ipFamilies.length > 0 && b.ipFamilies.length > 0 && a.ipFamilies.join() !== b.ipFamilies.join())
  );
}
