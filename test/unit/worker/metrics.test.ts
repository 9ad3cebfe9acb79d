import { expect } from 'chai';
import { createWorkerMetrics } from '../../../src/worker/metrics.ts';
import { startHealthServer } from '../../../src/runtime/health-server.ts';

async function get(url: string): Promise<{ status: number; body: string; type: string | null }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
}

describe('worker metrics and health endpoints', () => {
  it('exposes the reconcile, Cloud Map, lag, import and work-queue metrics named in the issue', async () => {
    const m = createWorkerMetrics({ processMetrics: false });
    m.observeReconcile('export', 'success', 0.02);
    m.cloudMap('us-east-1').onCall('RegisterInstance', 'success', 12);
    m.cloudMap('us-east-1').onCall('DiscoverInstances', 'throttled', 3);
    m.cloudMap('us-east-1').onRateChange('DiscoverInstances', 250);
    m.cloudMap('eu-west-1').onRateChange('DiscoverInstances', 100);
    m.exportToImportLag.observe(0.4);
    m.importedServices.set(3);
    m.importedEndpoints.set(9);
    m.clusterPropertiesMissing.set(1);
    m.heartbeats.inc();
    m.leaderStarts.inc();
    m.silentClusters.set(1);
    m.reapedInstances.inc(2);
    m.workQueue.added('export');
    m.workQueue.depth('export', 'normal', 2);
    m.workQueue.depth('export', 'low', 5);
    m.workQueue.retried('export');
    m.workQueue.processed('export', 0.01, 'error');
    m.informer.restarted('/api/v1/services', 'relist');
    const text = await m.registry.metrics();
    for (const line of [
      'mcs_cloudmap_reconcile_total{controller="export",result="success"} 1',
      'mcs_cloudmap_reconcile_duration_seconds_count{controller="export",result="success"} 1',
      'mcs_cloudmap_cloudmap_calls_total{api="RegisterInstance",outcome="success",region="us-east-1"} 1',
      'mcs_cloudmap_cloudmap_calls_total{api="DiscoverInstances",outcome="throttled",region="us-east-1"} 1',
      'mcs_cloudmap_cloudmap_throttles_total{api="DiscoverInstances",region="us-east-1"} 1',
      'mcs_cloudmap_cloudmap_rate_limit{api="DiscoverInstances",region="us-east-1"} 250',
      'mcs_cloudmap_cloudmap_rate_limit{api="DiscoverInstances",region="eu-west-1"} 100',
      'mcs_cloudmap_export_to_import_lag_seconds_bucket{le="0.5"} 1',
      'mcs_cloudmap_imported_services 3',
      'mcs_cloudmap_imported_endpoints 9',
      'mcs_cloudmap_cluster_properties_missing 1',
      'mcs_cloudmap_heartbeats_total 1',
      'mcs_cloudmap_leader_starts_total 1',
      'mcs_cloudmap_silent_clusters 1',
      'mcs_cloudmap_reaped_instances_total 2',
      'mcs_cloudmap_workqueue_adds_total{name="export"} 1',
      'mcs_cloudmap_workqueue_depth{name="export",lane="normal"} 2',
      'mcs_cloudmap_workqueue_depth{name="export",lane="low"} 5',
      'mcs_cloudmap_workqueue_retries_total{name="export"} 1',
      'mcs_cloudmap_workqueue_work_duration_seconds_count{name="export",result="error"} 1',
      'mcs_cloudmap_informer_restarts_total{resource="/api/v1/services",reason="relist"} 1',
    ])
      expect(text).to.include(line);
    expect(text).to.not.include('process_cpu');
  });

  it('includes the Node.js process metrics by default, and two registries do not collide', async () => {
    const a = createWorkerMetrics();
    const b = createWorkerMetrics();
    a.importedServices.set(1);
    expect(await a.registry.metrics()).to.include('mcs_cloudmap_process_resident_memory_bytes');
    expect(await b.registry.metrics()).to.include('mcs_cloudmap_imported_services 0');
  });

  it('serves /metrics, /healthz and /readyz (readiness from the callback, with its reason)', async () => {
    const m = createWorkerMetrics({ processMetrics: false });
    let ready: boolean | string = 'informers not synced';
    const server = await startHealthServer({ port: 0, host: '127.0.0.1', registry: m.registry, ready: () => ready });
    try {
      const metrics = await get(`${server.url}/metrics`);
      expect(metrics.status).to.equal(200);
      expect(metrics.type).to.match(/^text\/plain/);
      expect(metrics.body).to.include('mcs_cloudmap_reconcile_total');
      expect((await get(`${server.url}/healthz`)).status).to.equal(200);
      const notReady = await get(`${server.url}/readyz`);
      expect(notReady).to.deep.include({ status: 503, body: 'informers not synced\n' });
      ready = true;
      expect(await get(`${server.url}/readyz`)).to.deep.include({ status: 200, body: 'ok\n' });
      expect((await get(`${server.url}/nope`)).status).to.equal(404);
    } finally {
      await server.close();
    }
  });

  it('a readiness check that throws answers 503 with the error', async () => {
    const m = createWorkerMetrics({ processMetrics: false });
    const server = await startHealthServer({
      port: 0,
      host: '127.0.0.1',
      registry: m.registry,
      ready: () => {
        throw new Error('lease unknown');
      },
    });
    try {
      expect(await get(`${server.url}/readyz`)).to.deep.include({ status: 503, body: 'lease unknown\n' });
    } finally {
      await server.close();
    }
  });

  it('without a host, listens on every address of both families: probes of an IPv6-only or dual-stack pod reach it', async () => {
    const m = createWorkerMetrics({ processMetrics: false });
    const server = await startHealthServer({ port: 0, registry: m.registry, ready: () => true });
    try {
      for (const host of ['127.0.0.1', '[::1]'])
        expect((await fetch(`http://${host}:${server.port}/healthz`)).status, host).to.equal(200);
    } finally {
      await server.close();
    }
  });

  it('reports a port already in use clearly', async () => {
    const m = createWorkerMetrics({ processMetrics: false });
    const first = await startHealthServer({ port: 0, host: '127.0.0.1', registry: m.registry, ready: () => true });
    try {
      let error: unknown;
      await startHealthServer({ port: first.port, host: '127.0.0.1', registry: m.registry, ready: () => true }).catch(
        (e: unknown) => {
          error = e;
        },
      );
      expect(String(error)).to.match(/cannot listen on 127\.0\.0\.1:\d+/);
    } finally {
      await first.close();
    }
  });
});
