import { expect } from 'chai';
import fc from 'fast-check';
import {
  ATTR,
  checkInstanceLimits,
  ExportDataError,
  exportsFromInstances,
  INSTANCE_KIND_SERVICE,
  instancesForExport,
} from '../../../src/core/cloudmap-attributes.ts';
import { normalizeClusterExport } from '../../../src/core/cluster-export.ts';
import {
  endpointInstanceId,
  legacyInstanceId,
  servicePortInstanceId,
  serviceInstanceId,
} from '../../../src/core/instance-id.ts';
import type { CloudMapInstance, ClusterExport } from '../../../src/core/types.ts';
import { clusterExportArb, readyEndpoint, tutorialExport } from './export-fixtures.ts';

const target = { clustersetId: 'clusterset1', namespace: 'demo', name: 'nginx-hello' };
const roundTrip = (x: ClusterExport) =>
  exportsFromInstances(instancesForExport(x, 'v1.2.3'), {
    clustersetId: x.clustersetId,
    namespace: x.namespace,
    name: x.name,
  });

/** An instance as the AWS controller v0.3.1 wrote it (discover-instances output of its tutorial). */
function legacyInstance(ip: string, overrides: Record<string, string> = {}): CloudMapInstance {
  return {
    id: legacyInstanceId('TCP', ip, 80),
    attributes: {
      AWS_INSTANCE_IPV4: ip,
      AWS_INSTANCE_PORT: '80',
      CLUSTERSET_ID: 'clusterset1',
      CLUSTER_ID: 'cls1',
      ENDPOINT_PORT_NAME: '',
      ENDPOINT_PROTOCOL: 'TCP',
      HOSTNAME: '',
      K8S_CONTROLLER: 'aws-cloud-map-mcs-controller-for-k8s d07e680 (d07e680)',
      NODENAME: 'ip-10-10-77-143.ap-southeast-2.compute.internal',
      READY: 'true',
      SERVICE_EXPORT_CREATION_TIMESTAMP: '1665108776000',
      SERVICE_PORT: '80',
      SERVICE_PORT_NAME: '',
      SERVICE_PROTOCOL: 'TCP',
      SERVICE_TARGET_PORT: '80',
      SERVICE_TYPE: 'ClusterSetIP',
      ...overrides,
    },
  };
}

