// The traffic benchmark's figures (test/support/traffic-result.ts): failed requests per side, with their causes and
// times relative to the change, as the result file's figures.
import { expect } from 'chai';
import {
  CROSS_FIGURE,
  failureLines,
  IN_CLUSTER_FIGURE,
  scenarioFigures,
  summarizeSide,
  type Stream,
} from '../../support/traffic-result.ts';

const ok = (at: number) => ({ at, ok: true, server: 'nginx-a' });
const failed = (at: number, cause: string, endpoint?: string) => ({
  at,
  ok: false,
  cause,
  ...(endpoint ? { endpoint } : {}),
});

const streams: Stream[] = [
  {
    side: 'cross-cluster',
    cluster: 'cls2',
    via: 'clusterset name',
    mode: 'new-connection',
    records: [ok(9_000), failed(13_100, 'connect timeout'), failed(15_000, 'refused'), ok(16_000)],
  },
  {
    side: 'cross-cluster',
    cluster: 'cls2',
    via: 'ClusterSet IP',
    mode: 'keep-alive',
    records: [ok(9_500), failed(12_000, 'connect timeout', 'nginx-b')],
  },
  {
    side: 'in-cluster',
    cluster: 'cls1',
    via: 'nginx-hello cluster.local name',
    mode: 'new-connection',
    records: [ok(9_000), ok(12_000)],
  },
];

describe('traffic benchmark: figures', () => {
  it("sums each side's streams, counts causes most frequent first and times failures from the change", () => {
    const s = summarizeSide(streams, 'cross-cluster', 10_000)!;
    expect(s.sent).to.equal(6);
    expect(s.failed).to.equal(3);
    expect(s.causes).to.deep.equal([
      ['connect timeout', 2],
      ['refused', 1],
    ]);
    expect(s.failures.map((f) => f.atS)).to.deep.equal([2, 3.1, 5]);
    expect(failureLines(s)[0]).to.equal('+2.0 s cls2 ClusterSet IP keep-alive: connect timeout (endpoint nginx-b)');
  });

  it('gives both figures side by side, and only the cross-cluster one for a scenario without a baseline', () => {
    expect(scenarioFigures(streams, 10_000)).to.deep.equal([
      { name: CROSS_FIGURE, value: 3, unit: '', detail: 'of 6; 2 connect timeout, 1 refused; +2.0 s to +5.0 s' },
      { name: IN_CLUSTER_FIGURE, value: 0, unit: '', detail: 'of 2' },
    ]);
    expect(
      scenarioFigures(
        streams.filter((s) => s.side === 'cross-cluster'),
        10_000,
      ).map((f) => f.name),
    ).to.deep.equal([CROSS_FIGURE]);
    expect(summarizeSide([], 'in-cluster', 0)).to.equal(undefined);
  });

  it('lists at most `limit` failures and says how many more', () => {
    const many: Stream = {
      side: 'cross-cluster',
      cluster: 'cls2',
      via: 'ClusterSet IP',
      mode: 'new-connection',
      records: [1, 2, 3].map((i) => failed(i * 1000, 'refused')),
    };
    expect(failureLines(summarizeSide([many], 'cross-cluster', 0)!, 2)).to.deep.equal([
      '+1.0 s cls2 ClusterSet IP new-connection: refused',
      '+2.0 s cls2 ClusterSet IP new-connection: refused',
      '… and 1 more',
    ]);
  });
});
