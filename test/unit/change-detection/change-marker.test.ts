import { expect } from 'chai';
import fc from 'fast-check';
import {
  appendBump,
  ATTR_CHANGES,
  changedNamespaces,
  EMPTY_HISTORY,
  HISTORY_ORIGIN,
  markerInstance,
  markerInstanceId,
  markerNamespaceName,
  nextRevision,
  parseMarker,
  servicesSince,
  unannouncedSince,
  type BumpHistory,
  type MarkerEntry,
} from '../../../src/change-detection/change-marker.ts';

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
const INSTANCE_ID = /^[0-9a-zA-Z_/:.@-]{1,64}$/;

/** The marker a reader sees after a writer bumped `namespace` with `history`. */
function entry(clusterId: string, namespace: string, revision: string, history: BumpHistory): MarkerEntry {
  return parseMarker(markerInstance(clusterId, 'set-1', namespace, revision, history))!;
}

describe('cloudmap change marker naming (M6)', () => {
  it('puts the marker in a namespace no Kubernetes namespace can be called', () => {
    expect(markerNamespaceName('clusterset-1')).to.equal('mcs-cloudmap.clusterset-1');
    expect(markerNamespaceName('has space')).to.match(/^mcs-cloudmap\.h-[0-9a-f]{32}$/);
    expect(markerNamespaceName('x'.repeat(2000))).to.have.length.below(100);
  });

  it('derives a readable instance id from cluster and namespace when it fits', () => {
    expect(markerInstanceId('cls1', 'demo')).to.equal('cls1/demo');
    expect(markerInstanceId('a'.repeat(63), 'b'.repeat(63))).to.match(/^m-[0-9a-f]{40}$/);
  });

  it('gives every (cluster, namespace) pair its own valid id of at most 64 characters (property)', () => {
    fc.assert(
      fc.property(dnsLabel, dnsLabel, dnsLabel, dnsLabel, (c1, n1, c2, n2) => {
        const a = markerInstanceId(c1, n1);
        const b = markerInstanceId(c2, n2);
        return INSTANCE_ID.test(a) && a === markerInstanceId(c1, n1) && (c1 === c2 && n1 === n2 ? a === b : a !== b);
      }),
      { numRuns: 2000 },
    );
  });

  it('advances revisions past the clock and past the last one', () => {
    expect(nextRevision(undefined, 1000)).to.equal('1000');
    expect(nextRevision('5000', 1000)).to.equal('5001');
    expect(nextRevision('junk', 7)).to.equal('7');
  });
});

describe('cloudmap change marker history (M6)', () => {
  it('round-trips through instance attributes', () => {
    const h1 = appendBump(EMPTY_HISTORY, '10', '11', ['web', 'api']);
    const h2 = appendBump(h1, '11', '12', ['db']);
    const e = entry('cls1', 'demo', '12', h2);
    expect(e).to.deep.include({ clusterId: 'cls1', namespace: 'demo', revision: '12', base: '10' });
    expect(e.bumps).to.deep.equal([
      { revision: '11', services: ['api', 'web'] },
      { revision: '12', services: ['db'] },
    ]);
  });

  it('names the services changed since any revision the history still holds', () => {
    let h = appendBump(EMPTY_HISTORY, '1', '2', ['a']);
    h = appendBump(h, '2', '3', ['b']);
    h = appendBump(h, '3', '4', ['c', 'a']);
    const e = entry('cls1', 'demo', '4', h);
    expect(servicesSince(e, '1')!.sort()).to.deep.equal(['a', 'b', 'c']);
    expect(servicesSince(e, '3')!.sort()).to.deep.equal(['a', 'c']);
    expect(servicesSince(e, '4')).to.deep.equal([]);
    expect(servicesSince(e, '0')).to.equal(undefined);
  });

  it('restarts the history after a bump that did not say which services changed', () => {
    const h = appendBump(appendBump(EMPTY_HISTORY, '1', '2', ['a']), '2', '3', undefined);
    expect(h).to.deep.equal({ base: '3', bumps: [] });
    expect(markerInstance('c', 's', 'n', '3', h).attributes).to.not.have.property(ATTR_CHANGES);
    expect(servicesSince(entry('c', 'n', '3', h), '2')).to.equal(undefined);
  });

  it('starts a new history when the previous revision is not its last one', () => {
    const h = appendBump(appendBump(EMPTY_HISTORY, '1', '2', ['a']), '7', '8', ['b']);
    expect(h).to.deep.equal({ base: '7', bumps: [{ revision: '8', services: ['b'] }] });
  });

  it("starts a marker's first bump from the origin, so its history names every service the writer changed there", () => {
    const first = appendBump(EMPTY_HISTORY, undefined, '1000', ['web']);
    expect(first).to.deep.equal({ base: HISTORY_ORIGIN, bumps: [{ revision: '1000', services: ['web'] }] });
    const second = appendBump(first, '1000', '1001', ['api']);
    expect(servicesSince(entry('c', 'n', '1001', second), HISTORY_ORIGIN)!.sort()).to.deep.equal(['api', 'web']);
    // Without names there is nothing to tell from the origin either.
    expect(appendBump(EMPTY_HISTORY, undefined, '1000', undefined)).to.deep.equal({ base: '1000', bumps: [] });
  });

  it('drops the oldest bumps to fit one attribute value', () => {
    let h: BumpHistory = EMPTY_HISTORY;
    for (let r = 1; r <= 200; r++) h = appendBump(h, String(r), String(r + 1), [`service-number-${r}`]);
    const value = markerInstance('c', 's', 'n', '201', h).attributes[ATTR_CHANGES]!;
    expect(value.length).to.be.at.most(1024);
    expect(h.bumps.at(-1)!.revision).to.equal('201');
    expect(servicesSince(entry('c', 'n', '201', h), '200')).to.deep.equal(['service-number-200']);
    expect(servicesSince(entry('c', 'n', '201', h), '2')).to.equal(undefined);
  });

  it('never hides a change from a reader: it gets a superset of what changed since its revision, or "unknown" only when the history cannot hold it (property)', () => {
    const service = fc.constantFrom('a', 'b', 'c', 'web', 'api', 'x'.repeat(300));
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.array(service, { maxLength: 4 }), { nil: undefined }), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        (bumps, seenPick) => {
          let h: BumpHistory = EMPTY_HISTORY;
          let revision = 100;
          const log: { revision: string; services: readonly string[] | undefined }[] = [];
          for (const services of bumps) {
            h = appendBump(h, String(revision), String(revision + 1), services);
            revision++;
            log.push({ revision: String(revision), services });
          }
          const seenIndex = seenPick % log.length; // the reader saw log[seenIndex], missed the rest
          const reported = servicesSince(entry('c', 'n', String(revision), h), log[seenIndex]!.revision);
          const missed = log.slice(seenIndex + 1);
          if (missed.some((m) => m.services === undefined)) return reported === undefined;
          // "unknown" is right only when the missed bumps cannot fit in one attribute value (revision:a,b;...), where the
          // oldest are dropped: an implementation that always answers "unknown" fails here.
          const encoded = missed.reduce(
            (n, m) => n + m.revision.length + 2 + m.services!.reduce((k, s) => k + s.length + 1, 0),
            0,
          );
          if (reported === undefined) return encoded > 1024;
          return missed.every((m) => m.services!.every((s) => reported.includes(s)));
        },
      ),
    );
  });
});

