import { expect } from 'chai';
import type { HeartbeatSighting } from '../../../../../src/core/cluster-liveness.ts';
import type { HeartbeatView } from '../../../../../src/change-detection/liveness.ts';
import { createLogger } from '../../../../../src/observability/log.ts';
import { DeadClusters } from '../../../../../src/worker/controllers/dead-cluster/dead-clusters.ts';

const TTL = 180_000;
const log = createLogger('test', 'silent');

function harness(reapAfterMs = 0) {
  let view: HeartbeatView = { sightings: new Map(), readAt: undefined };
  const changes: string[][] = [];
  const reaped: string[] = [];
  const dead = new DeadClusters({
    self: 'cls1',
    ttlMs: TTL,
    reapAfterMs,
    log,
    heartbeats: () => view,
    onChange: (clusters) => changes.push([...clusters].sort()),
    onDue: (clusters) => reaped.push(...clusters),
  });
  const read = (readAt: number, sightings: Record<string, HeartbeatSighting>) => {
    view = { sightings: new Map(Object.entries(sightings)), readAt };
    dead.evaluate();
  };
  return { dead, changes, reaped, read };
}

describe('worker/controllers/dead-cluster/dead-clusters', () => {
  it('withdraws a peer silent past the TTL once, and restores it when it beats again', () => {
    const { dead, changes, read } = harness();
    read(1000, { cls1: { stamp: 1, heardAt: 0 }, cls2: { stamp: 1, heardAt: 0 } });
    expect(changes).to.deep.equal([]);
    read(TTL + 1, { cls1: { stamp: 1, heardAt: 0 }, cls2: { stamp: 1, heardAt: 0 } });
    read(TTL + 2, { cls1: { stamp: 1, heardAt: 0 }, cls2: { stamp: 1, heardAt: 0 } });
    expect(changes).to.deep.equal([['cls2']]);
    expect([...dead.silent]).to.deep.equal([['cls2', 0]]);
    read(TTL + 3, { cls1: { stamp: 1, heardAt: 0 }, cls2: { stamp: 2, heardAt: TTL + 3 } });
    expect(changes).to.deep.equal([['cls2'], ['cls2']]);
    expect(dead.silent.size).to.equal(0);
  });

  it('judges nothing before the first read, nor past the last complete one (a failing read withdraws nothing)', () => {
    const { dead, changes, read } = harness();
    dead.evaluate();
    read(1000, { cls2: { stamp: 1, heardAt: 0 } });
    // The watcher's reads fail from here: readAt stays, however late it gets.
    dead.evaluate();
    expect(changes).to.deep.equal([]);
  });

  it('hands over for reaping only with --reap-dead-clusters-after, only peers silent that long, and not again at once', () => {
    const off = harness();
    off.read(10 * TTL, { cls2: { stamp: 1, heardAt: 0 } });
    expect(off.reaped).to.deep.equal([]);

    const on = harness(2 * TTL);
    on.read(TTL + 1, { cls1: { stamp: 1, heardAt: 0 }, cls2: { stamp: 1, heardAt: 0 } });
    expect(on.reaped).to.deep.equal([]);
    on.read(2 * TTL + 1, {
      cls1: { stamp: 1, heardAt: 0 },
      cls2: { stamp: 1, heardAt: 0 },
      cls3: { stamp: 1, heardAt: 2 * TTL },
    });
    on.read(2 * TTL + 2, { cls1: { stamp: 1, heardAt: 0 }, cls2: { stamp: 1, heardAt: 0 } });
    expect(on.reaped).to.deep.equal(['cls2']);
  });
});
