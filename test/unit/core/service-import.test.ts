import { expect } from 'chai';
import { resolveImport } from '../../../src/core/conflicts.ts';
import { decodeExportRecord } from '../../../src/core/export-record.ts';
import { CONTROLLER_NAME, EXPORT_RECORD_ANNOTATION, LABEL_CREATED_BY } from '../../../src/core/names.ts';
import {
  desiredServiceImport,
  serviceImportKeeper,
  serviceImportNeedsUpdate,
  V031_DERIVED_SERVICE_ANNOTATION,
  type ServiceImportInput,
  type StoredServiceImport,
} from '../../../src/core/service-import.ts';
import type { ClusterExport } from '../../../src/core/types.ts';
import { clusterExport, port } from './import-fixtures.ts';

const T0 = '2026-01-01T00:00:00Z';
const T1 = '2026-01-01T00:05:00Z';

function input(exports: ClusterExport[], overrides: Partial<ServiceImportInput> = {}): ServiceImportInput {
  return {
    namespace: 'demo',
    name: 'web',
    resolution: resolveImport(exports),
    derivedServiceName: 'imported-web-0123456789',
    derivedService: { clusterIPs: ['10.96.0.10'], ipFamilies: ['IPv4'] },
    generation: 1,
    now: T0,
    ...overrides,
  };
}

/** The ServiceImport as stored after writing `desired` (metadata, spec, status as JSON). */
function asStored(desired: ReturnType<typeof desiredServiceImport>): StoredServiceImport {
  return JSON.parse(
    JSON.stringify({
      metadata: { labels: desired.labels, annotations: desired.annotations, uid: 'u' },
      spec: desired.spec,
      status: desired.status,
    }),
  ) as StoredServiceImport;
}

