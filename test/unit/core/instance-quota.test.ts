import { expect } from 'chai';
import fc from 'fast-check';
import { ATTR, instancesForExport } from '../../../src/core/cloudmap-attributes.ts';
import {
  fitInstances,
  INSTANCES_PER_NAMESPACE,
  INSTANCES_PER_SERVICE,
  markPartial,
  partialExports,
  quotaCondition,
  readQuotaRefusal,
  registrationOrder,
} from '../../../src/core/instance-quota.ts';
import type { CloudMapInstance } from '../../../src/core/types.ts';
import { clusterExportArb, readyEndpoint, tutorialExport } from './export-fixtures.ts';

const ids = (list: readonly CloudMapInstance[]) => list.map((i) => i.id);
/** Ready endpoints 10.0.0.1..n, each with two ports (80 and 443). */
function exportOf(n: number, notReady: ReadonlySet<number> = new Set()): CloudMapInstance[] {
  const ports = [
    { name: 'http', protocol: 'TCP' as const, port: 80, targetPort: '80' },
    { name: 'https', protocol: 'TCP' as const, port: 443, targetPort: '443' },
  ];
  const endpoints = Array.from({ length: n }, (_, i) => ({
    address: `10.0.0.${i + 1}`,
    ready: !notReady.has(i + 1),
    ports: [
      { name: 'http', protocol: 'TCP' as const, port: 80 },
      { name: 'https', protocol: 'TCP' as const, port: 443 },
    ],
  }));
  return instancesForExport(tutorialExport({ ports, endpoints }), 'v1');
}
const addressOf = (i: CloudMapInstance) => i.attributes[ATTR.IPV4];

