import { expect } from 'chai';
import fc from 'fast-check';
import type { ExportFacts } from '../../../src/core/conflicts.ts';
import { exportRecordAnnotations } from '../../../src/core/export-record.ts';
import {
  CLUSTER_ID_PROPERTY,
  CLUSTERSET_ID_PROPERTY,
  EXPORT_RECORD_ANNOTATION,
  LABEL_SERVICE_NAME,
  SERVICE_EXPORT_FINALIZER,
} from '../../../src/core/names.ts';
import { checkClusterPropertiesPresent } from '../../../src/webhook/admission/cluster-properties-present.ts';
import { createPropertyCommand } from '../../../src/core/cluster-id.ts';
import { checkClusterPropertyChange } from '../../../src/webhook/admission/cluster-property-change.ts';
import { allow, combine, deny, WARNING_MAX } from '../../../src/webhook/admission/decision.ts';
import { checkExportConflicts, type ExportConflictCheck } from '../../../src/webhook/admission/export-conflicts.ts';
import { addExportFinalizer } from '../../../src/webhook/admission/export-finalizer.ts';
import { checkExportedService, checkServiceTypeChange } from '../../../src/webhook/admission/exported-service.ts';
import { checkWorkerOnlyWrite, type GuardedWrite } from '../../../src/webhook/admission/worker-only-writes.ts';
import { PEER_EXPORTED, service, serviceImport, WORKER } from '../../support/webhook-fixtures.ts';

