import { expect } from 'chai';
import fc from 'fast-check';
import { instancesForExport } from '../../../src/core/cloudmap-attributes.ts';
import { resolveImport } from '../../../src/core/conflicts.ts';
import {
  GENERIC_MEMBER,
  memberName,
  REGISTRANT_PRECEDENCE,
  registrantExports,
  type RegistrantInstance,
} from '../../../src/core/registrants.ts';
import { DNS_LABEL } from '../../../src/core/cluster-id.ts';
import { clusterExport } from './import-fixtures.ts';

const target = { clustersetId: 'clusterset1', namespace: 'shop', name: 'payments' };

/** A task's instance as ECS service discovery registers it (awsvpc networking). */
function ecsTask(id: string, ip: string, overrides: Record<string, string> = {}, health?: string): RegistrantInstance {
  return {
    id,
    attributes: {
      AWS_INSTANCE_IPV4: ip,
      AWS_INSTANCE_PORT: '8080',
      AVAILABILITY_ZONE: 'eu-west-1a',
      ECS_CLUSTER_NAME: 'prod',
      ECS_SERVICE_NAME: 'payments',
      ECS_TASK_DEFINITION_FAMILY: 'payments',
      REGION: 'eu-west-1',
      ...overrides,
    },
    ...(health === undefined ? {} : { health }),
  };
}

const LABEL_VALUE = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

