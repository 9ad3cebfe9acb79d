import { expect } from 'chai';
import fc from 'fast-check';
import {
  derivedServiceName,
  derivedServiceNeedsUpdate,
  desiredDerivedService,
  type DerivedServiceInput,
  type StoredService,
} from '../../../src/core/derived-service.ts';
import {
  CONTROLLER_NAME,
  DERIVED_SERVICE_PREFIX,
  LABEL_CREATED_BY,
  LABEL_SERVICE_NAME,
} from '../../../src/core/names.ts';
import { serviceImportOwnerReference } from '../../../src/core/service-import.ts';
import { port } from './import-fixtures.ts';

const owner = serviceImportOwnerReference('web', 'uid-1');

function input(properties: Partial<DerivedServiceInput['properties']> = {}): DerivedServiceInput {
  return {
    namespace: 'demo',
    importName: 'web',
    owner,
    properties: {
      type: 'ClusterSetIP',
      ports: [port('http', 80)],
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      ...properties,
    },
  };
}

/** The derived Service as the API server stores it: IPs allocated, defaults filled in. */
function asStored(desired: ReturnType<typeof desiredDerivedService>): StoredService {
  const copy = JSON.parse(JSON.stringify(desired)) as ReturnType<typeof desiredDerivedService> & {
    spec: Record<string, unknown>;
  };
  const headless = copy.spec.clusterIP === 'None';
  Object.assign(copy.metadata, { uid: 'svc-uid', resourceVersion: '7' });
  Object.assign(copy.spec, {
    clusterIP: headless ? 'None' : '10.96.0.10',
    clusterIPs: headless ? ['None'] : ['10.96.0.10'],
    ipFamilies: copy.spec.ipFamilies ?? ['IPv4'],
    ipFamilyPolicy: copy.spec.ipFamilyPolicy ?? (headless ? 'RequireDualStack' : 'SingleStack'),
    internalTrafficPolicy: 'Cluster',
    sessionAffinityConfig:
      copy.spec.sessionAffinityConfig ??
      (copy.spec.sessionAffinity === 'ClientIP' ? { clientIP: { timeoutSeconds: 10800 } } : undefined),
    ports: copy.spec.ports.map((p, i) => ({ ...p, nodePort: 30000 + i })),
  });
  return JSON.parse(JSON.stringify(copy)) as StoredService;
}