describe('instance quotas (M8)', () => {
  describe('readQuotaRefusal', () => {
    const table: Array<[string, number, ReturnType<typeof readQuotaRefusal>]> = [
      [
        "The resource can't be created because you've reached the quota Instances per service (1000)",
        1000,
        { quota: 'InstancesPerService', limit: 1000 },
      ],
      [
        "The resource can't be created because you've reached the quota Instances per service (20)",
        20,
        { quota: 'InstancesPerService', limit: 20 },
      ],
      [
        "The resource can't be created because you've reached the quota Instances per namespace (2000)",
        700,
        { quota: 'InstancesPerNamespace', limit: 2000 },
      ],
      ['quota Instances per namespace (5,000)', 700, { quota: 'InstancesPerNamespace', limit: 5000 }],
      ['instances per namespace', 7, { quota: 'InstancesPerNamespace', limit: INSTANCES_PER_NAMESPACE }],
      [
        'Resource limit exceeded',
        INSTANCES_PER_SERVICE,
        { quota: 'InstancesPerService', limit: INSTANCES_PER_SERVICE },
      ],
      ['Resource limit exceeded', 12, { quota: 'InstancesPerNamespace', limit: INSTANCES_PER_NAMESPACE }],
    ];
    for (const [message, inService, expected] of table) {
      it(`M8: "${message}" with ${inService} instances in the service is ${expected.quota} (${expected.limit})`, () => {
        expect(readQuotaRefusal(message, inService)).to.deep.equal(expected);
      });
    }
  });

  describe('registrationOrder', () => {
    it('M8: address-less instances first, then ready endpoints by address with their ports together, then those not ready', () => {
      const order = registrationOrder(exportOf(3, new Set([1])));
      expect(order.map(addressOf)).to.deep.equal([
        '10.0.0.2',
        '10.0.0.2',
        '10.0.0.3',
        '10.0.0.3',
        '10.0.0.1',
        '10.0.0.1',
      ]);
      const withPortless = instancesForExport(
        tutorialExport({
          ports: [
            { name: '', protocol: 'TCP', port: 80, targetPort: '80' },
            { name: 'x', protocol: 'UDP', port: 53, targetPort: '53' },
          ],
          endpoints: [readyEndpoint('10.0.0.9')],
        }),
        'v1',
      );
      expect(registrationOrder(withPortless)[0]!.attributes[ATTR.INSTANCE_KIND]).to.equal('Service');
    });

    it('M8: depends on the instances only, not on their order', () => {
      fc.assert(
        fc.property(clusterExportArb({ min: 0, max: 12 }), fc.integer(), (x, seed) => {
          const instances = instancesForExport(x, 'v1');
          const shuffled = [...instances].sort(
            (a, b) => ((a.id.length * 31 + seed) % 7) - ((b.id.length * 31 + seed) % 7),
          );
          expect(ids(registrationOrder(shuffled))).to.deep.equal(ids(registrationOrder(instances)));
        }),
      );
    });
  });

  describe('fitInstances', () => {
    const desired = exportOf(5); // 10 instances
    const table: Array<{ title: string; registered: string[]; capacity: number; chosen: string[] }> = [
      {
        title: 'everything when it fits',
        registered: [],
        capacity: 10,
        chosen: [
          '10.0.0.1',
          '10.0.0.1',
          '10.0.0.2',
          '10.0.0.2',
          '10.0.0.3',
          '10.0.0.3',
          '10.0.0.4',
          '10.0.0.4',
          '10.0.0.5',
          '10.0.0.5',
        ],
      },
      {
        title: 'the first of the order into an empty service',
        registered: [],
        capacity: 4,
        chosen: ['10.0.0.1', '10.0.0.1', '10.0.0.2', '10.0.0.2'],
      },
      { title: 'nothing with no room', registered: [], capacity: 0, chosen: [] },
      {
        title: 'registered instances keep their slots, the rest go in order',
        registered: ['10.0.0.5'],
        capacity: 4,
        chosen: ['10.0.0.1', '10.0.0.1', '10.0.0.5', '10.0.0.5'],
      },
      {
        title: 'registered instances are kept even past the capacity (never deregistered to make room)',
        registered: ['10.0.0.4', '10.0.0.5'],
        capacity: 2,
        chosen: ['10.0.0.4', '10.0.0.4', '10.0.0.5', '10.0.0.5'],
      },
    ];
    for (const row of table) {
      it(`M8: ${row.title}`, () => {
        const registered = new Set(desired.filter((i) => row.registered.includes(addressOf(i)!)).map((i) => i.id));
        const fit = fitInstances({ desired, registered, capacity: row.capacity });
        expect(fit.chosen.map(addressOf)).to.deep.equal(row.chosen);
        expect(fit.left).to.equal(desired.length - row.chosen.length);
      });
    }

    it('M8: chooses a subset of the desired instances, keeps every registered one, fills up to the capacity, and is the same however the input is ordered', () => {
      fc.assert(
        fc.property(
          clusterExportArb({ min: 0, max: 12 }),
          fc.integer({ min: 0, max: 40 }),
          fc.array(fc.boolean(), { maxLength: 60 }),
          (x, capacity, picks) => {
            const all = instancesForExport(x, 'v1');
            const registered = new Set(all.filter((_, i) => picks[i] === true).map((i) => i.id));
            const fit = fitInstances({ desired: all, registered, capacity });
            const chosen = new Set(ids(fit.chosen));
            expect(chosen.size).to.equal(fit.chosen.length);
            for (const id of chosen) expect(all.some((i) => i.id === id)).to.equal(true);
            for (const id of registered) expect(chosen.has(id)).to.equal(true);
            expect(fit.chosen.length).to.equal(Math.max(registered.size, Math.min(all.length, capacity)));
            expect(fit.left).to.equal(all.length - fit.chosen.length);
            expect(ids(fitInstances({ desired: [...all].reverse(), registered, capacity }).chosen)).to.deep.equal(
              ids(fit.chosen),
            );
          },
        ),
      );
    });

    it('M8: a fit from an empty service is a prefix of the registration order, and growing the capacity only adds', () => {
      fc.assert(
        fc.property(clusterExportArb({ min: 0, max: 12 }), fc.integer({ min: 0, max: 30 }), (x, capacity) => {
          const all = instancesForExport(x, 'v1');
          const small = fitInstances({ desired: all, registered: new Set(), capacity });
          expect(ids(small.chosen)).to.deep.equal(ids(registrationOrder(all).slice(0, capacity)));
          const next = fitInstances({ desired: all, registered: new Set(ids(small.chosen)), capacity: capacity + 1 });
          for (const id of ids(small.chosen)) expect(ids(next.chosen)).to.include(id);
        }),
      );
    });
  });

  describe('the partial mark: markPartial (exporting side), partialExports (importing side)', () => {
    const desired = exportOf(5);
    const marks = (list: readonly CloudMapInstance[]) =>
      list
        .filter((i) => i.attributes[ATTR.EXPORT_INSTANCES] !== undefined)
        .map((i) => [addressOf(i), i.attributes[ATTR.EXPORT_INSTANCES]]);

    it('M8: marks one instance, a registered one when there is one, only when asked', () => {
      const chosen = fitInstances({ desired, registered: new Set(), capacity: 4 }).chosen;
      expect(marks(markPartial(chosen, undefined, new Set()))).to.deep.equal([]);
      expect(marks(markPartial(chosen, 10, new Set()))).to.deep.equal([['10.0.0.1', '10']]);
      expect(marks(markPartial(chosen, 10, new Set([chosen[2]!.id])))).to.deep.equal([['10.0.0.2', '10']]);
      expect(markPartial([], 10, new Set())).to.deep.equal([]);
    });

    it('M8, I5: an importer reads the mark against the instances it sees, per cluster of its ClusterSet', () => {
      const chosen = markPartial(fitInstances({ desired, registered: new Set(), capacity: 4 }).chosen, 10, new Set());
      expect([...partialExports(chosen, 'clusterset1')]).to.deep.equal([['cls1', { registered: 4, desired: 10 }]]);
      expect(partialExports(chosen, 'another-set').size).to.equal(0);
      // All there (the mark outlives the hold by one write) or no mark: not partial.
      expect(partialExports(markPartial(desired, 10, new Set()), 'clusterset1').size).to.equal(0);
      expect(partialExports(desired, 'clusterset1').size).to.equal(0);
      // A listing that repeats an instance counts it once.
      expect([...partialExports([...chosen, chosen[1]!], 'clusterset1')]).to.deep.equal([
        ['cls1', { registered: 4, desired: 10 }],
      ]);
    });

    it('M8: property: an export fitted into any capacity and marked is partial for its importers exactly when something was left out', () => {
      fc.assert(
        fc.property(clusterExportArb({ min: 0, max: 12 }), fc.integer({ min: 1, max: 30 }), (x, capacity) => {
          const all = instancesForExport(x, 'v1');
          const fit = fitInstances({ desired: all, registered: new Set(), capacity });
          const seen = markPartial(fit.chosen, fit.left > 0 ? all.length : undefined, new Set());
          const partial = partialExports(seen, x.clustersetId);
          expect(partial.size).to.equal(fit.left > 0 ? 1 : 0);
          if (fit.left > 0)
            expect(partial.get(x.clusterId)).to.deep.equal({ registered: fit.chosen.length, desired: all.length });
        }),
      );
    });
  });

  describe('quotaCondition', () => {
    it('M8, X4: Ready False naming the per-service quota, its limit and the counts, and that it cannot be raised', () => {
      const c = quotaCondition(
        { quota: 'InstancesPerService', limit: 1000 },
        { registered: 1000, desired: 1100 },
        'demo',
        120,
        3,
      );
      expect(c).to.include({
        type: 'Ready',
        status: 'False',
        reason: 'InstancesPerServiceQuotaExceeded',
        observedGeneration: 3,
      });
      expect(c.message)
        .to.include('Instances per service (1,000)')
        .and.include("1,000 of this cluster's 1,100")
        .and.include('other 100')
        .and.include('cannot be raised')
        .and.include('split the Service')
        .and.include('every 120 s');
    });

    it('M8, X4: the per-namespace quota names AWS Service Quotas and the namespace', () => {
      const c = quotaCondition(
        { quota: 'InstancesPerNamespace', limit: 2000 },
        { registered: 597, desired: 700 },
        'shop',
        120,
        1,
      );
      expect(c.reason).to.equal('InstancesPerNamespaceQuotaExceeded');
      expect(c.message)
        .to.include('Instances per namespace (2,000)')
        .and.include("597 of this cluster's 700")
        .and.include('AWS Service Quotas')
        .and.include('namespace shop');
    });
  });
});