describe('webhook admission rules', () => {
  describe('decisions', () => {
    it('the first denial wins; otherwise warnings and patches add up', () => {
      const patch = [{ op: 'add' as const, path: '/x', value: 1 }];
      expect(combine([allow(['a']), allow(['b'], patch)])).to.deep.include({
        allowed: true,
        warnings: ['a', 'b'],
        patch,
      });
      expect(combine([allow(['a']), deny('no'), deny('later')])).to.deep.include({
        allowed: false,
        message: 'no',
        code: 403,
      });
    });
    it('W1: warnings never exceed the length Kubernetes keeps', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 400 }), (w) => {
          const [out] = allow([w]).warnings;
          expect(out!.length).to.be.at.most(WARNING_MAX);
          if (w.length <= WARNING_MAX) expect(out).to.equal(w);
        }),
      );
    });
  });

  describe('C1: both well-known ClusterProperties before any export', () => {
    it('admits when both exist', () => {
      expect(checkClusterPropertiesPresent({ clusterId: 'east', clustersetId: 'set1' }, 'demo/web').allowed).to.equal(
        true,
      );
    });
    const rows = [
      { clusterId: undefined, clustersetId: 'set1', missing: [CLUSTER_ID_PROPERTY] },
      { clusterId: 'east', clustersetId: undefined, missing: [CLUSTERSET_ID_PROPERTY] },
      { clusterId: undefined, clustersetId: undefined, missing: [CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY] },
    ];
    for (const row of rows) {
      it(`C1: refuses without ${row.missing.join(' and ')}, naming it and the command that creates it`, () => {
        const d = checkClusterPropertiesPresent(row, 'demo/web');
        expect(d.allowed).to.equal(false);
        expect(d.code).to.equal(403);
        expect(d.message).to.contain('ServiceExport demo/web').and.contain('(C1)');
        for (const name of row.missing)
          expect(d.message).to.contain(`ClusterProperty ${name}`).and.contain(createPropertyCommand(name));
        const present = [CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY].filter((n) => !row.missing.includes(n));
        for (const name of present) expect(d.message).not.to.contain(`"name":"${name}"`);
      });
    }
    it('C1: the command is a kubectl apply of a valid ClusterProperty', () => {
      const cmd = createPropertyCommand(CLUSTER_ID_PROPERTY);
      const m = /^echo '(.*)' \| kubectl apply -f -$/.exec(cmd);
      expect(m, cmd).to.not.equal(null);
      expect(JSON.parse(m![1]!)).to.deep.equal({
        apiVersion: 'about.k8s.io/v1beta1',
        kind: 'ClusterProperty',
        metadata: { name: CLUSTER_ID_PROPERTY },
        spec: { value: '<this-cluster-id>' },
      });
    });
  });

  describe('E4, E5: the Service behind the export', () => {
    it('E4: a missing Service is admitted with a warning', () => {
      const d = checkExportedService(undefined, 'demo/web', 'Warn');
      expect(d.allowed).to.equal(true);
      expect(d.warnings).to.deep.equal([
        'Service demo/web does not exist yet; it is exported as soon as it is created (E4).',
      ]);
    });
    const externalName = service('web', { type: 'ExternalName', externalName: 'x.example.com' } as never);
    it("E5: by default an ExternalName Service's export is admitted with a warning, so Valid=False can be seen", () => {
      const d = checkExportedService(externalName, 'demo/web', 'Warn');
      expect(d.allowed).to.equal(true);
      expect(d.warnings).to.deep.equal([
        'Service demo/web is ExternalName, which cannot be exported: expect Valid=False, InvalidServiceType (E5).',
      ]);
    });
    it('E5: with the opt-in external-name policy Reject it is refused, saying what can be exported', () => {
      const d = checkExportedService(externalName, 'demo/web', 'Reject');
      expect(d.allowed).to.equal(false);
      expect(d.message)
        .to.contain('ExternalName')
        .and.contain('(E5; external-name policy Reject)')
        .and.contain('ClusterIP, NodePort, LoadBalancer or headless');
    });
    for (const spec of [{ type: 'ClusterIP' }, { type: 'NodePort' }, { type: 'LoadBalancer' }, { clusterIP: 'None' }]) {
      it(`E6: ${JSON.stringify(spec)} is admitted without warnings`, () => {
        for (const policy of ['Warn', 'Reject'] as const) {
          expect(checkExportedService(service('web', spec), 'demo/web', policy)).to.deep.include({
            allowed: true,
            warnings: [],
          });
        }
      });
    }
    it('E5: an exported Service turned ExternalName is admitted with the consequence', () => {
      expect(checkServiceTypeChange(service('web', { type: 'ExternalName' }), 'demo/web').warnings[0]).to.match(
        /becomes invalid.*\(E5\)/,
      );
      expect(checkServiceTypeChange(service('web'), 'demo/web').warnings).to.deep.equal([]);
    });
  });

  describe('C2, C3, C5: ClusterProperty changes', () => {
    const base = { name: CLUSTER_ID_PROPERTY, value: undefined, oldValue: undefined, exports: 0 };
    it('C2: refuses a cluster id that is not a DNS label, with the core message', () => {
      for (const value of ['East_1', 'a'.repeat(64), '-x', 'x.y']) {
        const d = checkClusterPropertyChange({ ...base, operation: 'CREATE', value });
        expect(d.allowed, value).to.equal(false);
        expect(d.message).to.contain('(C2)').and.contain(CLUSTER_ID_PROPERTY);
      }
      expect(checkClusterPropertyChange({ ...base, operation: 'CREATE', value: 'east-1' }).allowed).to.equal(true);
    });
    it('C2: only the cluster id is held to the DNS label rule', () => {
      expect(
        checkClusterPropertyChange({
          ...base,
          name: CLUSTERSET_ID_PROPERTY,
          operation: 'CREATE',
          value: 'My ClusterSet',
        }).allowed,
      ).to.equal(true);
    });
    for (const name of [CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY]) {
      it(`C3: ${name} may not change value or be deleted while exports exist; the message counts them and names none`, () => {
        const changed = checkClusterPropertyChange({
          ...base,
          name,
          operation: 'UPDATE',
          value: 'west',
          oldValue: 'east',
          exports: 5,
        });
        expect(changed.allowed).to.equal(false);
        expect(changed.message)
          .to.contain(`ClusterProperty ${name} cannot change from "east" to "west"`)
          .and.contain('(C3): it has 5 (`kubectl get serviceexports --all-namespaces` lists them).');
        const deleted = checkClusterPropertyChange({
          ...base,
          name,
          operation: 'DELETE',
          oldValue: 'east',
          exports: 1,
        });
        expect(deleted.allowed).to.equal(false);
        expect(deleted.message).to.contain('cannot be deleted').and.contain('(C3): it has 1 (');
      });
      it(`C3: ${name} may change or go when there are no exports, and keep its value with them`, () => {
        expect(
          checkClusterPropertyChange({ ...base, name, operation: 'UPDATE', value: 'west', oldValue: 'east' }).allowed,
        ).to.equal(true);
        expect(checkClusterPropertyChange({ ...base, name, operation: 'DELETE', oldValue: 'east' }).allowed).to.equal(
          true,
        );
        expect(
          checkClusterPropertyChange({
            ...base,
            name,
            operation: 'UPDATE',
            value: 'east',
            oldValue: 'east',
            exports: 1,
          }).allowed,
        ).to.equal(true);
      });
    }
    it('C5: other names under k8s.io are admitted with a warning; ordinary names silently', () => {
      expect(
        checkClusterPropertyChange({ ...base, name: 'region.k8s.io', operation: 'CREATE', value: 'x' }).warnings[0],
      ).to.contain('(C5)');
      expect(
        checkClusterPropertyChange({ ...base, name: 'zone.example.com', operation: 'CREATE', value: 'x' }),
      ).to.deep.include({ allowed: true, warnings: [] });
      expect(
        checkClusterPropertyChange({ ...base, name: 'other.k8s.io', operation: 'DELETE', exports: 1 }).allowed,
      ).to.equal(true);
    });
  });

  describe('I6: only the worker writes ServiceImports and MCS EndpointSlices', () => {
    const writers = { worker: WORKER, deleters: ['system:serviceaccount:kube-system:namespace-controller'] };
    const write = (w: Partial<GuardedWrite>): GuardedWrite => ({
      kind: 'ServiceImport',
      target: 'demo/web',
      operation: 'CREATE',
      username: 'alice',
      labels: undefined,
      oldLabels: undefined,
      ...w,
    });
    it('I6: refuses a user, naming the object, the user and the allowed identity', () => {
      for (const operation of ['CREATE', 'UPDATE', 'DELETE'] as const) {
        const d = checkWorkerOnlyWrite(write({ operation }), writers);
        expect(d.allowed, operation).to.equal(false);
        expect(d.message)
          .to.contain('ServiceImport demo/web')
          .and.contain('user "alice"')
          .and.contain('(I6)')
          .and.not.contain(WORKER);
      }
    });
    it('I6: admits the configured worker identity for every operation', () => {
      for (const operation of ['CREATE', 'UPDATE', 'DELETE'] as const) {
        expect(checkWorkerOnlyWrite(write({ operation, username: WORKER }), writers).allowed).to.equal(true);
      }
      expect(
        checkWorkerOnlyWrite(write({ username: 'bob' }), { ...writers, worker: 'bob' }).allowed,
        'identity is configuration',
      ).to.equal(true);
    });
    it('I6: system deleters may delete but not write', () => {
      const username = writers.deleters[0]!;
      expect(checkWorkerOnlyWrite(write({ operation: 'DELETE', username }), writers).allowed).to.equal(true);
      expect(checkWorkerOnlyWrite(write({ operation: 'UPDATE', username }), writers).allowed).to.equal(false);
    });
    it('I6: EndpointSlices are guarded only when labelled, before or after the write', () => {
      const labelled = { [LABEL_SERVICE_NAME]: 'web' };
      expect(
        checkWorkerOnlyWrite(write({ kind: 'EndpointSlice', labels: { 'kubernetes.io/service-name': 'web' } }), writers)
          .allowed,
      ).to.equal(true);
      expect(checkWorkerOnlyWrite(write({ kind: 'EndpointSlice', labels: labelled }), writers).allowed).to.equal(false);
      const relabel = checkWorkerOnlyWrite(
        write({ kind: 'EndpointSlice', operation: 'UPDATE', labels: {}, oldLabels: labelled }),
        writers,
      );
      expect(relabel.allowed).to.equal(false);
      expect(relabel.message).to.contain(`EndpointSlice demo/web (labelled ${LABEL_SERVICE_NAME})`);
    });
  });

  describe('E3: the clean-up finalizer on new ServiceExports', () => {
    it('adds the finalizer list when there is none', () => {
      expect(addExportFinalizer({ name: 'web' }).patch).to.deep.equal([
        { op: 'add', path: '/metadata/finalizers', value: [SERVICE_EXPORT_FINALIZER] },
      ]);
    });
    it('appends to other finalizers', () => {
      expect(addExportFinalizer({ finalizers: ['x/y'] }).patch).to.deep.equal([
        { op: 'add', path: '/metadata/finalizers/-', value: SERVICE_EXPORT_FINALIZER },
      ]);
    });
    it('is idempotent: applying its patch and asking again patches nothing', () => {
      fc.assert(
        fc.property(
          fc.option(fc.array(fc.constantFrom('a/b', 'c/d', SERVICE_EXPORT_FINALIZER), { maxLength: 4 }), {
            nil: undefined,
          }),
          (finalizers) => {
            const first = addExportFinalizer(finalizers === undefined ? {} : { finalizers });
            const after: string[] = [...(finalizers ?? [])];
            for (const op of first.patch) {
              if (op.path === '/metadata/finalizers') after.push(...(op.value as string[]));
              else after.push(op.value as string);
            }
            expect(after.filter((f) => f === SERVICE_EXPORT_FINALIZER)).to.have.length.at.least(1);
            expect(addExportFinalizer({ finalizers: after }).patch).to.deep.equal([]);
            expect(first.allowed).to.equal(true);
          },
        ),
      );
    });
  });

  describe('X1–X3: conflicts with the exports recorded on the ServiceImport', () => {
    const facts = (over: Partial<ExportFacts> = {}): ExportFacts => ({
      clusterId: 'east',
      exportCreationTimestamp: Date.parse('2026-01-01T11:00:00Z'),
      type: 'ClusterSetIP',
      ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      internalTrafficPolicy: 'Cluster',
      exportedLabels: {},
      exportedAnnotations: {},
      ...over,
    });
    const check = (over: Partial<ExportConflictCheck>): ExportConflictCheck => ({
      clusterId: 'east',
      exportRef: 'demo/web',
      candidate: facts(),
      serviceImport: serviceImport('web', ['west']),
      policy: 'Warn',
      ...over,
    });
    /** A ServiceImport whose record holds exactly `exports` (as the worker writes it). */
    const recorded = (exports: ExportFacts[]) => ({
      ...serviceImport('web', []),
      metadata: { name: 'web', namespace: 'demo', annotations: exportRecordAnnotations(exports) },
    });

    it('admits silently without an import, without peers, or when the export agrees', () => {
      expect(checkExportConflicts(check({ serviceImport: undefined }))).to.deep.include({
        allowed: true,
        warnings: [],
      });
      expect(
        checkExportConflicts(check({ serviceImport: serviceImport('web', ['east'], { type: 'Headless' }) })),
      ).to.deep.include({ allowed: true, warnings: [] });
      expect(checkExportConflicts(check({}))).to.deep.include({ allowed: true, warnings: [] });
    });

    it("compares nothing without a readable export record (an older worker wrote the import): the worker's condition decides", () => {
      const bare = {
        ...serviceImport('web', ['west'], { type: 'Headless' }),
        metadata: { name: 'web', namespace: 'demo' },
      };
      expect(checkExportConflicts(check({ serviceImport: bare }))).to.deep.include({ allowed: true, warnings: [] });
      const garbled = {
        ...bare,
        metadata: { ...bare.metadata, annotations: { [EXPORT_RECORD_ANNOTATION]: '[{"clusterId":1}]' } },
      };
      expect(checkExportConflicts(check({ serviceImport: garbled, policy: 'Reject' }))).to.deep.include({
        allowed: true,
        warnings: [],
      });
    });

    const rows: Array<{
      id: string;
      reason: string;
      candidate: Partial<ExportFacts>;
      peer?: Partial<ExportFacts>;
      field: RegExp;
    }> = [
      {
        id: 'X2',
        reason: 'PortConflict (same name)',
        candidate: { ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] },
        field: /port "http" is TCP\/80 in cluster west \(older export, wins\) but TCP\/8080 in cluster east/,
      },
      {
        id: 'X2',
        reason: 'PortConflict (same port)',
        candidate: { ports: [{ name: 'web', protocol: 'TCP', port: 80 }] },
        field: /TCP\/80 is "http" in cluster west \(older export, wins\) but "web" in cluster east/,
      },
      {
        // mcs-api v0.5.0: ports that are not identical conflict even when nothing clashes (X2).
        id: 'X2',
        reason: 'PortConflict (not identical)',
        candidate: {
          ports: [
            { name: 'http', protocol: 'TCP', port: 80 },
            { name: 'metrics', protocol: 'TCP', port: 9090 },
          ],
        },
        field: /ports of east differ from the oldest export \(west\): adds "metrics" TCP\/9090/,
      },
      {
        id: 'X3',
        reason: 'SessionAffinityConfigConflict',
        candidate: { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 60 },
        peer: { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 30 },
        // The warning is cut at WARNING_MAX; the reason and the winner lead it.
        field: /sessionAffinityConfig timeoutSeconds 30 from cluster west \(oldest export\) wins over/,
      },
      {
        id: 'X3',
        reason: 'TypeConflict',
        candidate: { type: 'Headless' },
        field: /type ClusterSetIP from cluster west \(oldest export\) wins over Headless from east/,
      },
      {
        id: 'X3',
        reason: 'SessionAffinityConflict',
        candidate: { sessionAffinity: 'ClientIP' },
        field: /sessionAffinity None from cluster west/,
      },
      {
        id: 'X3',
        reason: 'InternalTrafficPolicyConflict',
        candidate: { internalTrafficPolicy: 'Local' },
        field: /internalTrafficPolicy Cluster from cluster west/,
      },
      {
        id: 'X3',
        reason: 'TrafficDistributionConflict',
        candidate: { trafficDistribution: 'PreferClose' },
        field: /trafficDistribution \(unset\) from cluster west/,
      },
      {
        id: 'X3',
        reason: 'LabelsConflict',
        candidate: { exportedLabels: { team: 'b' } },
        peer: { exportedLabels: { team: 'a' } },
        field: /exportedLabels \{team=a\} from cluster west \(oldest export\) wins over \{team=b\} from east/,
      },
      {
        id: 'X3',
        reason: 'AnnotationsConflict',
        candidate: { exportedAnnotations: { note: 'x' } },
        field: /exportedAnnotations \{\} from cluster west \(oldest export\) wins over \{note=x\} from east/,
      },
      {
        id: 'X3',
        reason: 'IPFamilyConflict',
        candidate: { ipFamilies: ['IPv6'] },
        field: /ipFamilies IPv4 from cluster west/,
      },
    ];
    for (const row of rows) {
      const west = facts({ clusterId: 'west', exportCreationTimestamp: PEER_EXPORTED, ...row.peer });
      it(`${row.id}: ${row.reason} — Warn admits with a warning led by the Conflict reason, naming the field, the clusters and the winner`, () => {
        const d = checkExportConflicts(check({ candidate: facts(row.candidate), serviceImport: recorded([west]) }));
        expect(d.allowed).to.equal(true);
        expect(d.warnings).to.have.length(1);
        expect(d.warnings[0])
          .to.match(row.field)
          .and.to.match(new RegExp(`^${row.reason.split(' ')[0]} \\(${row.id}\\): `));
        expect(d.warnings[0]!.length).to.be.at.most(WARNING_MAX);
      });
      it(`${row.id}: ${row.reason} — Reject refuses with the same facts and the reason`, () => {
        const d = checkExportConflicts(
          check({ candidate: facts(row.candidate), serviceImport: recorded([west]), policy: 'Reject' }),
        );
        expect(d.allowed).to.equal(false);
        expect(d.message)
          .to.match(row.field)
          .and.contain(row.reason.split(' ')[0]!)
          .and.contain('ServiceExport demo/web')
          .and.contain('conflict policy Reject');
      });
    }

    it("X3: several disagreements give one warning each, in the order of the condition's reasons", () => {
      const d = checkExportConflicts(check({ candidate: facts({ type: 'Headless', sessionAffinity: 'ClientIP' }) }));
      expect(d.warnings.map((w) => w.split(' ')[0])).to.deep.equal(['TypeConflict', 'SessionAffinityConflict']);
    });

    it('X1: when this cluster is itself the oldest exporter, it is named as the winner', () => {
      const oldest = facts({ exportCreationTimestamp: PEER_EXPORTED - 3_600_000, type: 'Headless' });
      const d = checkExportConflicts(check({ candidate: oldest }));
      expect(d.warnings).to.deep.equal([
        'TypeConflict (X3): type Headless from cluster east (oldest export) wins over ClusterSetIP from west',
      ]);
    });

    it("an update replaces this cluster's own recorded export instead of conflicting with it", () => {
      const imported = recorded([
        facts({ clusterId: 'west', exportCreationTimestamp: PEER_EXPORTED }),
        facts({ type: 'Headless', ports: [{ name: 'admin', protocol: 'TCP', port: 8000 }] }),
      ]);
      expect(checkExportConflicts(check({ serviceImport: imported }))).to.deep.include({ allowed: true, warnings: [] });
    });

    it('disagreements among other clusters are warned (the worker will report them here too) but never refused', () => {
      const imported = recorded([
        facts({ clusterId: 'west', exportCreationTimestamp: PEER_EXPORTED }),
        facts({ clusterId: 'north', exportCreationTimestamp: PEER_EXPORTED + 1, type: 'Headless' }),
      ]);
      for (const policy of ['Warn', 'Reject'] as const) {
        const d = checkExportConflicts(check({ serviceImport: imported, policy }));
        expect(d.allowed).to.equal(true);
        expect(d.warnings).to.deep.equal([
          'TypeConflict (X3): type ClusterSetIP from cluster west (oldest export) wins over Headless from north',
        ]);
      }
    });

    it('X1: a refusal names every peer', () => {
      const d = checkExportConflicts(
        check({
          serviceImport: serviceImport('web', ['west', 'north', 'east']),
          candidate: facts({ type: 'Headless' }),
          policy: 'Reject',
        }),
      );
      expect(d.message).to.contain('exported by north, west').and.contain('from cluster north (oldest export)');
    });
  });
});