describe('Cloud Map data model (M2, M3, M5)', () => {
  describe('instancesForExport', () => {
    it('M2: one instance per endpoint address × port with exactly the v0.3.1 attributes plus ours', () => {
      const x = tutorialExport({ endpoints: [readyEndpoint('10.10.78.125', 80, { nodeName: 'ip-10-10-77-143' })] });
      expect(instancesForExport(x, 'v1.2.3')).to.deep.equal([
        {
          id: endpointInstanceId(x, '10.10.78.125', 'TCP', 80),
          attributes: {
            AWS_INSTANCE_IPV4: '10.10.78.125',
            AWS_INSTANCE_PORT: '80',
            ENDPOINT_PORT_NAME: '',
            ENDPOINT_PROTOCOL: 'TCP',
            SERVICE_PORT: '80',
            SERVICE_PORT_NAME: '',
            SERVICE_TARGET_PORT: '80',
            SERVICE_PROTOCOL: 'TCP',
            CLUSTER_ID: 'cls1',
            CLUSTERSET_ID: 'clusterset1',
            SERVICE_TYPE: 'ClusterSetIP',
            SERVICE_EXPORT_CREATION_TIMESTAMP: '1665108776000',
            READY: 'true',
            NODENAME: 'ip-10-10-77-143',
            K8S_CONTROLLER: 'mcs-cloudmap v1.2.3',
            SESSION_AFFINITY: 'None',
            IP_FAMILIES: 'IPv4',
          },
        },
      ]);
    });

    it('M2: IPv6 endpoints use AWS_INSTANCE_IPV6; unready endpoints say READY=false; hostnames are kept', () => {
      const [instance] = instancesForExport(
        tutorialExport({ endpoints: [readyEndpoint('fd00::5', 8080, { ready: false, hostname: 'web-0' })] }),
        'v1',
      );
      expect(instance?.attributes).to.include({
        AWS_INSTANCE_IPV6: 'fd00::5',
        AWS_INSTANCE_PORT: '8080',
        SERVICE_PORT: '80',
        READY: 'false',
        HOSTNAME: 'web-0',
      });
      expect(instance?.attributes).to.not.have.property('AWS_INSTANCE_IPV4');
    });

    it('X3: service-level properties that v0.3.1 never stored travel with every instance', () => {
      const x = tutorialExport({
        endpoints: [readyEndpoint('10.0.0.1')],
        sessionAffinity: 'ClientIP',
        sessionAffinityTimeoutSeconds: 600,
        internalTrafficPolicy: 'Local',
        trafficDistribution: 'PreferClose',
        ipFamilies: ['IPv6', 'IPv4'],
        exportedLabels: { tier: 'web', app: 'x' },
        exportedAnnotations: { 'example.com/owner': 'Zoë' },
      });
      expect(instancesForExport(x, 'v1')[0]?.attributes).to.include({
        SESSION_AFFINITY: 'ClientIP',
        SESSION_AFFINITY_TIMEOUT_SECONDS: '600',
        INTERNAL_TRAFFIC_POLICY: 'Local',
        TRAFFIC_DISTRIBUTION: 'PreferClose',
        IP_FAMILIES: 'IPv6,IPv4',
        EXPORTED_LABELS: '{"app":"x","tier":"web"}',
        EXPORTED_ANNOTATIONS: '{"example.com/owner":"Zo\\u00eb"}',
      });
    });

    it('I3: a Service with zero endpoints is one address-less instance per port, never an endpoint', () => {
      const x = tutorialExport({
        ports: [
          { name: 'http', protocol: 'TCP', port: 80, targetPort: '8080' },
          { name: 'dns', protocol: 'UDP', port: 53, targetPort: '53' },
        ],
      });
      const instances = instancesForExport(x, 'v1');
      expect(instances.map((i) => i.id)).to.deep.equal([
        servicePortInstanceId(x, 'TCP', 80),
        servicePortInstanceId(x, 'UDP', 53),
      ]);
      for (const i of instances) {
        expect(i.attributes[ATTR.INSTANCE_KIND]).to.equal(INSTANCE_KIND_SERVICE);
        expect(i.attributes).to.not.have.any.keys(ATTR.IPV4, ATTR.IPV6, ATTR.PORT, ATTR.READY);
      }
      const { exports, skipped } = exportsFromInstances(instances, target);
      expect(skipped).to.deep.equal([]);
      expect(exports).to.have.length(1);
      expect(exports[0]?.endpoints).to.deep.equal([]);
      expect(exports[0]?.ports.map((p) => p.port)).to.deep.equal([53, 80]);
    });

    it('I3: a Service with neither ports nor endpoints is still one instance', () => {
      const x = tutorialExport({ type: 'Headless', ports: [] });
      const instances = instancesForExport(x, 'v1');
      expect(instances.map((i) => i.id)).to.deep.equal([serviceInstanceId(x)]);
      expect(exportsFromInstances(instances, target).exports).to.deep.equal([normalizeClusterExport(x)]);
    });

    it('X2: a Service port that no endpoint serves still gets its own instance', () => {
      const x = tutorialExport({
        ports: [
          { name: 'http', protocol: 'TCP', port: 80, targetPort: '8080' },
          { name: 'metrics', protocol: 'TCP', port: 9090, targetPort: 'metrics' },
        ],
        endpoints: [{ address: '10.0.0.1', ready: true, ports: [{ name: 'http', protocol: 'TCP', port: 8080 }] }],
      });
      expect(instancesForExport(x, 'v1').map((i) => i.id)).to.deep.equal([
        endpointInstanceId(x, '10.0.0.1', 'TCP', 80),
        servicePortInstanceId(x, 'TCP', 9090),
      ]);
    });

    it('M3: one endpoint port serving two Service ports gives two instances with distinct ids', () => {
      const x = tutorialExport({
        ports: [
          { name: 'a', protocol: 'TCP', port: 80, targetPort: '8080' },
          { name: 'b', protocol: 'TCP', port: 81, targetPort: '8080' },
        ],
        endpoints: [
          {
            address: '10.0.0.1',
            ready: true,
            ports: [
              { name: 'a', protocol: 'TCP', port: 8080 },
              { name: 'b', protocol: 'TCP', port: 8080 },
            ],
          },
        ],
      });
      const instances = instancesForExport(x, 'v1');
      expect(new Set(instances.map((i) => i.id)).size).to.equal(2);
      expect(instances.map((i) => [i.attributes.AWS_INSTANCE_PORT, i.attributes.SERVICE_PORT])).to.deep.equal([
        ['8080', '80'],
        ['8080', '81'],
      ]);
    });

    const refused: Array<[string, Partial<ClusterExport>, RegExp]> = [
      [
        'exported labels over 1024 characters',
        { exportedLabels: { big: 'x'.repeat(1100) } },
        /the exported labels \(ServiceExport spec.exportedLabels, as compact JSON\) take 1110 characters, Cloud Map allows 1024 per attribute: export fewer or shorter labels\./,
      ],
      [
        'exported annotations over 1024 characters',
        { exportedAnnotations: { a: 'é'.repeat(200) } },
        /the exported annotations .* take 1208 characters, .*export fewer or shorter annotations/,
      ],
      [
        'a ClusterSet id Cloud Map cannot store',
        { clustersetId: ' leading space' },
        /the ClusterSet id \(ClusterProperty clusterset.k8s.io\) \(CLUSTERSET_ID\) must be printable ASCII/,
      ],
      [
        'an endpoint port that matches no Service port',
        { endpoints: [{ address: '10.0.0.1', ready: true, ports: [{ name: 'other', protocol: 'TCP', port: 1 }] }] },
        /endpoint 10.0.0.1 port "other"\/TCP matches no Service port/,
      ],
      [
        'an endpoint without ports for a Service with ports',
        { endpoints: [{ address: '10.0.0.1', ready: true, ports: [] }] },
        /endpoint 10.0.0.1 has no ports but the Service has/,
      ],
      [
        'an address that is not an IP',
        { endpoints: [readyEndpoint('web-0.example')] },
        /endpoint address "web-0.example" is not an IP address/,
      ],
      [
        'the same address twice',
        { endpoints: [readyEndpoint('10.0.0.1'), readyEndpoint('10.0.0.1')] },
        /two instances would share id/,
      ],
    ];
    for (const [what, overrides, message] of refused) {
      it(`refuses ${what} with an error naming the field (no silent truncation)`, () => {
        expect(() => instancesForExport(tutorialExport(overrides), 'v1')).to.throw(ExportDataError, message);
      });
    }

    it('errors name the ServiceExport and cluster', () => {
      expect(() => instancesForExport(tutorialExport({ exportedLabels: { big: 'x'.repeat(1100) } }), 'v1')).to.throw(
        /^ServiceExport demo\/nginx-hello of cluster cls1, Cloud Map instance svc-tcp-80-/,
      );
    });
  });

  describe('checkInstanceLimits', () => {
    const base = instancesForExport(tutorialExport({ endpoints: [readyEndpoint('10.0.0.1')] }), 'v1')[0]!;
    it('refuses more than 30 attributes, naming the ones kept from another writer', () => {
      const extra = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`OTHER_${i}`, 'x']));
      expect(() => checkInstanceLimits({ id: 'i', attributes: { ...base.attributes, ...extra } }, 'ctx')).to.throw(
        ExportDataError,
        /^ctx, Cloud Map instance i: 31 attributes \(including 15 kept from another writer: OTHER_0/,
      );
    });
    it('refuses more than 5000 characters in all', () => {
      const extra = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`OTHER_${i}`, 'x'.repeat(1000)]));
      expect(() => checkInstanceLimits({ id: 'i', attributes: { ...base.attributes, ...extra } }, 'ctx')).to.throw(
        /characters in all, Cloud Map allows 5000/,
      );
    });
    it('refuses attribute names Cloud Map does not accept', () => {
      expect(() => checkInstanceLimits({ id: 'i', attributes: { 'BAD KEY': 'x' } }, 'ctx')).to.throw(
        /attribute name "BAD KEY" is not accepted/,
      );
    });
    it('accepts what instancesForExport writes', () => {
      expect(() => checkInstanceLimits(base, 'ctx')).to.not.throw();
    });
  });

  describe('exportsFromInstances', () => {
    it('M3: reads the instances of the AWS controller v0.3.1, with defaults for what it never stored', () => {
      const { exports, skipped } = exportsFromInstances(
        [legacyInstance('10.10.78.125'), legacyInstance('10.10.66.181')],
        target,
      );
      expect(skipped).to.deep.equal([]);
      expect(exports).to.deep.equal([
        tutorialExport({
          ipFamilies: [],
          endpoints: ['10.10.66.181', '10.10.78.125'].map((address) =>
            readyEndpoint(address, 80, { nodeName: 'ip-10-10-77-143.ap-southeast-2.compute.internal' }),
          ),
        }),
      ]);
    });

    it('M3: v0.3.1 instances without READY, protocols or names get Kubernetes defaults; IP families are not stated', () => {
      const bare = {
        id: 'tcp-fd00__1-80',
        attributes: {
          AWS_INSTANCE_IPV6: 'fd00::1',
          AWS_INSTANCE_PORT: '8080',
          SERVICE_PORT: '80',
          CLUSTER_ID: 'c9',
          CLUSTERSET_ID: 'clusterset1',
          SERVICE_EXPORT_CREATION_TIMESTAMP: '5',
        },
      };
      const [x] = exportsFromInstances([bare], target).exports;
      expect(x).to.deep.include({
        type: 'ClusterSetIP',
        ipFamilies: [],
        ports: [{ name: '', protocol: 'TCP', port: 80, targetPort: '80' }],
      });
      expect(x?.endpoints).to.deep.equal([
        { address: 'fd00::1', ready: true, ports: [{ name: '', protocol: 'TCP', port: 8080 }] },
      ]);
    });

    it('E8: READY is read as Go ParseBool does', () => {
      for (const [raw, ready] of [
        ['false', false],
        ['False', false],
        ['0', false],
        ['TRUE', true],
        ['1', true],
      ] as const) {
        expect(
          exportsFromInstances([legacyInstance('10.0.0.1', { READY: raw })], target).exports[0]?.endpoints[0]?.ready,
          raw,
        ).to.equal(ready);
      }
    });

    it('M5: instances of another ClusterSet are left out without being reported', () => {
      const { exports, skipped } = exportsFromInstances(
        [legacyInstance('10.0.0.1', { CLUSTERSET_ID: 'other' })],
        target,
      );
      expect(exports).to.deep.equal([]);
      expect(skipped).to.deep.equal([]);
    });

    it('groups by CLUSTER_ID, clusters sorted', () => {
      const { exports } = exportsFromInstances(
        [legacyInstance('10.0.0.2', { CLUSTER_ID: 'zeta' }), legacyInstance('10.0.0.1', { CLUSTER_ID: 'alpha' })],
        target,
      );
      expect(exports.map((x) => [x.clusterId, x.endpoints.map((e) => e.address)])).to.deep.equal([
        ['alpha', ['10.0.0.1']],
        ['zeta', ['10.0.0.2']],
      ]);
    });

    const malformed: Array<[string, CloudMapInstance, RegExp]> = [
      ['no CLUSTER_ID', legacyInstance('10.0.0.9', { CLUSTER_ID: '' }), /^missing CLUSTER_ID$/],
      ['no CLUSTERSET_ID', { id: 'x', attributes: { CLUSTER_ID: 'cls1' } }, /^missing CLUSTERSET_ID$/],
      [
        'a port that is not a number',
        legacyInstance('10.0.0.9', { AWS_INSTANCE_PORT: 'http' }),
        /AWS_INSTANCE_PORT "http" is not a whole number from 1 to 65535/,
      ],
      ['a port out of range', legacyInstance('10.0.0.9', { SERVICE_PORT: '70000' }), /SERVICE_PORT "70000"/],
      [
        'an unknown SERVICE_TYPE',
        legacyInstance('10.0.0.9', { SERVICE_TYPE: 'ExternalName' }),
        /SERVICE_TYPE "ExternalName" is not one of ClusterSetIP, Headless/,
      ],
      ['an unknown protocol', legacyInstance('10.0.0.9', { ENDPOINT_PROTOCOL: 'HTTP' }), /ENDPOINT_PROTOCOL "HTTP"/],
      ['READY that is not a boolean', legacyInstance('10.0.0.9', { READY: 'yes' }), /READY "yes" is not true or false/],
      [
        'no address',
        legacyInstance('10.0.0.9', { AWS_INSTANCE_IPV4: '' }),
        /missing AWS_INSTANCE_IPV4 or AWS_INSTANCE_IPV6/,
      ],
      ['an address that is not IPv4', legacyInstance('fd00::1'), /AWS_INSTANCE_IPV4 "fd00::1" is not an IPv4 address/],
      [
        'an endpoint port without a Service port',
        legacyInstance('10.0.0.9', { SERVICE_PORT: undefined as unknown as string }),
        /AWS_INSTANCE_PORT and SERVICE_PORT must be both present or both absent/,
      ],
      [
        'no creation timestamp',
        legacyInstance('10.0.0.9', { SERVICE_EXPORT_CREATION_TIMESTAMP: undefined as unknown as string }),
        /missing SERVICE_EXPORT_CREATION_TIMESTAMP/,
      ],
      [
        'labels that are not a JSON object of strings',
        legacyInstance('10.0.0.9', { EXPORTED_LABELS: '{"a":1}' }),
        /EXPORTED_LABELS is not a JSON object of strings/,
      ],
      [
        'labels that are not JSON',
        legacyInstance('10.0.0.9', { EXPORTED_LABELS: '{a' }),
        /EXPORTED_LABELS is not JSON/,
      ],
      [
        'a service-level instance with an address',
        legacyInstance('10.0.0.9', { INSTANCE_KIND: 'Service' }),
        /must not carry an address/,
      ],
      [
        'an unknown INSTANCE_KIND',
        legacyInstance('10.0.0.9', { INSTANCE_KIND: 'Other' }),
        /INSTANCE_KIND "Other" is not one of Service/,
      ],
      [
        'IP_FAMILIES with an unknown family',
        legacyInstance('10.0.0.9', { IP_FAMILIES: 'IPv4,IPX' }),
        /IP_FAMILIES "IPv4,IPX"/,
      ],
    ];
    for (const [what, instance, reason] of malformed) {
      it(`skips and reports an instance with ${what}, keeping the rest`, () => {
        for (const key of Object.keys(instance.attributes))
          if (instance.attributes[key] === undefined) delete instance.attributes[key];
        const { exports, skipped } = exportsFromInstances([legacyInstance('10.0.0.1'), instance], target);
        expect(skipped).to.have.length(1);
        expect(skipped[0]?.id).to.equal(instance.id);
        expect(skipped[0]?.reason).to.match(reason);
        expect(exports[0]?.endpoints.map((e) => e.address)).to.deep.equal(['10.0.0.1']);
      });
    }

    it('M2: attributes it does not know are ignored when reading', () => {
      const { exports, skipped } = exportsFromInstances([legacyInstance('10.0.0.1', { TEAM_OWNER: 'x' })], target);
      expect(skipped).to.deep.equal([]);
      expect(exports[0]?.endpoints).to.have.length(1);
    });

    it('a repeated id counts once, the last copy listed (the emulator appends on re-register)', () => {
      const { exports } = exportsFromInstances(
        [legacyInstance('10.0.0.1'), legacyInstance('10.0.0.1', { READY: 'false' })],
        target,
      );
      expect(exports[0]?.endpoints).to.deep.equal([
        {
          address: '10.0.0.1',
          ready: false,
          nodeName: 'ip-10-10-77-143.ap-southeast-2.compute.internal',
          ports: [{ name: '', protocol: 'TCP', port: 80 }],
        },
      ]);
    });

    it('M3: while a cluster migrates from v0.3.1, its new instances win over its old ones for the same endpoint', () => {
      const ours = instancesForExport(
        tutorialExport({ clustersetId: 'clusterset1', endpoints: [readyEndpoint('10.0.0.1', 80, { ready: false })] }),
        'v1',
      );
      const { exports } = exportsFromInstances([legacyInstance('10.0.0.1'), ...ours], target);
      expect(exports[0]?.endpoints).to.deep.equal([
        { address: '10.0.0.1', ready: false, ports: [{ name: '', protocol: 'TCP', port: 80 }] },
      ]);
    });
  });

  describe('round trip (property)', () => {
    it('M2/M3: exportsFromInstances(instancesForExport(x)) gives x back, with endpoints', () => {
      fc.assert(
        fc.property(clusterExportArb({ min: 1, max: 6 }), (x) => {
          const { exports, skipped } = roundTrip(x);
          expect(skipped).to.deep.equal([]);
          expect(exports).to.deep.equal([normalizeClusterExport(x)]);
        }),
        { numRuns: 300 },
      );
    });

    it('I3: … and with zero endpoints (the cluster is still listed with its ports and type)', () => {
      fc.assert(
        fc.property(clusterExportArb({ min: 0, max: 0 }), (x) => {
          const instances = instancesForExport(x, 'v1');
          expect(instances.every((i) => i.attributes[ATTR.INSTANCE_KIND] === INSTANCE_KIND_SERVICE)).to.equal(true);
          expect(roundTrip(x).exports).to.deep.equal([normalizeClusterExport(x)]);
        }),
        { numRuns: 200 },
      );
    });

    it('I3: several clusters of one service come back as one export each', () => {
      fc.assert(
        fc.property(
          fc.uniqueArray(clusterExportArb({ min: 0, max: 3 }), {
            selector: (x) => x.clusterId,
            minLength: 1,
            maxLength: 3,
          }),
          fc.ipV4(),
          (xs, sharedIp) => {
            // Clusters reusing one pod IP must not collide (M3).
            const withShared = xs.map((x) =>
              x.ports.length === 0
                ? x
                : {
                    ...x,
                    endpoints: [
                      ...x.endpoints.filter((e) => e.address !== sharedIp),
                      {
                        address: sharedIp,
                        ready: true,
                        ports: [{ name: x.ports[0]!.name, protocol: x.ports[0]!.protocol, port: 1 }],
                      },
                    ],
                  },
            );
            const instances = withShared.flatMap((x) => instancesForExport(x, 'v1'));
            expect(new Set(instances.map((i) => i.id)).size).to.equal(instances.length);
            const { exports } = exportsFromInstances(instances, {
              clustersetId: 'set1',
              namespace: 'demo',
              name: 'web',
            });
            expect(exports).to.deep.equal(
              withShared.map(normalizeClusterExport).sort((a, b) => (a.clusterId < b.clusterId ? -1 : 1)),
            );
          },
        ),
        { numRuns: 100 },
      );
    });
  });
});
