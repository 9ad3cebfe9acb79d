import { expect } from 'chai';
import { clusterPlaces } from '../../../src/cli/read-cloudmap.ts';
import { formatStatusTable } from '../../../src/cli/status-format.ts';
import { buildStatusReport } from '../../../src/cli/status-model.ts';
import { tutorialClusters, tutorialCloudMap } from './fixtures.ts';

const A = '111111111111';
const B = '222222222222';

function instance(clusterId: string, createdByAccount?: string, clustersetId = 'clusterset1') {
  return {
    attributes: { CLUSTER_ID: clusterId, CLUSTERSET_ID: clustersetId },
    ...(createdByAccount ? { createdByAccount } : {}),
  };
}

describe('mcs-cloudmap status: accounts and Regions', () => {
  it('records, per cluster id of the ClusterSet, the Region read and every account that registered its instances (M5)', () => {
    expect(
      clusterPlaces(
        [instance('cls1', A), instance('cls1', A), instance('cls2', B), instance('cls9', B, 'other')],
        'clusterset1',
        'us-east-1',
      ),
    ).to.deep.equal({
      cls1: { regions: ['us-east-1'], accounts: [A] },
      cls2: { regions: ['us-east-1'], accounts: [B] },
    });
    expect(clusterPlaces([instance('cls1')], 'clusterset1', 'eu-west-1')).to.deep.equal({
      cls1: { regions: ['eu-west-1'], accounts: [] },
    });
  });

  it('shows each cluster id with its Regions and accounts, and the namespace owner', () => {
    const cloudMap = tutorialCloudMap();
    cloudMap.region = 'us-east-1, eu-west-1';
    cloudMap.namespaceOwner = A;
    cloudMap.services[0]!.placesByCluster = {
      cls1: { regions: ['us-east-1'], accounts: [A] },
      cls3: { regions: ['eu-west-1'], accounts: [A] },
    };
    const report = buildStatusReport(tutorialClusters(), cloudMap);
    const table = formatStatusTable(report);
    expect(table).to.include(`namespaces of account ${A}`);
    expect(table).to.match(/CLUSTER ID\s+REGIONS\s+ACCOUNTS/);
    expect(table).to.match(new RegExp(`cls1\\s+us-east-1\\s+${A}`));
    expect(table).to.match(new RegExp(`cls3\\s+eu-west-1\\s+${A}`));
    expect(report.problems).to.deep.equal([]);
  });

  it('C4: one cluster id registered by two accounts, or present in two Regions, is a problem', () => {
    const cloudMap = tutorialCloudMap();
    cloudMap.services[0]!.placesByCluster = { cls1: { regions: ['eu-west-1', 'us-east-1'], accounts: [A, B] } };
    const messages = buildStatusReport(tutorialClusters(), cloudMap).problems.map((p) => p.message);
    expect(messages).to.have.length(2);
    expect(messages[0]).to.include(`registered by accounts ${A}, ${B}`).and.include('C4');
    expect(messages[1]).to.include('Regions eu-west-1, us-east-1');
  });
});
