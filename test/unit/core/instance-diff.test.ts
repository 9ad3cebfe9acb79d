import { expect } from 'chai';
import fc from 'fast-check';
import { ATTR, ExportDataError, instancesForExport, KNOWN_ATTRIBUTES } from '../../../src/core/cloudmap-attributes.ts';
import { diffInstances, withdrawalOrder, type InstancePlan } from '../../../src/core/instance-diff.ts';
import { latestById, legacyInstanceId } from '../../../src/core/instance-id.ts';
import type { CloudMapInstance } from '../../../src/core/types.ts';
import { clusterExportArb, readyEndpoint, tutorialExport } from './export-fixtures.ts';

const us = { clusterId: 'cls1', clustersetId: 'clusterset1' };
const withReady = (ready: boolean, extra: Partial<Parameters<typeof readyEndpoint>[2]> = {}) =>
  tutorialExport({ endpoints: [readyEndpoint('10.0.0.1', 80, { ready, ...extra }), readyEndpoint('10.0.0.2')] });
const instances = (x = withReady(true), version = 'v1') => instancesForExport(x, version);
const diff = (desired: CloudMapInstance[], current: CloudMapInstance[]) => diffInstances({ desired, current, ...us });
const ids = (list: CloudMapInstance[]) => list.map((i) => i.id);
const setAttributes = (i: CloudMapInstance, attributes: Record<string, string>) => ({
  id: i.id,
  attributes: { ...i.attributes, ...attributes },
});

/** The Cloud Map service after a plan is carried out (by id, the last copy of each). */
function apply(current: CloudMapInstance[], plan: InstancePlan): Map<string, CloudMapInstance> {
  const byId = latestById(current);
  for (const instance of plan.register) byId.set(instance.id, instance);
  for (const id of plan.deregister) byId.delete(id);
  return byId;
}

const ours = (i: CloudMapInstance, owner: { clusterId: string; clustersetId: string }) =>
  i.attributes[ATTR.CLUSTER_ID] === owner.clusterId && i.attributes[ATTR.CLUSTERSET_ID] === owner.clustersetId;
/** What we write, without the version stamp (which never causes a write). */
const written = (attributes: Record<string, string>) =>
  Object.fromEntries(Object.entries(attributes).filter(([k]) => KNOWN_ATTRIBUTES.has(k) && k !== ATTR.K8S_CONTROLLER));

