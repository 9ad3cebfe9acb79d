import { expect } from 'chai';
import fc from 'fast-check';
import {
  countEndpoints,
  exportedType,
  exportView,
  formatPort,
  importView,
  type EndpointSliceJson,
} from '../../../src/cli/kube-views.ts';
import { countInstances } from '../../../src/cli/read-cloudmap.ts';
import { CONTROLLER_NAME } from '../../../src/core/names.ts';
import { HEALTHY_EXPORT_CONDITIONS } from './fixtures.ts';

function slice(labels: Record<string, string>, endpoints: [string, boolean | undefined][]): EndpointSliceJson {
  return {
    metadata: { name: `s-${Object.values(labels).join('-')}`, namespace: 'demo', labels },
    endpoints: endpoints.map(([address, ready]) => ({
      addresses: [address],
      conditions: ready === undefined ? {} : { ready },
    })),
  };
}

describe('mcs-cloudmap status: Kubernetes objects to views', () => {
  it('E5/E6: Service type as exported', () => {
    expect(exportedType({ metadata: { name: 'a' }, spec: { type: 'ClusterIP', clusterIP: '10.0.0.1' } })).to.equal(
      'ClusterSetIP',
    );
    expect(exportedType({ metadata: { name: 'a' }, spec: { type: 'LoadBalancer' } })).to.equal('ClusterSetIP');
    expect(exportedType({ metadata: { name: 'a' }, spec: { clusterIP: 'None' } })).to.equal('Headless');
    expect(exportedType({ metadata: { name: 'a' }, spec: { type: 'ExternalName' } })).to.equal(undefined);
  });

  it('ports as name:port/protocol, protocol defaulting to TCP', () => {
    expect(formatPort({ port: 80 })).to.equal('80/TCP');
    expect(formatPort({ name: 'dns', port: 53, protocol: 'UDP' })).to.equal('dns:53/UDP');
  });

  it('E8: counts distinct addresses; unset ready counts as ready, ready=false does not', () => {
    expect(
      countEndpoints([
        slice({}, [
          ['10.0.0.1', true],
          ['10.0.0.2', false],
          ['10.0.0.3', undefined],
        ]),
        slice({}, [['10.0.0.1', true]]),
      ]),
    ).to.deep.equal({ ready: 2, total: 3 });
  });

  it('countEndpoints: ready ≤ total = distinct addresses (property)', () => {
    const ep = fc.tuple(
      fc.constantFrom('10.0.0.1', '10.0.0.2', '10.0.0.3', 'fd00::1'),
      fc.option(fc.boolean(), { nil: undefined }),
    );
    fc.assert(
      fc.property(fc.array(fc.array(ep)), (slices) => {
        const c = countEndpoints(slices.map((s) => slice({}, s)));
        expect(c.total).to.equal(new Set(slices.flat().map(([a]) => a)).size);
        expect(c.ready).to.be.at.most(c.total);
      }),
    );
  });

  it("S2: an export counts only the Service's own slices, never the MCS slices of the derived Service", () => {
    const slices = [
      slice({ 'kubernetes.io/service-name': 'nginx-hello' }, [['10.0.0.1', true]]),
      slice(
        { 'kubernetes.io/service-name': 'nginx-hello', 'endpointslice.kubernetes.io/managed-by': CONTROLLER_NAME },
        [['10.1.0.1', true]],
      ),
      slice({ 'kubernetes.io/service-name': 'other' }, [['10.0.0.9', true]]),
    ];
    const view = exportView(
      { metadata: { name: 'nginx-hello', namespace: 'demo' }, status: { conditions: HEALTHY_EXPORT_CONDITIONS } },
      { metadata: { name: 'nginx-hello' }, spec: { clusterIP: '10.96.0.1', ports: [{ port: 80, protocol: 'TCP' }] } },
      slices,
    );
    expect(view).to.deep.equal({
      namespace: 'demo',
      name: 'nginx-hello',
      type: 'ClusterSetIP',
      ports: ['80/TCP'],
      endpoints: { ready: 1, total: 1 },
      conditions: HEALTHY_EXPORT_CONDITIONS,
    });
  });

  it('E4: an export without its Service has no type and no endpoints', () => {
    const view = exportView({ metadata: { name: 'gone', namespace: 'demo' } }, undefined, []);
    expect(view).to.deep.equal({
      namespace: 'demo',
      name: 'gone',
      ports: [],
      endpoints: { ready: 0, total: 0 },
      conditions: [],
    });
  });

  it('S1/I3: an import counts its MCS slices per source cluster', () => {
    const slices = [
      slice({ 'multicluster.kubernetes.io/service-name': 'web', 'multicluster.kubernetes.io/source-cluster': 'cls1' }, [
        ['10.0.0.1', true],
        ['10.0.0.2', false],
      ]),
      slice({ 'multicluster.kubernetes.io/service-name': 'web', 'multicluster.kubernetes.io/source-cluster': 'cls2' }, [
        ['10.8.0.1', true],
      ]),
      slice(
        { 'multicluster.kubernetes.io/service-name': 'other', 'multicluster.kubernetes.io/source-cluster': 'cls2' },
        [['10.8.0.9', true]],
      ),
    ];
    const view = importView(
      {
        metadata: { name: 'web', namespace: 'demo' },
        spec: { type: 'Headless', ports: [{ name: 'http', port: 8080 }] },
        status: { clusters: [{ cluster: 'cls2' }, { cluster: 'cls1' }] },
      },
      slices,
    );
    expect(view).to.deep.equal({
      namespace: 'demo',
      name: 'web',
      type: 'Headless',
      ips: [],
      ports: ['http:8080/TCP'],
      clusters: ['cls1', 'cls2'],
      endpointsByCluster: { cls1: { ready: 1, total: 2 }, cls2: { ready: 1, total: 1 } },
      conditions: [],
    });
    const present = importView(
      { metadata: { name: 'web', namespace: 'demo' }, status: { endpointSliceObjects: 'Present' } },
      slices,
    );
    expect(present.endpointSliceObjects, 'I8: status.endpointSliceObjects').to.equal('Present');
  });

  it('M5: Cloud Map instances are counted per CLUSTER_ID of the ClusterSet only; READY=false is not ready', () => {
    const instances: Record<string, string>[] = [
      { CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'set', READY: 'true' },
      { CLUSTER_ID: 'cls1', CLUSTERSET_ID: 'set', READY: 'false' },
      { CLUSTER_ID: 'cls2', CLUSTERSET_ID: 'set' },
      { CLUSTER_ID: 'cls9', CLUSTERSET_ID: 'another-set', READY: 'true' },
    ];
    expect(countInstances(instances, 'set')).to.deep.equal({
      cls1: { ready: 1, total: 2 },
      cls2: { ready: 1, total: 1 },
    });
    expect(Object.keys(countInstances(instances, undefined))).to.deep.equal(['cls1', 'cls2', 'cls9']);
  });
});
