import { expect } from 'chai';
import fc from 'fast-check';
import {
  CHECKPOINT_VERSION,
  decodeCheckpoint,
  encodeCheckpoint,
  planWarmStart,
  type NamespaceCheckpoint,
  type WarmStartInput,
} from '../../../src/core/checkpoint.ts';
import { instancesForExport } from '../../../src/core/cloudmap-attributes.ts';
import { clusterExportArb } from './export-fixtures.ts';

const OWNER = { clusterId: 'cls1', clustersetId: 'clusterset1', region: 'us-west-2' };
const ours = {
  id: 'tcp-10.0.0.1-80-14757f89808b',
  attributes: { K8S_CONTROLLER: 'mcs-cloudmap 0.1.0', CLUSTER_ID: 'cls2', CLUSTERSET_ID: 'clusterset1' },
};
const legacy = {
  id: 'tcp-10_0_0_2-80',
  attributes: {
    K8S_CONTROLLER: 'aws-cloud-map-mcs-controller-for-k8s 0.3.1',
    CLUSTER_ID: 'cls3',
    CLUSTERSET_ID: 'clusterset1',
  },
};

function checkpoint(
  namespace: string,
  services: string[],
  extra: Partial<NamespaceCheckpoint> = {},
): NamespaceCheckpoint {
  return {
    version: CHECKPOINT_VERSION,
    ...OWNER,
    namespace,
    writtenAt: 1000,
    markers: [{ id: `cls2/${namespace}`, clusterId: 'cls2', revision: '5' }],
    services: services.map((name) => ({ name, revision: 3, instances: [ours] })),
    ...extra,
  };
}

function plan(input: Partial<WarmStartInput>) {
  return planWarmStart({
    checkpoints: [],
    namespaces: new Set(['a', 'b']),
    changed: new Map(),
    known: [],
    cold: false,
    ...input,
  });
}
const keys = (list: readonly { namespace: string; service: string }[]) =>
  list.map((k) => `${k.namespace}/${k.service}`).sort();
const seeded = (p: ReturnType<typeof plan>) =>
  [...p.seed].flatMap(([ns, services]) => services.map((s) => `${ns}/${s.name}`)).sort();