describe('core/derived-service', () => {
  describe('derivedServiceName (I4)', () => {
    it('I4: is deterministic, starts with the prefix and keeps the import name readable', () => {
      expect(derivedServiceName('demo', 'nginx-hello')).to.equal(derivedServiceName('demo', 'nginx-hello'));
      expect(derivedServiceName('demo', 'nginx-hello')).to.match(
        new RegExp(`^${DERIVED_SERVICE_PREFIX}nginx-hello-[0-9a-f]{10}$`),
      );
      expect(derivedServiceName('demo', 'web')).not.to.equal(derivedServiceName('other', 'web'));
    });
    it('I4 property: always a DNS-1035 label of at most 63 characters, distinct for distinct names', () => {
      const name = fc.stringMatching(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/);
      fc.assert(
        fc.property(name, name, name, (ns, a, b) => {
          const x = derivedServiceName(ns, a);
          expect(x).to.match(/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/);
          expect(x.length).to.be.at.most(63);
          if (a !== b) expect(derivedServiceName(ns, b)).not.to.equal(x);
        }),
      );
    });
  });

  describe('desiredDerivedService (I4)', () => {
    it('I4: a selector-less ClusterIP Service with the merged ports, labels and an owner reference to the ServiceImport', () => {
      expect(desiredDerivedService(input({ ports: [port('http', 80), port('', 53, 'UDP', 'dns')] }))).to.deep.equal({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: derivedServiceName('demo', 'web'),
          namespace: 'demo',
          labels: { [LABEL_CREATED_BY]: CONTROLLER_NAME, [LABEL_SERVICE_NAME]: 'web' },
          ownerReferences: [
            {
              apiVersion: 'multicluster.x-k8s.io/v1beta1',
              kind: 'ServiceImport',
              name: 'web',
              uid: 'uid-1',
              controller: true,
            },
          ],
        },
        spec: {
          type: 'ClusterIP',
          ports: [
            { name: 'http', protocol: 'TCP', port: 80, targetPort: 80 },
            { protocol: 'UDP', port: 53, appProtocol: 'dns', targetPort: 53 },
          ],
          ipFamilies: ['IPv4'],
          ipFamilyPolicy: 'SingleStack',
          sessionAffinity: 'None',
        },
      });
    });
    it('I4: Headless imports get clusterIP None and leave IP families to the API server', () => {
      const svc = desiredDerivedService(input({ type: 'Headless', ipFamilies: ['IPv4', 'IPv6'] }));
      expect(svc.spec.clusterIP).to.equal('None');
      expect(svc.spec).not.to.have.property('ipFamilies');
      expect(svc.spec).not.to.have.property('ipFamilyPolicy');
    });
    it("I4/I5: two IP families require dual stack, in the import's order", () => {
      const svc = desiredDerivedService(input({ ipFamilies: ['IPv6', 'IPv4'] }));
      expect(svc.spec).to.deep.include({ ipFamilies: ['IPv6', 'IPv4'], ipFamilyPolicy: 'RequireDualStack' });
    });
    it('leaves families to the API server when no export states them', () => {
      expect(desiredDerivedService(input({ ipFamilies: [] })).spec).not.to.have.property('ipFamilies');
    });
    it('carries ClientIP session affinity and its timeout', () => {
      const svc = desiredDerivedService(input({ sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 60 }));
      expect(svc.spec).to.deep.include({
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
      });
    });
  });

  describe('derivedServiceNeedsUpdate (I4)', () => {
    const variants: Array<[string, Partial<DerivedServiceInput['properties']>]> = [
      ['ClusterSetIP', {}],
      ['Headless', { type: 'Headless' }],
      ['dual stack', { ipFamilies: ['IPv4', 'IPv6'] }],
      ['ClientIP', { sessionAffinity: 'ClientIP' }],
      ['ClientIP with timeout', { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 30 }],
      ['no families', { ipFamilies: [] }],
      ['PreferClose', { trafficDistribution: 'PreferClose' }],
    ];
    for (const [title, properties] of variants) {
      it(`I4: nothing to do for a ${title} Service as the API server stored it (server-set fields ignored)`, () => {
        const desired = desiredDerivedService(input(properties));
        expect(derivedServiceNeedsUpdate(desired, asStored(desired))).to.deep.equal({ action: 'none' });
      });
    }

    it('trafficDistribution PreferClose reaches the derived Service (the slices carry zone hints); others do not, and dropping it removes it', () => {
      expect(desiredDerivedService(input({ trafficDistribution: 'PreferClose' })).spec.trafficDistribution).to.equal(
        'PreferClose',
      );
      expect(desiredDerivedService(input({ trafficDistribution: 'PreferSameZone' })).spec).to.not.have.property(
        'trafficDistribution',
      );
      const stored = asStored(desiredDerivedService(input({ trafficDistribution: 'PreferClose' })));
      expect(derivedServiceNeedsUpdate(desiredDerivedService(input()), stored)).to.deep.equal({
        action: 'update',
        fields: ['spec.trafficDistribution'],
        patch: { spec: { trafficDistribution: null } },
      });
    });

    it('I4: a port change is a merge patch of the ports that never touches clusterIP or clusterIPs', () => {
      const stored = asStored(desiredDerivedService(input()));
      const change = derivedServiceNeedsUpdate(
        desiredDerivedService(input({ ports: [port('http', 80), port('https', 443)] })),
        stored,
      );
      expect(change).to.deep.equal({
        action: 'update',
        fields: ['spec.ports'],
        patch: {
          spec: {
            ports: [
              { name: 'http', protocol: 'TCP', port: 80, targetPort: 80 },
              { name: 'https', protocol: 'TCP', port: 443, targetPort: 443 },
            ],
          },
        },
      });
    });

    it('restores our labels, owner reference, type and removes a selector someone added', () => {
      const stored = asStored(desiredDerivedService(input()));
      stored.metadata = { labels: { extra: 'kept' }, ownerReferences: [] };
      stored.spec = { ...stored.spec, type: 'NodePort', selector: { app: 'x' } };
      const change = derivedServiceNeedsUpdate(desiredDerivedService(input()), stored);
      expect(change.action).to.equal('update');
      if (change.action !== 'update') return;
      expect(change.fields).to.deep.equal([
        'metadata.labels',
        'metadata.ownerReferences',
        'spec.type',
        'spec.selector',
      ]);
      expect(change.patch.spec).to.deep.equal({ type: 'ClusterIP', selector: null });
      expect(change.patch.metadata?.ownerReferences).to.deep.equal([owner]);
    });

    it('removes the affinity config when affinity goes back to None', () => {
      const stored = asStored(
        desiredDerivedService(input({ sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 30 })),
      );
      const change = derivedServiceNeedsUpdate(desiredDerivedService(input()), stored);
      expect(change).to.deep.include({
        action: 'update',
        fields: ['spec.sessionAffinity', 'spec.sessionAffinityConfig'],
      });
      if (change.action === 'update')
        expect(change.patch.spec).to.deep.equal({ sessionAffinity: 'None', sessionAffinityConfig: null });
    });

    it('adds a second IP family in place, keeping the primary ClusterIP', () => {
      const stored = asStored(desiredDerivedService(input()));
      const change = derivedServiceNeedsUpdate(desiredDerivedService(input({ ipFamilies: ['IPv4', 'IPv6'] })), stored);
      expect(change).to.deep.include({ action: 'update', fields: ['spec.ipFamilies'] });
      if (change.action === 'update')
        expect(change.patch.spec).to.deep.equal({ ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack' });
    });

    it('I4: Headless ⇄ ClusterSetIP and a new primary family need a recreate, and say why', () => {
      const clusterSetIP = asStored(desiredDerivedService(input()));
      expect(derivedServiceNeedsUpdate(desiredDerivedService(input({ type: 'Headless' })), clusterSetIP)).to.deep.equal(
        {
          action: 'recreate',
          why: 'the import changed from ClusterSetIP to Headless',
        },
      );
      const headless = asStored(desiredDerivedService(input({ type: 'Headless' })));
      expect(derivedServiceNeedsUpdate(desiredDerivedService(input()), headless)).to.deep.include({
        action: 'recreate',
      });
      expect(
        derivedServiceNeedsUpdate(desiredDerivedService(input({ ipFamilies: ['IPv6'] })), clusterSetIP),
      ).to.deep.equal({
        action: 'recreate',
        why: 'the primary IP family changed from IPv4 to IPv6',
      });
    });
  });
});