describe('core/registrants', () => {
  describe('memberName (I10)', () => {
    const table: Array<[string, Record<string, string>, string]> = [
      ['an ECS task', { ECS_CLUSTER_NAME: 'prod' }, 'ecs.prod'],
      ['an ECS cluster name with capitals and underscores', { ECS_CLUSTER_NAME: 'Prod_EU' }, 'ecs.Prod_EU'],
      ['a registrant with only AWS_INSTANCE_* attributes', { AWS_INSTANCE_IPV4: '10.0.0.1' }, GENERIC_MEMBER],
      ['an empty ECS_CLUSTER_NAME', { ECS_CLUSTER_NAME: '' }, GENERIC_MEMBER],
    ];
    for (const [what, attributes, name] of table)
      it(`I10: ${what} → ${name}`, () => expect(memberName(attributes)).to.equal(name));

    it('I10: an ECS cluster name that is no label value gets a stable hashed name', () => {
      const long = `cluster_${'x'.repeat(200)}_`;
      const name = memberName({ ECS_CLUSTER_NAME: long });
      expect(name)
        .to.match(/^ecs\./)
        .and.match(LABEL_VALUE);
      expect(memberName({ ECS_CLUSTER_NAME: long })).to.equal(name);
      expect(memberName({ ECS_CLUSTER_NAME: `${long}y` })).to.not.equal(name);
    });

    it('I10: every member name is a label value and never a cluster id (C2: cluster ids are DNS labels)', () => {
      fc.assert(
        fc.property(fc.option(fc.stringMatching(/^[A-Za-z0-9_-]{1,255}$/), { nil: undefined }), (cluster) => {
          const name = memberName(cluster === undefined ? {} : { ECS_CLUSTER_NAME: cluster });
          return LABEL_VALUE.test(name) && !DNS_LABEL.test(name);
        }),
      );
    });
  });

  describe('registrantExports (I9–I12)', () => {
    it('I11: ECS tasks → one member with their addresses, port, zone, and readiness from the health status', () => {
      const { exports, skipped } = registrantExports(
        [
          ecsTask('task-b', '10.1.0.2', {}, 'UNHEALTHY'),
          ecsTask('task-a', '10.1.0.1', { AVAILABILITY_ZONE: 'eu-west-1b' }, 'HEALTHY'),
          ecsTask('task-c', '10.1.0.3', {}, 'UNKNOWN'),
        ],
        target,
      );
      expect(skipped).to.deep.equal([]);
      expect(exports).to.deep.equal([
        {
          clusterId: 'ecs.prod',
          clustersetId: 'clusterset1',
          namespace: 'shop',
          name: 'payments',
          exportCreationTimestamp: REGISTRANT_PRECEDENCE,
          type: 'ClusterSetIP',
          ports: [{ name: '', protocol: 'TCP', port: 8080 }],
          sessionAffinity: 'None',
          ipFamilies: [],
          exportedLabels: {},
          exportedAnnotations: {},
          portsOnly: true,
          endpoints: [
            {
              address: '10.1.0.1',
              ready: true,
              zone: 'eu-west-1b',
              ports: [{ name: '', protocol: 'TCP', port: 8080 }],
            },
            {
              address: '10.1.0.2',
              ready: false,
              zone: 'eu-west-1a',
              ports: [{ name: '', protocol: 'TCP', port: 8080 }],
            },
            {
              address: '10.1.0.3',
              ready: true,
              zone: 'eu-west-1a',
              ports: [{ name: '', protocol: 'TCP', port: 8080 }],
            },
          ],
        },
      ]);
    });

    it('I10: two ECS clusters and a generic registrant are three members, sorted by name', () => {
      const { exports } = registrantExports(
        [
          ecsTask('a', '10.1.0.1'),
          ecsTask('b', '10.2.0.1', { ECS_CLUSTER_NAME: 'dr' }),
          { id: 'vm-1', attributes: { AWS_INSTANCE_IPV4: '10.3.0.1', AWS_INSTANCE_PORT: '8080' } },
        ],
        target,
      );
      expect(exports.map((e) => [e.clusterId, e.endpoints.map((x) => x.address)])).to.deep.equal([
        [GENERIC_MEMBER, ['10.3.0.1']],
        ['ecs.dr', ['10.2.0.1']],
        ['ecs.prod', ['10.1.0.1']],
      ]);
    });

    it('I11: tasks on different host ports (bridge networking): the lowest is the Service port, each keeps its own', () => {
      const [member] = registrantExports(
        [
          ecsTask('a', '10.1.0.1', { AWS_INSTANCE_PORT: '32769' }),
          ecsTask('b', '10.1.0.2', { AWS_INSTANCE_PORT: '32768' }),
        ],
        target,
      ).exports;
      expect(member!.ports).to.deep.equal([{ name: '', protocol: 'TCP', port: 32768 }]);
      expect(member!.endpoints.map((e) => e.ports[0]!.port)).to.deep.equal([32769, 32768]);
    });

    it('I11: IPv6 tasks, and AWS_INSTANCE_IPV6 preferred when both are given', () => {
      const [member] = registrantExports([ecsTask('a', '10.1.0.1', { AWS_INSTANCE_IPV6: 'fd00::1' })], target).exports;
      expect(member!.endpoints.map((e) => e.address)).to.deep.equal(['fd00::1']);
    });

    const skippedTable: Array<[string, Record<string, string>, string]> = [
      ['no address', { AWS_INSTANCE_IPV4: '' }, 'missing AWS_INSTANCE_IPV4 or AWS_INSTANCE_IPV6'],
      ['a CNAME registrant', { AWS_INSTANCE_IPV4: 'db.example.com' }, '"db.example.com" is not an IP address'],
      ['no port', { AWS_INSTANCE_PORT: '' }, 'AWS_INSTANCE_PORT "" is not a port from 1 to 65535'],
      ['port 0', { AWS_INSTANCE_PORT: '0' }, 'AWS_INSTANCE_PORT "0" is not a port from 1 to 65535'],
      ['port 70000', { AWS_INSTANCE_PORT: '70000' }, 'AWS_INSTANCE_PORT "70000" is not a port from 1 to 65535'],
    ];
    for (const [what, overrides, reason] of skippedTable)
      it(`I11: an instance with ${what} is skipped with its reason`, () => {
        expect(registrantExports([ecsTask('t', '10.1.0.1', overrides)], target)).to.deep.equal({
          exports: [],
          skipped: [{ id: 't', reason }],
        });
      });

    it('I11: an instance without AWS_INSTANCE_PORT is skipped', () => {
      const task = ecsTask('t', '10.1.0.1');
      delete task.attributes.AWS_INSTANCE_PORT;
      expect(registrantExports([task], target).skipped).to.deep.equal([
        { id: 't', reason: 'missing AWS_INSTANCE_PORT' },
      ]);
    });

    it("I9: an MCS controller's instances in the same service are left to the cluster reading (never a member)", () => {
      const ours = instancesForExport(clusterExport('cls1', 1000, { namespace: 'shop', name: 'payments' }), 'v1');
      expect(
        registrantExports([...ours, ecsTask('a', '10.1.0.1')], target).exports.map((e) => e.clusterId),
      ).to.deep.equal(['ecs.prod']);
    });

    it('I11: the result does not depend on the order Cloud Map lists the instances in; an address counts once', () => {
      fc.assert(
        fc.property(
          fc.uniqueArray(
            fc.record({
              id: fc.stringMatching(/^[a-z0-9-]{1,12}$/),
              ip: fc.constantFrom('10.1.0.1', '10.1.0.2', '10.1.0.3'),
              cluster: fc.constantFrom('prod', 'dr', ''),
              health: fc.constantFrom('HEALTHY', 'UNHEALTHY', 'UNKNOWN'),
            }),
            { selector: (t) => t.id, maxLength: 8 },
          ),
          (tasks) => {
            const instances = tasks.map((t) => ecsTask(t.id, t.ip, { ECS_CLUSTER_NAME: t.cluster }, t.health));
            const forward = registrantExports(instances, target);
            expect(registrantExports([...instances].reverse(), target)).to.deep.equal(forward);
            for (const member of forward.exports) {
              const addresses = member.endpoints.map((e) => e.address);
              expect(new Set(addresses).size).to.equal(addresses.length);
            }
            const members = new Set(forward.exports.map((e) => e.clusterId));
            expect(members).to.deep.equal(new Set(instances.map((i) => memberName(i.attributes))));
          },
        ),
      );
    });
  });

  describe('conflicts with Kubernetes exports (I12)', () => {
    const [ecs] = registrantExports([ecsTask('a', '10.1.0.1', { AWS_INSTANCE_PORT: '80' })], target).exports;

    it('I12: a member that states ports only takes no part in type, affinity, policy, label or annotation conflicts', () => {
      const k8s = clusterExport('cls1', 1000, {
        namespace: 'shop',
        name: 'payments',
        ports: [{ name: '', protocol: 'TCP', port: 80 }],
        type: 'Headless',
        sessionAffinity: 'ClientIP',
        internalTrafficPolicy: 'Local',
        trafficDistribution: 'PreferClose',
        exportedLabels: { team: 'payments' },
      });
      const resolution = resolveImport([ecs!, k8s]);
      expect(resolution.conflict).to.equal(undefined);
      expect(resolution.clusters).to.deep.equal(['cls1', 'ecs.prod']);
      expect(resolution.properties.type).to.equal('Headless');
      expect(resolution.properties.trafficDistribution).to.equal('PreferClose');
    });

    it('I12: a Kubernetes export is always older, so its port wins a clash and the member is named in the conflict', () => {
      const k8s = clusterExport('cls1', Date.now(), { ports: [{ name: '', protocol: 'TCP', port: 8080 }] });
      const resolution = resolveImport([ecs!, k8s]);
      expect(resolution.exports.map((e) => e.clusterId)).to.deep.equal(['cls1', 'ecs.prod']);
      expect(resolution.conflict?.details.map((d) => [d.reason, d.winner, d.losers])).to.deep.equal([
        ['PortConflict', 'cls1', ['ecs.prod']],
      ]);
    });

    it('I12: members alone make a ClusterSetIP import without conflict', () => {
      const [dr] = registrantExports(
        [ecsTask('b', '10.2.0.1', { ECS_CLUSTER_NAME: 'dr', AWS_INSTANCE_PORT: '80' })],
        target,
      ).exports;
      const resolution = resolveImport([ecs!, dr!]);
      expect(resolution.conflict).to.equal(undefined);
      expect(resolution.properties).to.include({ type: 'ClusterSetIP', sessionAffinity: 'None' });
      expect(resolution.properties.ports).to.deep.equal([{ name: '', protocol: 'TCP', port: 80 }]);
    });
  });
});