describe('core warm start: checkpoints of what was read from Cloud Map (M9)', () => {
  describe('decodeCheckpoint', () => {
    it('gives back what encodeCheckpoint wrote (property)', () => {
      fc.assert(
        fc.property(
          fc.array(clusterExportArb({ min: 0, max: 3 }), { maxLength: 3 }),
          fc.option(fc.nat(), { nil: undefined }),
          (exports, revision) => {
            const cp = checkpoint('a', [], {
              services: exports.map((x, i) => ({ name: `svc-${i}`, revision, instances: instancesForExport(x, 'v1') })),
            });
            expect(decodeCheckpoint(encodeCheckpoint(cp), OWNER)).to.deep.equal(cp);
          },
        ),
      );
    });

    const cases: Array<[string, string]> = [
      ['not JSON', '{"version":1,'],
      ['not an object', '[1]'],
      ['version', JSON.stringify({ ...checkpoint('a', ['x']), version: 2 })],
      ['clusterId', JSON.stringify({ ...checkpoint('a', ['x']), clusterId: 'cls9' })],
      ['clustersetId', JSON.stringify({ ...checkpoint('a', ['x']), clustersetId: 'other' })],
      ['region', JSON.stringify({ ...checkpoint('a', ['x']), region: 'eu-west-1' })],
      ['no namespace', JSON.stringify({ ...checkpoint('a', ['x']), namespace: '' })],
      [
        'a malformed service',
        JSON.stringify({ ...checkpoint('a', ['x']), services: [{ name: 'x', revision: 'one', instances: [] }] }),
      ],
      [
        'a malformed service',
        JSON.stringify({
          ...checkpoint('a', ['x']),
          services: [{ name: 'x', instances: [{ id: 'i', attributes: { A: 1 } }] }],
        }),
      ],
      ['service x twice', JSON.stringify(checkpoint('a', ['x', 'x']))],
      [
        'a malformed marker',
        JSON.stringify({ ...checkpoint('a', ['x']), markers: [{ id: 'cls2/a', clusterId: 'cls2' }] }),
      ],
    ];
    for (const [why, text] of cases) {
      it(`refuses a checkpoint with ${why}, saying so`, () => {
        const decoded = decodeCheckpoint(text, OWNER);
        expect(decoded).to.have.property('invalid').that.includes(why.split(' ')[0]);
      });
    }

    it('never throws, whatever the text (property)', () => {
      fc.assert(
        fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
          decodeCheckpoint(text, OWNER);
        }),
      );
    });
  });

  describe('planWarmStart', () => {
    it('takes the services of a checkpoint whose markers did not move, and reads nothing known', () => {
      const p = plan({ checkpoints: [checkpoint('a', ['x', 'y'])], known: [{ namespace: 'a', service: 'x' }] });
      expect(seeded(p)).to.deep.equal(['a/x', 'a/y']);
      expect(p.read).to.deep.equal([]);
    });

    it('reads the services a marker named since, and checks them again later', () => {
      const p = plan({ checkpoints: [checkpoint('a', ['x', 'y'])], changed: new Map([['a', new Set(['y', 'new'])]]) });
      expect(seeded(p)).to.deep.equal(['a/x']);
      expect(keys(p.read)).to.deep.equal(['a/new', 'a/y']);
      expect(keys(p.announced)).to.deep.equal(['a/new', 'a/y']);
    });

    const untrusted: Array<[string, Partial<WarmStartInput>, string]> = [
      ['a marker lost its history (stale checkpoint)', { changed: new Map([['a', 'all']]) }, 'history'],
      ['the namespace was deleted while the worker was down', { namespaces: new Set(['b']) }, 'no longer'],
      ['the markers could not be read, or a predecessor left writes pending', { cold: true }, 'cold'],
    ];
    for (const [what, input, why] of untrusted) {
      it(`trusts nothing of a namespace when ${what}`, () => {
        const p = plan({
          checkpoints: [checkpoint('a', ['x', 'y'])],
          known: [{ namespace: 'a', service: 'x' }],
          ...input,
        });
        expect(seeded(p)).to.deep.equal([]);
        expect(p.untrusted.get('a')).to.include(why);
        // Its services are read where the namespace still exists, as at a cold start.
        expect(keys(p.read)).to.deep.equal(input.namespaces?.has('a') === false ? [] : ['a/x', 'a/y']);
      });
    }

    it('trusts nothing of a namespace where a writer that never bumps the markers has instances (M3)', () => {
      const cp = checkpoint('a', ['x']);
      const p = plan({
        checkpoints: [{ ...cp, services: [...cp.services, { name: 'z', revision: 1, instances: [legacy] }] }],
      });
      expect(seeded(p)).to.deep.equal([]);
      expect(keys(p.read)).to.deep.equal(['a/x', 'a/z']);
    });

    it('reads a known service no checkpoint holds, and uses the checkpoint written last of a namespace', () => {
      const older = checkpoint('a', ['old'], { writtenAt: 1 });
      const p = plan({
        checkpoints: [checkpoint('a', ['x']), older],
        known: [
          { namespace: 'a', service: 'w' },
          { namespace: 'b', service: 'v' },
          { namespace: 'gone', service: 'u' },
        ],
      });
      expect(seeded(p)).to.deep.equal(['a/x']);
      expect(keys(p.read)).to.deep.equal(['a/w', 'b/v']);
    });

    it('every known service of a namespace that exists is taken from a trusted checkpoint or read, never both; nothing is taken from an untrusted one (property)', () => {
      const names = fc.constantFrom<string>('x', 'y', 'z');
      const namespaces = fc.constantFrom<string>('a', 'b', 'c');
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              namespace: namespaces,
              services: fc.uniqueArray(names),
              legacy: fc.boolean(),
              writtenAt: fc.nat(5),
            }),
            { maxLength: 4 },
          ),
          fc.subarray<string>(['a', 'b', 'c']),
          fc.array(fc.tuple(namespaces, fc.oneof(fc.constant('all' as const), fc.uniqueArray(names))), {
            maxLength: 3,
          }),
          fc.array(fc.record({ namespace: namespaces, service: names }), { maxLength: 6 }),
          fc.boolean(),
          (cps, listed, changedList, known, cold) => {
            const checkpoints = cps.map((c) =>
              checkpoint(c.namespace, [], {
                writtenAt: c.writtenAt,
                services: c.services.map((name, i) => ({
                  name,
                  revision: 1,
                  instances: [c.legacy && i === 0 ? legacy : ours],
                })),
              }),
            );
            const changed = new Map(changedList.map(([ns, s]) => [ns, s === 'all' ? ('all' as const) : new Set(s)]));
            const p = planWarmStart({ checkpoints, namespaces: new Set(listed), changed, known, cold });
            const read = new Set(keys(p.read));
            const seed = seeded(p);
            for (const k of seed) expect(read.has(k), `${k} both taken and read`).to.equal(false);
            for (const k of known)
              if (listed.includes(k.namespace))
                expect(
                  read.has(`${k.namespace}/${k.service}`) || seed.includes(`${k.namespace}/${k.service}`),
                  `${k.namespace}/${k.service}`,
                ).to.equal(true);
            for (const [ns, services] of p.seed) {
              expect(cold).to.equal(false);
              expect(listed).to.include(ns);
              expect(changed.get(ns)).to.not.equal('all');
              const named = changed.get(ns);
              for (const s of services)
                expect(named instanceof Set && named.has(s.name), `${ns}/${s.name} named by a marker`).to.equal(false);
            }
            for (const k of read) expect(listed).to.include(k.split('/')[0]);
          },
        ),
      );
    });
  });
});
