import { expect } from 'chai';
import {
  CLUSTER_ID_PROPERTY,
  CLUSTERSET_ID_PROPERTY,
  LABEL_SERVICE_NAME,
  SERVICE_EXPORT_FINALIZER,
} from '../../../src/core/names.ts';
import { mutateAdmission } from '../../../src/webhook/admission/mutate.ts';
import { validateAdmission } from '../../../src/webhook/admission/validate.ts';
import {
  clusterProperty,
  context,
  request,
  service,
  serviceExport,
  serviceImport,
  viewWith,
  WORKER,
} from '../../support/webhook-fixtures.ts';

describe('webhook validate/mutate dispatch (cache-backed)', () => {
  describe('ServiceExport', () => {
    it('C1: refused while the cluster has no identity', () => {
      const d = validateAdmission(
        request('ServiceExport', 'CREATE', serviceExport('web')),
        context(viewWith({ identity: false })),
      );
      expect(d.allowed).to.equal(false);
      expect(d.message)
        .to.contain(CLUSTER_ID_PROPERTY)
        .and.contain(CLUSTERSET_ID_PROPERTY)
        .and.contain('kubectl apply');
    });
    it('C1: refused when only one property exists, naming the other', () => {
      const view = viewWith({ identity: false });
      view.clusterProperties.upsert(clusterProperty(CLUSTER_ID_PROPERTY, 'east'));
      const d = validateAdmission(request('ServiceExport', 'CREATE', serviceExport('web')), context(view));
      expect(d.message)
        .to.contain(`ClusterProperty ${CLUSTERSET_ID_PROPERTY}`)
        .and.not.contain(`"name":"${CLUSTER_ID_PROPERTY}"`);
    });
    it('E4: a name no Service can have (over 63 characters, not a DNS-1035 label) is refused at creation, saying why and what to do', () => {
      const why: Record<string, string> = {
        ['a'.repeat(64)]: 'it is 64 characters long, over 63',
        ['a'.repeat(253)]: 'it is 253 characters long, over 63',
        'web.v1': 'a Service name has only lowercase letters',
        '1web': 'starts with a letter',
      };
      for (const [name, reason] of Object.entries(why)) {
        const d = validateAdmission(request('ServiceExport', 'CREATE', serviceExport(name)), context());
        expect(d.allowed, name).to.equal(false);
        expect(d.message)
          .to.contain(`ServiceExport demo/${name} can never export anything`)
          .and.contain(reason)
          .and.contain('Name the ServiceExport exactly as the Service to export.');
      }
      expect(
        validateAdmission(request('ServiceExport', 'CREATE', serviceExport('a'.repeat(63))), context()).allowed,
      ).to.equal(true);
      // One admitted before the rule stays updatable (a name never changes).
      const old = serviceExport('web.v1');
      expect(
        validateAdmission(
          request('ServiceExport', 'UPDATE', serviceExport('web.v1', { spec: { exportedLabels: { a: 'b' } } }), old),
          context(),
        ).allowed,
      ).to.equal(true);
    });
    it('E4: admitted with a warning when the Service is missing', () => {
      const d = validateAdmission(request('ServiceExport', 'CREATE', serviceExport('web')), context());
      expect(d).to.deep.include({
        allowed: true,
        warnings: ['Service demo/web does not exist yet; it is exported as soon as it is created (E4).'],
      });
    });
    it("E5: admitted with a warning for an ExternalName Service by default, even when it differs from a peer's export", () => {
      const view = viewWith({
        services: [service('web', { type: 'ExternalName' })],
        imports: [serviceImport('web', ['west'])],
      });
      const d = validateAdmission(request('ServiceExport', 'CREATE', serviceExport('web')), context(view));
      expect(d.allowed).to.equal(true);
      expect(d.warnings).to.have.length(1);
      expect(d.warnings[0]).to.contain('(E5)');
    });
    it('E5: refused for an ExternalName Service under the opt-in external-name policy Reject', () => {
      const view = viewWith({ services: [service('web', { type: 'ExternalName' })] });
      const d = validateAdmission(request('ServiceExport', 'CREATE', serviceExport('web')), {
        ...context(view),
        externalNamePolicy: 'Reject',
      });
      expect(d.allowed).to.equal(false);
      expect(d.message).to.contain('(E5; external-name policy Reject)');
    });
    it('admitted silently when the Service exists and nobody else exports it', () => {
      expect(
        validateAdmission(
          request('ServiceExport', 'CREATE', serviceExport('web')),
          context(viewWith({ services: [service('web')] })),
        ),
      ).to.deep.include({ allowed: true, warnings: [] });
    });
    it('X3: a conflicting export is warned under Warn and refused under Reject', () => {
      const view = viewWith({
        services: [service('web', { clusterIP: 'None' })],
        imports: [serviceImport('web', ['west'])],
      });
      const warned = validateAdmission(request('ServiceExport', 'CREATE', serviceExport('web')), context(view));
      expect(warned.allowed).to.equal(true);
      expect(warned.warnings).to.deep.equal([
        'TypeConflict (X3): type ClusterSetIP from cluster west (oldest export) wins over Headless from east',
      ]);
      const refused = validateAdmission(
        request('ServiceExport', 'CREATE', serviceExport('web')),
        context(view, 'Reject'),
      );
      expect(refused.allowed).to.equal(false);
      expect(refused.message).to.contain('TypeConflict');
    });
    it('an object that does not match the CRD schema is denied with the field at fault (400)', () => {
      const bad = serviceExport('web', { spec: { exportedLabels: { team: 7 } } } as never);
      const d = validateAdmission(request('ServiceExport', 'CREATE', bad), context());
      expect(d).to.deep.include({ allowed: false, code: 400 });
      expect(d.message).to.equal('ServiceExport demo/web does not parse: spec.exportedLabels.team: must be string');
    });
    it('metadata-only and status updates, and updates of an export being deleted, are never blocked', () => {
      const ctx = context(viewWith({ identity: false }));
      const old = serviceExport('web');
      const relabelled = serviceExport('web', { metadata: { labels: { a: 'b' }, finalizers: [] } });
      expect(validateAdmission(request('ServiceExport', 'UPDATE', relabelled, old), ctx).allowed).to.equal(true);
      const deleting = serviceExport('web', {
        spec: { exportedLabels: { a: 'b' } },
        metadata: { deletionTimestamp: '2026-01-01T11:00:00Z' },
      });
      expect(validateAdmission(request('ServiceExport', 'UPDATE', deleting, old), ctx).allowed).to.equal(true);
      const odd = serviceExport('web', {
        spec: { exportedLabels: { a: 1 } },
        metadata: { deletionTimestamp: '2026-01-01T11:00:00Z' },
      } as never);
      expect(
        validateAdmission(request('ServiceExport', 'UPDATE', odd, old), ctx).allowed,
        'finalizer removal is never blocked',
      ).to.equal(true);
      expect(
        validateAdmission(request('ServiceExport', 'UPDATE', relabelled, old, { subResource: 'status' }), ctx).allowed,
      ).to.equal(true);
      const respec = serviceExport('web', { spec: { exportedLabels: { a: 'b' } } });
      expect(
        validateAdmission(request('ServiceExport', 'UPDATE', respec, old), ctx).allowed,
        'a spec change is checked',
      ).to.equal(false);
    });
  });

  describe('Service updates of exported Services', () => {
    const view = () =>
      viewWith({
        services: [service('web')],
        exports: [serviceExport('web')],
        imports: [serviceImport('web', ['east', 'west'])],
      });
    it("X2: a port change is compared with the peers' recorded ports, not with this cluster's own old ones", () => {
      // The record holds east's old ports (http/80, metrics/9090) and west's (http/80): east's are replaced by the update.
      const imported = serviceImport('web', ['east', 'west'], {
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'metrics', protocol: 'TCP', port: 9090 },
        ],
      });
      const v = viewWith({ services: [service('web')], exports: [serviceExport('web')], imports: [imported] });
      const same = validateAdmission(
        request(
          'Service',
          'UPDATE',
          service('web', {
            ports: [
              { name: 'http', protocol: 'TCP', port: 80 },
              { name: 'metrics', protocol: 'TCP', port: 9090 },
            ],
          }),
          service('web'),
        ),
        context(v),
      );
      expect(same).to.deep.include({ allowed: true, warnings: [] });
      const clash = validateAdmission(
        request(
          'Service',
          'UPDATE',
          service('web', {
            ports: [
              { name: 'http', protocol: 'TCP', port: 80 },
              { name: 'metrics', protocol: 'TCP', port: 9091 },
            ],
          }),
          service('web'),
        ),
        context(v),
      );
      expect(clash.warnings).to.deep.equal([
        'PortConflict (X2): port "metrics" is TCP/9090 in cluster west (older export, wins) but TCP/9091 in cluster east',
      ]);
      // X2 (mcs-api v0.5.0): dropping a port the peers export is a PortConflict too, although nothing clashes.
      const fewer = validateAdmission(request('Service', 'UPDATE', service('web'), service('web')), context(v));
      expect(fewer.warnings).to.deep.equal([
        'PortConflict (X2): ports of east differ from the oldest export (west): lacks "metrics" TCP/9090',
      ]);
    });
    it('X3: refused under Reject', () => {
      const d = validateAdmission(
        request('Service', 'UPDATE', service('web', { sessionAffinity: 'ClientIP' }), service('web')),
        context(view(), 'Reject'),
      );
      expect(d.allowed).to.equal(false);
      expect(d.message).to.contain('SessionAffinityConflict');
    });
    it('unexported Services and clusters without identity pass untouched', () => {
      expect(
        validateAdmission(
          request('Service', 'UPDATE', service('other', { clusterIP: 'None' }), service('other')),
          context(view()),
        ),
      ).to.deep.include({ allowed: true, warnings: [] });
      const noIdentity = viewWith({
        identity: false,
        exports: [serviceExport('web')],
        imports: [serviceImport('web', ['west'])],
      });
      expect(
        validateAdmission(
          request('Service', 'UPDATE', service('web', { clusterIP: 'None' }), service('web')),
          context(noIdentity),
        ),
      ).to.deep.include({ allowed: true, warnings: [] });
    });
    it('E5: turning an exported Service into ExternalName is admitted with a warning', () => {
      const d = validateAdmission(
        request('Service', 'UPDATE', service('web', { type: 'ExternalName' }), service('web')),
        context(view()),
      );
      expect(d.allowed).to.equal(true);
      expect(d.warnings[0]).to.contain('(E5)');
    });
    it('a Service the rules cannot read is denied saying why (400)', () => {
      const d = validateAdmission(
        request(
          'Service',
          'UPDATE',
          service('web', { ports: [{ name: 'x', protocol: 'FOO', port: 1 }] }),
          service('web'),
        ),
        context(view()),
      );
      expect(d).to.deep.include({ allowed: false, code: 400 });
      expect(d.message).to.contain('protocol "FOO"');
      const garbled = validateAdmission(
        request(
          'Service',
          'UPDATE',
          { metadata: { name: 'web', namespace: 'demo' }, spec: { ports: 'x' } },
          service('web'),
        ),
        context(view()),
      );
      expect(garbled.message).to.contain('spec.ports: must be a list');
    });
  });

  describe('ClusterProperty', () => {
    const withExport = () => viewWith({ exports: [serviceExport('web')] });
    it('C3: a value change is refused while ServiceExports exist, counting them without naming any', () => {
      const d = validateAdmission(
        request(
          'ClusterProperty',
          'UPDATE',
          clusterProperty(CLUSTER_ID_PROPERTY, 'west'),
          clusterProperty(CLUSTER_ID_PROPERTY, 'east'),
        ),
        context(withExport()),
      );
      expect(d.allowed).to.equal(false);
      expect(d.message)
        .to.contain('it has 1 (`kubectl get serviceexports --all-namespaces` lists them)')
        .and.not.contain('web');
    });
    it('C3: deletion is refused while ServiceExports exist', () => {
      const d = validateAdmission(
        request('ClusterProperty', 'DELETE', null, clusterProperty(CLUSTERSET_ID_PROPERTY, 'set1')),
        context(withExport()),
      );
      expect(d.allowed).to.equal(false);
    });
    it('C2: an invalid cluster id is refused; the 128000 limit is enforced from the CRD schema', () => {
      expect(
        validateAdmission(request('ClusterProperty', 'CREATE', clusterProperty(CLUSTER_ID_PROPERTY, 'East')), context())
          .allowed,
      ).to.equal(false);
      const long = validateAdmission(
        request('ClusterProperty', 'CREATE', clusterProperty('note.example.com', 'x'.repeat(128001))),
        context(),
      );
      expect(long).to.deep.include({ allowed: false, code: 400 });
      expect(long.message).to.contain('spec.value: must NOT have more than 128000 characters');
      expect(
        validateAdmission(
          request('ClusterProperty', 'CREATE', clusterProperty('note.example.com', 'x'.repeat(128000))),
          context(),
        ).allowed,
      ).to.equal(true);
    });
  });

  describe('I6: ServiceImports and EndpointSlices', () => {
    it('refuses users and admits the worker', () => {
      const si = serviceImport('web', []);
      expect(validateAdmission(request('ServiceImport', 'CREATE', si), context()).allowed).to.equal(false);
      expect(
        validateAdmission(request('ServiceImport', 'CREATE', si, null, { username: WORKER }), context()).allowed,
      ).to.equal(true);
      expect(
        validateAdmission(request('ServiceImport', 'UPDATE', si, si, { subResource: 'status' }), context()).allowed,
        'status too',
      ).to.equal(false);
    });
    it('guards only labelled EndpointSlices', () => {
      const slice = (labels: Record<string, string>) => ({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 's', namespace: 'demo', labels },
        addressType: 'IPv4',
        endpoints: [],
      });
      expect(
        validateAdmission(request('EndpointSlice', 'CREATE', slice({ [LABEL_SERVICE_NAME]: 'web' })), context())
          .allowed,
      ).to.equal(false);
      expect(validateAdmission(request('EndpointSlice', 'CREATE', slice({})), context()).allowed).to.equal(true);
      expect(
        validateAdmission(request('EndpointSlice', 'DELETE', null, slice({ [LABEL_SERVICE_NAME]: 'web' })), context())
          .allowed,
      ).to.equal(false);
    });
  });

  describe('while caches are still loading', () => {
    it('refuses decisions that need them as "still loading" (503), never deciding on an empty cache', () => {
      const ctx = context(viewWith({ identity: false }), 'Warn', ['clusterProperties', 'serviceExports']);
      const d = validateAdmission(request('ServiceExport', 'CREATE', serviceExport('web')), ctx);
      expect(d).to.deep.include({ allowed: false, code: 503 });
      expect(d.message).to.equal(
        'ServiceExport demo/web cannot be checked yet: the mcs-cloudmap webhook is still loading its caches (clusterProperties); retry in a few seconds.',
      );
      const c3 = validateAdmission(
        request('ClusterProperty', 'DELETE', null, clusterProperty(CLUSTER_ID_PROPERTY, 'east')),
        ctx,
      );
      expect(c3.message).to.contain('still loading its caches (serviceExports)');
    });
    it('decides what needs no cache: C2 on create, I6, mutation; Services pass as with failurePolicy Ignore', () => {
      const ctx = context(viewWith(), 'Reject', ['services', 'serviceExports', 'serviceImports', 'clusterProperties']);
      expect(
        validateAdmission(request('ClusterProperty', 'CREATE', clusterProperty(CLUSTER_ID_PROPERTY, 'Bad_Id')), ctx)
          .message,
      ).to.contain('(C2)');
      expect(
        validateAdmission(request('ClusterProperty', 'CREATE', clusterProperty(CLUSTER_ID_PROPERTY, 'east')), ctx)
          .allowed,
      ).to.equal(true);
      expect(validateAdmission(request('ServiceImport', 'CREATE', serviceImport('web', [])), ctx).message).to.contain(
        '(I6)',
      );
      expect(
        validateAdmission(request('Service', 'UPDATE', service('web', { clusterIP: 'None' }), service('web')), ctx),
      ).to.deep.include({ allowed: true, warnings: [] });
    });
  });

  it('a kind this webhook does not handle is denied with a pointer to the configuration (400)', () => {
    const d = validateAdmission(request('Pod', 'CREATE', { metadata: { name: 'p' } }), context());
    expect(d).to.deep.include({ allowed: false, code: 400 });
    expect(d.message).to.contain('does not handle Pod.example.com');
  });

  describe('mutate', () => {
    it('E3: a new ServiceExport gets the finalizer; other operations get nothing', () => {
      expect(mutateAdmission(request('ServiceExport', 'CREATE', serviceExport('web'))).patch).to.deep.equal([
        { op: 'add', path: '/metadata/finalizers', value: [SERVICE_EXPORT_FINALIZER] },
      ]);
      expect(
        mutateAdmission(request('ServiceExport', 'CREATE', serviceExport('web'), null, { dryRun: true })).patch,
        'dry-run: same patch, no side effects',
      ).to.have.length(1);
      expect(
        mutateAdmission(request('ServiceExport', 'UPDATE', serviceExport('web'), serviceExport('web'))).patch,
      ).to.deep.equal([]);
    });
    it('denies what it cannot read or does not handle', () => {
      expect(mutateAdmission(request('ServiceExport', 'CREATE', { metadata: { finalizers: 'x' } }))).to.deep.include({
        allowed: false,
        code: 400,
      });
      expect(mutateAdmission(request('ServiceImport', 'CREATE', serviceImport('web', []))).allowed).to.equal(false);
    });
  });
});