describe('cloudmap change marker comparison (M6)', () => {
  const before = new Map([
    ['cls2/demo', entry('cls2', 'demo', '5', appendBump(EMPTY_HISTORY, '4', '5', ['web']))],
    ['cls2/prod', entry('cls2', 'prod', '9', EMPTY_HISTORY)],
  ]);

  it('finds nothing when no revision moved', () => {
    expect(changedNamespaces(before, [...before.values()]).size).to.equal(0);
  });

  it('narrows to the named services when the history reaches back', () => {
    const now = [
      entry('cls2', 'demo', '6', appendBump(before.get('cls2/demo')!, '5', '6', ['api'])),
      before.get('cls2/prod')!,
    ];
    expect(changedNamespaces(before, now)).to.deep.equal(new Map([['demo', new Set(['api'])]]));
  });

  it('M7: narrows a marker new to the reader to the services it names when its history reaches back to its first bump', () => {
    const now = [...before.values(), entry('cls2', 'fresh', '20', appendBump(EMPTY_HISTORY, undefined, '20', ['web']))];
    expect(changedNamespaces(before, now)).to.deep.equal(new Map([['fresh', new Set(['web'])]]));
    // Cut short: the oldest bumps were dropped, so the history no longer reaches the origin.
    let cut: BumpHistory = appendBump(EMPTY_HISTORY, undefined, '100', ['first']);
    for (let r = 100; r < 300; r++) cut = appendBump(cut, String(r), String(r + 1), [`service-number-${r}`]);
    expect(cut.base).to.not.equal(HISTORY_ORIGIN);
    expect(changedNamespaces(before, [...before.values(), entry('cls2', 'fresh', '300', cut)])).to.deep.equal(
      new Map([['fresh', 'all']]),
    );
  });

  it('marks the whole namespace for a new marker, a vanished marker or a gap in the history', () => {
    const now = [
      entry('cls2', 'demo', '8', appendBump(EMPTY_HISTORY, '7', '8', ['api'])),
      entry('cls3', 'other', '1', EMPTY_HISTORY),
    ];
    expect(changedNamespaces(before, now)).to.deep.equal(
      new Map([
        ['demo', 'all'],
        ['other', 'all'],
        ['prod', 'all'],
      ]),
    );
  });
});

describe('cloudmap change marker: what a restarted writer may not have announced', () => {
  const entry = (clusterId: string, namespace: string, revision: string): MarkerEntry => ({
    id: `${clusterId}/${namespace}`,
    clusterId,
    namespace,
    revision,
    base: undefined,
    bumps: [],
  });

  it("is everything since the cluster's last bump in any namespace, at most maxAge back", () => {
    const now = 10_000_000;
    const markers = [
      entry('cls1', 'a', String(now - 5000)),
      entry('cls1', 'b', String(now - 2000)),
      entry('cls2', 'a', String(now - 100)),
    ];
    expect(unannouncedSince(markers, 'cls1', now, 3_600_000)).to.equal(now - 2000);
    expect(unannouncedSince(markers, 'cls1', now, 1000)).to.equal(now - 1000);
    expect(unannouncedSince(markers, 'cls3', now, 60_000)).to.equal(now - 60_000);
  });
});
