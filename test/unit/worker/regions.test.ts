import { expect } from 'chai';
import fc from 'fast-check';
import { ConfigError } from '../../../src/config/options.ts';
import { parseWorkerOptions } from '../../../src/worker/options.ts';
import {
  clusterSetRegions,
  CONDITION_REGIONS_REACHABLE,
  regionsCondition,
  type RegionState,
} from '../../../src/worker/regions.ts';

const region = (r: string, over: Partial<RegionState> = {}): RegionState => ({
  region: r,
  read: true,
  reachable: true,
  clusters: [],
  ...over,
});

describe('ClusterSet Regions', () => {
  it('--regions defaults to the own Region alone, so a single-Region worker reads one Cloud Map', () => {
    expect(clusterSetRegions('us-east-1', parseWorkerOptions([], {}).regions)).to.deep.equal(['us-east-1']);
  });

  it('lists the own Region first, each Region once, adding the own Region when the list leaves it out', () => {
    expect(clusterSetRegions('eu-west-1', 'us-east-1, eu-west-1,us-east-1')).to.deep.equal(['eu-west-1', 'us-east-1']);
    expect(clusterSetRegions('eu-west-1', 'us-east-1')).to.deep.equal(['eu-west-1', 'us-east-1']);
    expect(parseWorkerOptions(['--regions=us-east-1,ap-southeast-2'], {}).regions).to.equal('us-east-1,ap-southeast-2');
    expect(parseWorkerOptions([], { MCS_REGIONS: 'us-gov-west-1' }).regions).to.equal('us-gov-west-1');
  });

  it('refuses what is not a Region name at parse time (exit 2), naming it', () => {
    expect(() => parseWorkerOptions(['--regions=us-east-1,EU_WEST'], {})).to.throw(
      ConfigError,
      /--regions: "EU_WEST" is not an AWS Region name/,
    );
    expect(() => parseWorkerOptions(['--regions=https://cloudmap.example'], {})).to.throw(ConfigError);
  });
});

describe('RegionsReachable condition', () => {
  it('is True while every Region was read and answers', () => {
    const c = regionsCondition([
      region('us-east-1', { clusters: ['cls1'] }),
      region('eu-west-1', { clusters: ['cls3'] }),
    ]);
    expect(c).to.include({ type: CONDITION_REGIONS_REACHABLE, status: 'True', reason: 'Reachable' });
    expect(c.message).to.include('us-east-1, eu-west-1');
  });

  it('a Region that stopped answering degrades only imports with clusters from there, naming Region, clusters and time', () => {
    const down = region('eu-west-1', { reachable: false, since: '2026-11-23T14:00:00Z', clusters: ['cls3', 'cls4'] });
    const c = regionsCondition([region('us-east-1', { clusters: ['cls1'] }), down]);
    expect(c).to.include({ status: 'False', reason: 'RegionUnreachable' });
    expect(c.message)
      .to.include('Region eu-west-1 has not answered since 2026-11-23T14:00:00Z')
      .and.include('clusters cls3, cls4')
      .and.include('kept');
    expect(c.message).to.not.include('us-east-1');
    // The same outage, for a service no cluster exports from that Region: not degraded.
    expect(regionsCondition([region('us-east-1', { clusters: ['cls1'] }), { ...down, clusters: [] }]).status).to.equal(
      'True',
    );
  });

  it('a Region never read degrades every import (which of its clusters export the service is unknown)', () => {
    const c = regionsCondition([region('us-east-1', { clusters: ['cls1'] }), region('eu-west-1', { read: false })]);
    expect(c).to.include({ status: 'False', reason: 'RegionUnreachable' });
    expect(c.message).to.include('Region eu-west-1 has not been read');
  });

  it('property: False exactly when some Region is unread, or unreachable with clusters; the message names exactly those Regions', () => {
    const names = ['us-east-1', 'us-west-2', 'eu-west-1', 'ap-south-1'];
    const states = fc.uniqueArray(
      fc.record({
        region: fc.constantFrom(...names),
        read: fc.boolean(),
        reachable: fc.boolean(),
        clusters: fc.subarray(['cls1', 'cls2', 'cls3']),
      }),
      { selector: (s) => s.region, minLength: 1 },
    );
    fc.assert(
      fc.property(states, (regions) => {
        const c = regionsCondition(regions);
        const degraded = regions.filter((r) => !r.read || (!r.reachable && r.clusters.length > 0));
        expect(c.status).to.equal(degraded.length > 0 ? 'False' : 'True');
        if (degraded.length === 0) return;
        for (const r of regions) expect(c.message.includes(`Region ${r.region} `)).to.equal(degraded.includes(r));
      }),
    );
  });
});