describe('instance diff (M4, E8)', () => {
  it('M4: registers everything into an empty service', () => {
    const desired = instances();
    expect(diff(desired, [])).to.deep.equal({ register: desired, deregister: [], blocked: [] });
  });

  it('M6: plans nothing when Cloud Map already matches', () => {
    expect(diff(instances(), instances())).to.deep.equal({ register: [], deregister: [], blocked: [] });
  });

  const changes: Array<[string, CloudMapInstance[]]> = [
    ['readiness (ready → unready)', instances(withReady(false))],
    ['hostname', instances(withReady(true, { hostname: 'web-0' }))],
    ['node name', instances(withReady(true, { nodeName: 'node-b' }))],
  ];
  for (const [what, desired] of changes) {
    it(`E8: an instance whose only change is its ${what} is re-registered (v0.3.1 matched on IP only)`, () => {
      const plan = diff(desired, instances());
      expect(ids(plan.register)).to.deep.equal([desired[0]!.id]);
      expect(plan.deregister).to.deep.equal([]);
    });
  }

  it('M6: a new controller version alone does not rewrite instances', () => {
    expect(diff(instances(withReady(true), 'v2'), instances(withReady(true), 'v1')).register).to.deep.equal([]);
  });

  it('E3: deregisters what is no longer desired', () => {
    const current = instances();
    expect(diff(current.slice(1), current)).to.deep.equal({ register: [], deregister: [current[0]!.id], blocked: [] });
    expect(diff([], current).deregister).to.deep.equal(ids(current));
  });

  it("M4: never deregisters another cluster's instances, nor those of another ClusterSet reusing our cluster id", () => {
    const theirs = instancesForExport(
      tutorialExport({ clusterId: 'cls2', endpoints: [readyEndpoint('10.0.0.1')] }),
      'v1',
    );
    const otherSet = instancesForExport(
      tutorialExport({ clustersetId: 'other-set', endpoints: [readyEndpoint('10.0.0.1')] }),
      'v1',
    );
    const legacyOfOthers = {
      id: legacyInstanceId('TCP', '10.0.0.9', 80),
      attributes: { CLUSTER_ID: 'cls2', CLUSTERSET_ID: 'clusterset1' },
    };
    const noOwner = { id: 'manual', attributes: { AWS_INSTANCE_IPV4: '10.0.0.8' } };
    expect(diff([], [...theirs, ...otherSet, legacyOfOthers, noOwner])).to.deep.equal({
      register: [],
      deregister: [],
      blocked: [],
    });
  });

  it("M4: a desired id already held by another writer's instance is reported, not overwritten", () => {
    const desired = instances();
    const squatter = { id: desired[0]!.id, attributes: { ...desired[0]!.attributes, CLUSTER_ID: 'cls2' } };
    const plan = diff(desired, [squatter]);
    expect(plan.blocked).to.deep.equal([{ id: desired[0]!.id, owner: 'cls2 in clusterset1' }]);
    expect(ids(plan.register)).to.deep.equal([desired[1]!.id]);
  });

  it('M2: attributes another writer added to our instance are kept when it is re-registered', () => {
    const current = instances().map((i) => setAttributes(i, { TEAM_OWNER: 'payments' }));
    const plan = diff(instances(withReady(false)), current);
    expect(plan.register).to.have.length(1);
    expect(plan.register[0]!.attributes).to.include({ TEAM_OWNER: 'payments', READY: 'false' });
    expect(diff(instances(), current).register, 'kept attributes alone are no change').to.deep.equal([]);
  });

  it('M2: an attribute we no longer write is removed, not kept as unknown', () => {
    const current = instances(withReady(true, { hostname: 'web-0' }));
    const plan = diff(instances(), current);
    expect(plan.register[0]!.attributes).to.not.have.property(ATTR.HOSTNAME);
  });

  it('refuses, naming the field, when kept attributes would exceed Cloud Map limits', () => {
    const extra = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`OTHER_${i}`, 'x']));
    const current = instances().map((i) => setAttributes(i, extra));
    expect(() => diff(instances(withReady(false)), current)).to.throw(
      ExportDataError,
      /cluster cls1, Cloud Map instance .*: 31 attributes \(including 15 kept from another writer/,
    );
  });

  describe('duplicates listed by the emulator (RegisterInstance appends)', () => {
    it('plans nothing when the last copy already matches', () => {
      const desired = instances();
      const stale = setAttributes(desired[0]!, { READY: 'false' });
      expect(diff(desired, [stale, ...desired])).to.deep.equal({ register: [], deregister: [], blocked: [] });
    });
    it('re-registers once when the last copy differs', () => {
      const desired = instances();
      const stale = setAttributes(desired[0]!, { READY: 'false' });
      expect(ids(diff(desired, [...desired, stale, stale]).register)).to.deep.equal([desired[0]!.id]);
    });
    it('deregisters a repeated id once', () => {
      const current = instances();
      expect(diff([], [...current, ...current]).deregister).to.deep.equal(ids(current));
    });
  });

  it('M3: a cluster migrating from v0.3.1 replaces its legacy-format instances with its own', () => {
    const legacy = { id: legacyInstanceId('TCP', '10.0.0.1', 80), attributes: { ...instances()[0]!.attributes } };
    const plan = diff(instances(), [legacy]);
    expect(ids(plan.register)).to.deep.equal(ids(instances()));
    expect(plan.deregister).to.deep.equal([legacy.id]);
  });

  it('refuses desired instances of another cluster or repeated ids (a bug in the caller)', () => {
    const other = instancesForExport(
      tutorialExport({ clusterId: 'cls2', endpoints: [readyEndpoint('10.0.0.1')] }),
      'v1',
    );
    expect(() => diff(other, [])).to.throw(
      /desired instance .* belongs to cls2 in clusterset1, not to this cluster cls1 in clusterset1/,
    );
    expect(() => diff([...instances(), instances()[0]!], [])).to.throw(/appears twice/);
  });

  describe('E8, I3: which deregistrations need not wait for the registrations', () => {
    const order = (desired: CloudMapInstance[], current: CloudMapInstance[]) =>
      withdrawalOrder({ deregister: diff(desired, current).deregister, current, ...us });
    const portsExport = (...endpoints: Array<[string, number[]]>) =>
      tutorialExport({
        ports: [
          { name: 'http', protocol: 'TCP', port: 80, targetPort: '80' },
          { name: 'https', protocol: 'TCP', port: 443, targetPort: '443' },
        ],
        endpoints: endpoints.map(([address, ports]) => ({
          address,
          ready: true,
          ports: ports.map((port) => ({ name: port === 80 ? 'http' : 'https', protocol: 'TCP' as const, port })),
        })),
      });

    it("a rollout: the terminating pod's instance goes at once, since the others keep its port up", () => {
      const before = instances(tutorialExport({ endpoints: [readyEndpoint('10.0.0.1'), readyEndpoint('10.0.0.2')] }));
      const after = instances(tutorialExport({ endpoints: [readyEndpoint('10.0.0.2'), readyEndpoint('10.0.0.3')] }));
      expect(order(after, before)).to.deep.equal({ early: [before[0]!.id], late: [] });
    });

    it('the last endpoint waits for the address-less instance that keeps the cluster in the import', () => {
      const before = instances(tutorialExport({ endpoints: [readyEndpoint('10.0.0.1')] }));
      const after = instances(tutorialExport({ endpoints: [] }));
      expect(order(after, before)).to.deep.equal({ early: [], late: [before[0]!.id] });
    });

    it("per Service port: the last instance of a port waits, another port's goes at once", () => {
      const before = instances(portsExport(['10.0.0.1', [80]], ['10.0.0.2', [80, 443]]));
      const after = instances(portsExport(['10.0.0.1', [80]], ['10.0.0.3', [443]]));
      const gone = ids(before).filter((id) => !ids(after).includes(id));
      const o = order(after, before);
      expect(o.early.map((id) => before.find((i) => i.id === id)!.attributes[ATTR.SERVICE_PORT])).to.deep.equal(['80']);
      expect(o.late.map((id) => before.find((i) => i.id === id)!.attributes[ATTR.SERVICE_PORT])).to.deep.equal(['443']);
      expect([...o.early, ...o.late].sort()).to.deep.equal(gone.sort());
    });

    it("another cluster's instance of the port does not hold it up for us", () => {
      const mine = instances(tutorialExport({ endpoints: [readyEndpoint('10.0.0.1')] }));
      const theirs = instances(tutorialExport({ clusterId: 'cls2', endpoints: [readyEndpoint('10.1.0.1')] }));
      expect(withdrawalOrder({ deregister: ids(mine), current: [...theirs, ...mine], ...us })).to.deep.equal({
        early: [],
        late: ids(mine),
      });
    });

    it('property: withdrawing the early ones first leaves every Service port and the cluster as present as before', () => {
      const ourExport = clusterExportArb({ min: 0, max: 4 }, fc.constant('cls1'));
      fc.assert(
        fc.property(ourExport, ourExport, (a, b) => {
          const owner = { clusterId: a.clusterId, clustersetId: a.clustersetId };
          const current = instancesForExport(a, 'v1');
          const desired = instancesForExport({ ...b, clustersetId: a.clustersetId }, 'v1');
          const { deregister } = diffInstances({ desired, current, ...owner });
          const o = withdrawalOrder({ deregister, current, ...owner });
          expect([...o.early, ...o.late].sort()).to.deep.equal([...deregister].sort());
          const port = (i: CloudMapInstance) =>
            `${i.attributes[ATTR.SERVICE_PROTOCOL]}/${i.attributes[ATTR.SERVICE_PORT]}`;
          const early = new Set(o.early);
          expect(new Set(current.filter((i) => !early.has(i.id)).map(port))).to.deep.equal(new Set(current.map(port)));
        }),
      );
    });
  });

  describe('properties', () => {
    const ourExport = clusterExportArb({ min: 0, max: 4 }, fc.constant('cls1'));
    const otherExports = fc.array(clusterExportArb({ min: 0, max: 3 }, fc.constantFrom('cls2', 'cls3')), {
      maxLength: 2,
    });
    /** Cloud Map as it may be: our old instances (older version, some with foreign attributes, some repeated), others'. */
    const scenario = fc
      .record({ before: ourExport, after: ourExport, others: otherExports, stamp: fc.boolean(), repeat: fc.boolean() })
      .map((s) => {
        const old = instancesForExport(s.before, 'v0').map((i, n) =>
          s.stamp && n % 2 === 0 ? setAttributes(i, { TEAM_OWNER: 'x' }) : i,
        );
        const others = s.others.flatMap((x) => instancesForExport(x, 'v0'));
        const current = [
          ...others,
          ...old,
          ...(s.repeat ? old.slice(0, 1).map((i) => setAttributes(i, { READY: 'maybe' })) : []),
        ];
        return { desired: instancesForExport(s.after, 'v1'), current, others };
      });
    const owner = { clusterId: 'cls1', clustersetId: 'set1' };
    const plan = (desired: CloudMapInstance[], current: CloudMapInstance[]) =>
      diffInstances({ desired, current, ...owner });

    it("M4: never registers over or deregisters another cluster's instance", () => {
      fc.assert(
        fc.property(scenario, ({ desired, current, others }) => {
          const p = plan(desired, current);
          const theirIds = new Set(ids(others));
          for (const id of [...ids(p.register), ...p.deregister]) expect(theirIds.has(id), id).to.equal(false);
          const before = latestById(current);
          for (const id of p.deregister) expect(ours(before.get(id)!, owner)).to.equal(true);
        }),
      );
    });

    it('M4/E8: carrying out the plan leaves exactly the desired instances of our cluster, and others untouched', () => {
      fc.assert(
        fc.property(scenario, ({ desired, current }) => {
          const after = apply(current, plan(desired, current));
          const mine = [...after.values()].filter((i) => ours(i, owner));
          expect(ids(mine).sort()).to.deep.equal(ids(desired).sort());
          for (const d of desired) expect(written(after.get(d.id)!.attributes)).to.deep.equal(written(d.attributes));
          const before = latestById(current);
          for (const [id, instance] of before) if (!ours(instance, owner)) expect(after.get(id)).to.equal(instance);
        }),
      );
    });

    it('M6: once carried out, the same desired state plans nothing', () => {
      fc.assert(
        fc.property(scenario, ({ desired, current }) => {
          const after = [...apply(current, plan(desired, current)).values()];
          expect(plan(desired, after)).to.deep.equal({ register: [], deregister: [], blocked: [] });
        }),
      );
    });
  });
});
