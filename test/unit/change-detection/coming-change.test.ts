import { expect } from 'chai';
import fc from 'fast-check';
import {
  EMPTY_HISTORY,
  markerInstance,
  markerInstanceId,
  parseMarker,
} from '../../../src/change-detection/change-marker.ts';
import {
  ATTR_COMING_UNTIL,
  closeWatchUntil,
  comingInstance,
  comingInstanceId,
  parseComing,
} from '../../../src/change-detection/coming-change.ts';
import { heartbeatInstance, heartbeatInstanceId, parseHeartbeat } from '../../../src/change-detection/heartbeat.ts';

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
const INSTANCE_ID = /^[0-9a-zA-Z_/:.@-]{1,64}$/;

describe('cloudmap notice of a coming change (M7)', () => {
  it('is one instance per cluster, next to the markers, with until when to poll closely', () => {
    expect(comingInstance('cls1', 'set-1', 1_700_000_010_000.9)).to.deep.equal({
      id: 'coming@cls1',
      attributes: { CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'set-1', [ATTR_COMING_UNTIL]: '1700000010000' },
    });
  });

  it('round-trips, and is never read as a marker or a heartbeat, nor they as a notice', () => {
    const notice = comingInstance('cls1', 'set-1', 42);
    expect(parseComing(notice)).to.deep.equal({ clusterId: 'cls1', until: 42 });
    expect(parseMarker(notice)).to.equal(undefined);
    expect(parseHeartbeat(notice)).to.equal(undefined);
    expect(parseComing(heartbeatInstance('cls1', 'set-1', 42))).to.equal(undefined);
    expect(parseComing(markerInstance('cls1', 'set-1', 'demo', '42', EMPTY_HISTORY))).to.equal(undefined);
  });

  it("refuses malformed times and an id that is not the cluster's notice", () => {
    const notice = comingInstance('cls1', 'set-1', 42);
    for (const until of ['', 'soon', '-1', '1e3', '99999999999999999']) {
      expect(
        parseComing({ ...notice, attributes: { ...notice.attributes, [ATTR_COMING_UNTIL]: until } }),
        until,
      ).to.equal(undefined);
    }
    expect(parseComing({ ...notice, id: 'coming@cls2' })).to.equal(undefined);
  });

  it("ids are valid, one per cluster, and never a marker's or a heartbeat's (property)", () => {
    fc.assert(
      fc.property(dnsLabel, dnsLabel, dnsLabel, (c1, c2, namespace) => {
        const a = comingInstanceId(c1);
        return (
          INSTANCE_ID.test(a) &&
          (c1 === c2) === (a === comingInstanceId(c2)) &&
          a !== markerInstanceId(c2, namespace) &&
          a !== heartbeatInstanceId(c2)
        );
      }),
      { numRuns: 2000 },
    );
    expect(comingInstanceId('c'.repeat(63))).to.match(/^coming@h-[0-9a-f]{40}$/);
  });

  describe('closeWatchUntil', () => {
    const NOW = 1_000_000;
    const MAX = 10_000;
    const cases: {
      name: string;
      notices: [string, number][];
      acted: [string, number][];
      until: number;
      acted_after: [string, number][];
    }[] = [
      { name: 'no notice', notices: [], acted: [], until: 0, acted_after: [] },
      {
        name: 'a new notice of a peer: until it says',
        notices: [['cls2', NOW + 4000]],
        acted: [],
        until: NOW + 4000,
        acted_after: [['cls2', NOW + 4000]],
      },
      {
        name: 'a peer asking for more than the cap (or a clock ahead): the cap',
        notices: [['cls2', NOW + 3_600_000]],
        acted: [],
        until: NOW + MAX,
        acted_after: [['cls2', NOW + 3_600_000]],
      },
      {
        name: "this cluster's own notice: ignored",
        notices: [['cls1', NOW + 4000]],
        acted: [],
        until: 0,
        acted_after: [],
      },
      {
        name: 'a notice already acted on: no new window',
        notices: [['cls2', NOW + 4000]],
        acted: [['cls2', NOW + 4000]],
        until: 0,
        acted_after: [['cls2', NOW + 4000]],
      },
      {
        name: 'a newer notice of the same peer: a new window',
        notices: [['cls2', NOW + 8000]],
        acted: [['cls2', NOW - 2000]],
        until: NOW + 8000,
        acted_after: [['cls2', NOW + 8000]],
      },
      {
        name: 'an expired notice (a reader started late): none, but remembered',
        notices: [['cls2', NOW - 1]],
        acted: [],
        until: 0,
        acted_after: [['cls2', NOW - 1]],
      },
      {
        name: 'two peers: the later',
        notices: [
          ['cls2', NOW + 2000],
          ['cls3', NOW + 6000],
        ],
        acted: [],
        until: NOW + 6000,
        acted_after: [
          ['cls2', NOW + 2000],
          ['cls3', NOW + 6000],
        ],
      },
    ];
    for (const c of cases) {
      it(c.name, () => {
        const acted = new Map(c.acted);
        const out = closeWatchUntil(
          c.notices.map(([clusterId, until]) => ({ clusterId, until })),
          acted,
          'cls1',
          NOW,
          MAX,
        );
        expect(out.until).to.equal(c.until);
        expect([...out.acted]).to.deep.equal(c.acted_after);
        expect([...acted], 'the given map is not changed').to.deep.equal(c.acted);
      });
    }

    it('never opens a window past the cap, nor twice for one notice (property)', () => {
      const notice = fc.record({
        clusterId: fc.constantFrom('cls1', 'cls2', 'cls3'),
        until: fc.integer({ min: NOW - MAX, max: NOW + 10 * MAX }),
      });
      // One notice per cluster, as the marker service holds one instance per cluster.
      fc.assert(
        fc.property(fc.uniqueArray(notice, { selector: (n) => n.clusterId, maxLength: 3 }), (notices) => {
          const first = closeWatchUntil(notices, new Map(), 'cls1', NOW, MAX);
          const again = closeWatchUntil(notices, first.acted, 'cls1', NOW, MAX);
          return (first.until === 0 || (first.until > NOW && first.until <= NOW + MAX)) && again.until === 0;
        }),
        { numRuns: 1000 },
      );
    });
  });
});
