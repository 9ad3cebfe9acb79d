import { expect } from 'chai';
import fc from 'fast-check';
import { buildStatusReport, isHealthy, servicesOf } from '../../../src/cli/status-model.ts';
import { condition, tutorialClusters, tutorialCloudMap } from './fixtures.ts';

describe('mcs-cloudmap status: report model', () => {
  it('X4/I5: Valid and Ready are healthy when True, Conflict when False; other condition types never count as problems', () => {
    const table: [string, 'True' | 'False' | 'Unknown', boolean][] = [
      ['Valid', 'True', true],
      ['Valid', 'False', false],
      ['Ready', 'True', true],
      ['Ready', 'Unknown', false],
      ['Conflict', 'False', true],
      ['Conflict', 'True', false],
      ['SomethingNew', 'False', true],
    ];
    for (const [type, status, healthy] of table)
      expect(isHealthy(condition(type, status, 'R')), `${type}=${status}`).to.equal(healthy);
  });

  it('finds no problems in the tutorial ClusterSet as the worker leaves it', () => {
    expect(buildStatusReport(tutorialClusters(), tutorialCloudMap()).problems).to.deep.equal([]);
  });

  it('X2/E4: lists every unhealthy condition with its message, naming the context and service', () => {
    const clusters = tutorialClusters();
    clusters[0]!.exports[0]!.conditions = [
      condition('Valid', 'False', 'NoService', 'create the Service demo/nginx-hello'),
      condition('Conflict', 'True', 'PortConflict', 'port 80 differs'),
    ];
    const { problems } = buildStatusReport(clusters);
    expect(problems).to.deep.equal([
      {
        where: 'cls1',
        service: 'demo/nginx-hello',
        message: 'Valid=False (NoService): create the Service demo/nginx-hello',
      },
      { where: 'cls1', service: 'demo/nginx-hello', message: 'Conflict=True (PortConflict): port 80 differs' },
    ]);
  });

  it('C1: reports a cluster without its ClusterProperties', () => {
    const clusters = tutorialClusters();
    delete clusters[1]!.clustersetId;
    const { problems } = buildStatusReport(clusters);
    expect(problems.map((p) => p.where)).to.deep.equal(['cls2']);
    expect(problems[0]!.message).to.contain('clusterset.k8s.io');
  });

  it('C4: reports two contexts claiming the same cluster id, and contexts of different ClusterSets', () => {
    const clusters = tutorialClusters();
    clusters[1]!.clusterId = 'cls1';
    clusters[1]!.clustersetId = 'other';
    const messages = buildStatusReport(clusters).problems.map((p) => p.message);
    expect(messages.some((m) => m.includes('"cls1" is claimed by several clusters'))).to.equal(true);
    expect(messages.some((m) => m.includes('different ClusterSets (clusterset1, other)'))).to.equal(true);
  });

  it('an unreachable cluster is one problem carrying its explanation, and its objects are not cross-checked', () => {
    const clusters = tutorialClusters();
    clusters[1] = {
      context: 'cls2',
      server: 'https://127.0.0.1:6444',
      exports: [],
      imports: [],
      error: 'cannot reach',
    };
    expect(buildStatusReport(clusters, tutorialCloudMap()).problems).to.deep.equal([
      { where: 'cls2', service: '', message: 'cannot reach' },
    ]);
  });

  it('M4/E3: flags a Ready export missing from Cloud Map, and Cloud Map instances of a cluster that no longer exports', () => {
    const missing = tutorialCloudMap();
    missing.services[0]!.instancesByCluster = {};
    expect(buildStatusReport(tutorialClusters(), missing).problems.map((p) => p.message)).to.deep.equal([
      "export is Ready but Cloud Map has no instances with CLUSTER_ID=cls1; check the worker's logs in this cluster.",
    ]);
    const leftover = tutorialCloudMap();
    leftover.services[0]!.instancesByCluster.cls2 = { ready: 1, total: 1 };
    const problems = buildStatusReport(tutorialClusters(), leftover).problems;
    expect(problems.map((p) => [p.where, p.service])).to.deep.equal([['cls2', 'demo/nginx-hello']]);
    expect(problems[0]!.message).to.contain('1 instance(s) with CLUSTER_ID=cls2');
  });

  it('a Cloud Map that could not be read is one problem; the cluster side is still reported', () => {
    const report = buildStatusReport(tutorialClusters(), {
      region: 'us-west-2',
      services: [],
      error: 'no AWS credentials',
    });
    expect(report.problems).to.deep.equal([{ where: 'cloudmap', service: '', message: 'no AWS credentials' }]);
    expect(report.clusters).to.have.length(2);
  });

  it('servicesOf: every exported or imported namespace/name once, sorted (property)', () => {
    const name = fc.constantFrom('a', 'b', 'c');
    const view = fc.record({ namespace: name, name });
    fc.assert(
      fc.property(fc.array(view), fc.array(view), (exports, imports) => {
        const clusters = [
          {
            context: 'x',
            server: '',
            exports: exports.map((e) => ({ ...e, ports: [], endpoints: { ready: 0, total: 0 }, conditions: [] })),
            imports: imports.map((i) => ({
              ...i,
              type: 'Headless' as const,
              ips: [],
              ports: [],
              clusters: [],
              endpointsByCluster: {},
              conditions: [],
            })),
          },
        ];
        const keys = servicesOf(clusters).map((s) => `${s.namespace}/${s.name}`);
        const expected = [...new Set([...exports, ...imports].map((s) => `${s.namespace}/${s.name}`))].sort();
        expect(keys).to.deep.equal(expected);
      }),
    );
  });
});
