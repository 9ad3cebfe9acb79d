import { expect } from 'chai';
import fc from 'fast-check';
import {
  EMPTY_HISTORY,
  markerInstance,
  markerInstanceId,
  parseMarker,
} from '../../../src/change-detection/change-marker.ts';
import {
  ATTR_HEARTBEAT,
  heartbeatInstance,
  heartbeatInstanceId,
  parseHeartbeat,
} from '../../../src/change-detection/heartbeat.ts';

const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
const INSTANCE_ID = /^[0-9a-zA-Z_/:.@-]{1,64}$/;

describe('cloudmap heartbeat instance (dead clusters)', () => {
  it("is one instance per cluster, next to the markers, with the writer's time", () => {
    expect(heartbeatInstance('cls1', 'set-1', 1_700_000_000_123.7)).to.deep.equal({
      id: 'heartbeat@cls1',
      attributes: { CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'set-1', [ATTR_HEARTBEAT]: '1700000000123' },
    });
  });

  it('round-trips, and is never read as a marker nor a marker as a heartbeat', () => {
    const beat = heartbeatInstance('cls1', 'set-1', 42);
    expect(parseHeartbeat(beat)).to.deep.equal({ clusterId: 'cls1', stamp: 42 });
    expect(parseMarker(beat)).to.equal(undefined);
    expect(parseHeartbeat(markerInstance('cls1', 'set-1', 'demo', '42', EMPTY_HISTORY))).to.equal(undefined);
  });

  it("refuses malformed stamps and an id that is not the cluster's heartbeat", () => {
    const beat = heartbeatInstance('cls1', 'set-1', 42);
    for (const stamp of ['', 'soon', '-1', '1e3', '99999999999999999']) {
      expect(parseHeartbeat({ ...beat, attributes: { ...beat.attributes, [ATTR_HEARTBEAT]: stamp } }), stamp).to.equal(
        undefined,
      );
    }
    expect(parseHeartbeat({ ...beat, id: 'heartbeat@cls2' })).to.equal(undefined);
  });

  it("ids are valid, one per cluster, and never a marker's (property)", () => {
    fc.assert(
      fc.property(dnsLabel, dnsLabel, dnsLabel, (c1, c2, namespace) => {
        const a = heartbeatInstanceId(c1);
        return (
          INSTANCE_ID.test(a) &&
          (c1 === c2) === (a === heartbeatInstanceId(c2)) &&
          a !== markerInstanceId(c2, namespace)
        );
      }),
      { numRuns: 2000 },
    );
    expect(heartbeatInstanceId('c'.repeat(63))).to.match(/^heartbeat@h-[0-9a-f]{40}$/);
  });
});
