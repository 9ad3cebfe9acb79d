// A worker killed with SIGKILL while 500 of its registrations are still pending in Cloud Map: the restarted worker
// waits for them before its first read, so it registers none of them again and loses none; the other cluster imports
// all 500 endpoints (M6, E8, I3). The emulator's operations are slowed down to 20 s for this, so that every
// registration is submitted and still pending when the worker dies.
import { DiscoverInstancesCommand, ListOperationsCommand } from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { condition, eventually, withE2E, type E2ECluster } from './harness.ts';
import { createNamespaces, serviceExport } from './workloads.ts';

const NS = 'e2e-crash';
const APP = 'wide';
const ENDPOINTS = 500;
const OPERATION_DELAY_MS = 20_000;

/** A Service without selector and its EndpointSlices of ENDPOINTS ready addresses (100 per slice). */
function wideService(): object[] {
  const slices = Array.from({ length: ENDPOINTS / 100 }, (_, s) => ({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: { name: `${APP}-${s}`, namespace: NS, labels: { 'kubernetes.io/service-name': APP } },
    addressType: 'IPv4',
    ports: [{ name: '', port: 8080, protocol: 'TCP' }],
    endpoints: Array.from({ length: 100 }, (_, e) => ({ addresses: [`10.250.${s}.${e + 1}`], conditions: { ready: true } })),
  }));
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: APP, namespace: NS }, spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] } },
    ...slices,
  ];
}

async function importedAddresses(cluster: E2ECluster): Promise<number> {
  const slices = await cluster.endpointSlices(NS, `multicluster.kubernetes.io/service-name=${APP}`);
  return slices.reduce((n, s) => n + (s.endpoints ?? []).length, 0);
}

describe('e2e: a worker killed while its registrations are pending (M6)', function () {
  this.timeout(300_000);
  const e2e = withE2E({ namespaces: [NS] });

  it('the restarted worker repeats none of the 500 pending registrations and loses none', async () => {
    const { cs, cls1, cls2, clusters, cloudMap, stopWorker, killWorker, startWorker } = e2e();
    await createNamespaces(clusters, NS);
    await cs.cloudMapControl.configure({ operationDelayMs: OPERATION_DELAY_MS, throttling: false });
    try {
      // This worker may submit its 500 registrations at once, so that all of them are pending when it dies.
      await stopWorker(cls1);
      await startWorker(cls1, { MCS_RATE_LIMITS: 'RegisterInstance=2000' });
      cls1.apply([...wideService(), serviceExport(NS, APP)]);
      await eventually(`cls1's worker to submit ${ENDPOINTS} registrations`, async () => ((await cls1.cloudMapCalls()).RegisterInstance ?? 0) >= ENDPOINTS, 60_000);
      const pending = await cloudMap.send(new ListOperationsCommand({ Filters: [{ Name: 'STATUS', Condition: 'IN', Values: ['SUBMITTED', 'PENDING'] }], MaxResults: 100 }));
      expect(pending.Operations ?? [], 'registrations still pending when the worker is killed').to.not.be.empty;
      await killWorker(cls1);
    } finally {
      // Back to the realistic mode (1 s operations) once they are pending: the restart is what is tested.
      await cs.cloudMapControl.configure({ mode: 'realistic' });
    }

    await startWorker(cls1);
    await eventually('cls1\'s ServiceExport to be Ready again', async () => condition(await cls1.serviceExport(NS, APP), 'Ready')?.status === 'True', 120_000);
    await eventually(`cls2 to import ${ENDPOINTS} endpoints`, async () => (await importedAddresses(cls2)) === ENDPOINTS, 120_000);

    const found = await cloudMap.send(new DiscoverInstancesCommand({
      NamespaceName: NS, ServiceName: APP, HealthStatus: 'ALL', MaxResults: 1000, QueryParameters: { CLUSTER_ID: cls1.id },
    }));
    const ids = (found.Instances ?? []).map((i) => i.InstanceId);
    expect(ids).to.have.length(ENDPOINTS);
    expect(new Set(ids).size).to.equal(ENDPOINTS);
    const calls = await cls1.cloudMapCalls();
    console.log(`      restarted worker's Cloud Map calls: ${JSON.stringify(calls)}`);
    // Its only writes are change-marker bumps (telling the peers about what its predecessor did), its heartbeats and,
    // since the predecessor died before its first bump, the marker's namespace and service.
    const heartbeats = await cls1.metric('mcs_cloudmap_heartbeats_total');
    expect((calls.RegisterInstance ?? 0) - heartbeats).to.be.within(1, 3);
    expect(calls.DeregisterInstance ?? 0).to.equal(0);
    expect(calls.CreateService ?? 0).to.be.at.most(1);
    expect(condition(await cls1.serviceExport(NS, APP), 'Ready')?.reason).to.equal('Exported');
  });
});