describe('core/service-import', () => {
  describe('desiredServiceImport (I1–I5)', () => {
    it('I3/I4/I5: a ClusterSetIP import carries the derived Service IP, the clusters and Ready=True', () => {
      const si = desiredServiceImport(input([clusterExport('east', 1000), clusterExport('west', 2000)]));
      expect(si.spec).to.deep.equal({
        ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
        ips: ['10.96.0.10'],
        type: 'ClusterSetIP',
        sessionAffinity: 'None',
        ipFamilies: ['IPv4'],
      });
      expect(si.status.clusters).to.deep.equal([{ cluster: 'east' }, { cluster: 'west' }]);
      expect(si.status.conditions).to.deep.equal([
        {
          type: 'Ready',
          status: 'True',
          reason: 'Ready',
          message: 'Imported from clusters east, west.',
          lastTransitionTime: T0,
          observedGeneration: 1,
        },
      ]);
    });

    it('I4: dual-stack IPs follow the ipFamilies order, whatever order the Service lists them in', () => {
      const si = desiredServiceImport(
        input([clusterExport('east', 1000, { ipFamilies: ['IPv6', 'IPv4'] })], {
          derivedService: { clusterIPs: ['10.96.0.10', 'fd00::a'], ipFamilies: ['IPv4', 'IPv6'] },
        }),
      );
      expect(si.spec.ips).to.deep.equal(['fd00::a', '10.96.0.10']);
      expect(si.spec.ipFamilies).to.deep.equal(['IPv6', 'IPv4']);
    });

    it('I4: Headless imports carry no IPs and are Ready once the derived Service exists', () => {
      const si = desiredServiceImport(
        input([clusterExport('east', 1000, { type: 'Headless' })], {
          derivedService: { clusterIPs: ['None'], ipFamilies: ['IPv4'] },
        }),
      );
      expect(si.spec).not.to.have.property('ips');
      expect(si.status.conditions[0]).to.include({ status: 'True', reason: 'Ready' });
    });

    it('I5: Pending while the derived Service does not exist or has no IP yet', () => {
      const missing = desiredServiceImport(input([clusterExport('east', 1000)], { derivedService: undefined }));
      expect(missing.spec).not.to.have.property('ips');
      expect(missing.status.conditions[0]).to.include({
        status: 'False',
        reason: 'Pending',
        message: 'Waiting for the derived Service demo/imported-web-0123456789 to be created.',
      });
      const noIP = desiredServiceImport(
        input([clusterExport('east', 1000, { ipFamilies: ['IPv4', 'IPv6'] })], {
          derivedService: { clusterIPs: ['10.96.0.10'], ipFamilies: ['IPv4'] },
        }),
      );
      expect(noIP.spec.ips).to.deep.equal(['10.96.0.10']);
      expect(noIP.status.conditions[0]).to.include({ status: 'False', reason: 'Pending' });
      expect(noIP.status.conditions[0]?.message).to.contain('(IPv6)');
    });

    it("I5: IPFamilyNotSupported when the cluster refused the families, with the server's reason and what to do", () => {
      const si = desiredServiceImport(
        input([clusterExport('east', 1000, { ipFamilies: ['IPv6'] })], {
          derivedService: undefined,
          ipFamilyNotSupported: 'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
        }),
      );
      expect(si.status.conditions[0]).to.include({ status: 'False', reason: 'IPFamilyNotSupported' });
      expect(si.status.conditions[0]?.message).to.equal(
        'This cluster refused the derived Service demo/imported-web-0123456789 for IP families IPv6 ' +
          '(spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster); enable those families on this cluster or export the service with families it supports.',
      );
    });

    it("uses the derived Service's families when no export states any", () => {
      const si = desiredServiceImport(input([clusterExport('east', 1000, { ipFamilies: [] })]));
      expect(si.spec).to.deep.include({ ips: ['10.96.0.10'], ipFamilies: ['IPv4'] });
      expect(si.status.conditions[0]).to.include({ reason: 'Ready' });
    });

    it('E7: labels and annotations are the exported ones of the winning export, plus our created-by label and the export record', () => {
      const exports = [
        clusterExport('east', 1000, { exportedLabels: { team: 'a' }, exportedAnnotations: { note: 'x' } }),
        clusterExport('west', 2000),
      ];
      const si = desiredServiceImport(input(exports));
      expect(si.labels).to.deep.equal({ team: 'a', [LABEL_CREATED_BY]: CONTROLLER_NAME });
      const { [EXPORT_RECORD_ANNOTATION]: record, ...exported } = si.annotations;
      expect(exported).to.deep.equal({ note: 'x' });
      expect(
        decodeExportRecord(record)?.map((e) => [e.clusterId, e.exportCreationTimestamp, e.exportedLabels]),
      ).to.deep.equal([
        ['east', 1000, { team: 'a' }],
        ['west', 2000, {}],
      ]);
    });

    it('X3: ClientIP affinity, its timeout, traffic policy and distribution come from the winning export', () => {
      const si = desiredServiceImport(
        input([
          clusterExport('east', 1000, {
            sessionAffinity: 'ClientIP',
            sessionAffinityTimeoutSeconds: 60,
            internalTrafficPolicy: 'Local',
            trafficDistribution: 'PreferClose',
          }),
        ]),
      );
      expect(si.spec).to.deep.include({
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
        internalTrafficPolicy: 'Local',
        trafficDistribution: 'PreferClose',
      });
    });

    it('dead clusters: a silent cluster keeps its part in the spec but leaves status.clusters, and Ready names it', () => {
      const exports = [
        clusterExport('east', 1000),
        clusterExport('west', 2000, { ports: [port('http', 80), port('admin', 9000)] }),
      ];
      const heard = Date.parse('2026-01-01T00:01:02.345Z');
      const all = desiredServiceImport(input(exports));
      const si = desiredServiceImport(input(exports, { silent: new Map([['west', heard]]) }));
      expect(si.spec).to.deep.equal(all.spec);
      expect(si.annotations).to.deep.equal(all.annotations);
      expect(si.status.clusters).to.deep.equal([{ cluster: 'east' }]);
      const ready = si.status.conditions.find((c) => c.type === 'Ready')!;
      expect([ready.status, ready.reason]).to.deep.equal(['True', 'Ready']);
      expect(ready.message).to.equal(
        'Imported from cluster east; endpoints of silent cluster west (last heard 2026-01-01T00:01:02Z) withdrawn: no heartbeat ' +
          'in Cloud Map for longer than --dead-cluster-ttl. They return once its worker runs again; for a cluster gone for good, reap it with --reap-dead-clusters-after.',
      );
      const none = desiredServiceImport(
        input(exports, {
          silent: new Map([
            ['west', heard],
            ['east', heard],
          ]),
        }),
      );
      expect(none.status.clusters).to.deep.equal([]);
      expect(none.status.conditions.find((c) => c.type === 'Ready')!.message).to.match(
        /^No cluster serves endpoints; endpoints of silent clusters east \(.*\), west \(/,
      );
      expect(serviceImportNeedsUpdate(si, asStored(all))).to.deep.equal({ metadata: false, spec: false, status: true });
    });

    it('I5, M8: a cluster whose export Cloud Map holds only part of makes Ready False, PartialExport, naming the cluster and the counts', () => {
      const exports = [clusterExport('east', 1000), clusterExport('west', 2000)];
      const si = desiredServiceImport(
        input(exports, { partial: new Map([['west', { registered: 1000, desired: 1100 }]]) }),
      );
      const ready = si.status.conditions.find((c) => c.type === 'Ready')!;
      expect([ready.status, ready.reason]).to.deep.equal(['False', 'PartialExport']);
      expect(ready.message).to.include('cluster west exports 1,000 of its 1,100 instances').and.include('quota');
      expect(si.status.clusters).to.deep.equal([{ cluster: 'east' }, { cluster: 'west' }]);
      const whole = desiredServiceImport(input(exports, { partial: new Map() })).status.conditions.find(
        (c) => c.type === 'Ready',
      )!;
      expect([whole.status, whole.reason]).to.deep.equal(['True', 'Ready']);
    });

    it('keeps lastTransitionTime while the Ready status holds, and other condition types as they are', () => {
      const first = desiredServiceImport(input([clusterExport('east', 1000)]));
      const other = { type: 'Custom', status: 'True' as const, reason: 'X', message: 'x', lastTransitionTime: T0 };
      const again = desiredServiceImport(
        input([clusterExport('east', 1000), clusterExport('west', 2000)], {
          now: T1,
          currentConditions: [other, ...first.status.conditions],
        }),
      );
      expect(again.status.conditions).to.deep.equal([
        other,
        {
          type: 'Ready',
          status: 'True',
          reason: 'Ready',
          message: 'Imported from clusters east, west.',
          lastTransitionTime: T0,
          observedGeneration: 1,
        },
      ]);
      const pending = desiredServiceImport(
        input([clusterExport('east', 1000)], {
          now: T1,
          derivedService: undefined,
          currentConditions: first.status.conditions,
        }),
      );
      expect(pending.status.conditions[0]?.lastTransitionTime).to.equal(T1);
    });
  });

  describe('serviceImportKeeper (I6, M3)', () => {
    it("M3: ours by our label, v0.3.1's by its derived-service annotation (taken over), anyone else's otherwise", () => {
      expect(serviceImportKeeper({ labels: { [LABEL_CREATED_BY]: CONTROLLER_NAME } })).to.equal('ours');
      expect(
        serviceImportKeeper({
          labels: { [LABEL_CREATED_BY]: CONTROLLER_NAME },
          annotations: { [V031_DERIVED_SERVICE_ANNOTATION]: 'imported-abc' },
        }),
      ).to.equal('ours');
      expect(
        serviceImportKeeper({ annotations: { [V031_DERIVED_SERVICE_ANNOTATION]: 'imported-0123456789' } }),
      ).to.equal('v0.3.1');
      expect(serviceImportKeeper({ annotations: { [V031_DERIVED_SERVICE_ANNOTATION]: '' } })).to.equal('v0.3.1');
      expect(serviceImportKeeper({})).to.equal('other');
      expect(
        serviceImportKeeper({ labels: { [LABEL_CREATED_BY]: 'someone-else' }, annotations: { other: 'x' } }),
      ).to.equal('other');
    });
  });

  describe('serviceImportNeedsUpdate', () => {
    const desired = desiredServiceImport(
      input([clusterExport('east', 1000, { ports: [port('http', 80), port('https', 443)] })]),
    );

    it('nothing to write when the stored object matches (port order, cluster order and lastTransitionTime do not count)', () => {
      const stored = asStored(desired);
      stored.spec!.ports!.reverse();
      stored.status!.conditions![0]!.lastTransitionTime = T1;
      expect(serviceImportNeedsUpdate(desired, stored)).to.deep.equal({ metadata: false, spec: false, status: false });
    });

    it('E7: an unexported label or annotation must go (metadata write)', () => {
      const stored = asStored(desired);
      stored.metadata!.labels = { ...stored.metadata!.labels, old: 'label' };
      expect(serviceImportNeedsUpdate(desired, stored)).to.deep.equal({ metadata: true, spec: false, status: false });
    });

    it('a changed spec field or IP is a spec write', () => {
      for (const change of [
        { type: 'Headless' },
        { ips: ['10.96.0.11'] },
        { sessionAffinity: 'ClientIP' },
        { ports: [{ name: 'http', port: 80 }] },
      ]) {
        const stored = asStored(desired);
        Object.assign(stored.spec!, change);
        expect(serviceImportNeedsUpdate(desired, stored).spec, JSON.stringify(change)).to.equal(true);
      }
    });

    it('I8: status.endpointSliceObjects is Present, and a stored import without it gets a status write', () => {
      expect(desired.status.endpointSliceObjects).to.equal('Present');
      const older = asStored(desired);
      delete older.status!.endpointSliceObjects;
      expect(serviceImportNeedsUpdate(desired, older)).to.deep.equal({ metadata: false, spec: false, status: true });
      expect(serviceImportNeedsUpdate(desired, asStored(desired)).status).to.equal(false);
    });

    it('I3/I5: a change of clusters or of the Ready condition is a status write', () => {
      const clusters = asStored(desired);
      clusters.status!.clusters = [{ cluster: 'east' }, { cluster: 'gone' }];
      expect(serviceImportNeedsUpdate(desired, clusters)).to.deep.equal({ metadata: false, spec: false, status: true });
      const condition = asStored(desired);
      condition.status!.conditions = [];
      expect(serviceImportNeedsUpdate(desired, condition).status).to.equal(true);
    });
  });
});
