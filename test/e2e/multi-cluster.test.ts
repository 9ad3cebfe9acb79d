// Services exported from both clusters (union of endpoints, conflicts resolved oldest-first), headless exports with
// hostnames, and a namespace that exists in one cluster only (E2, X1–X3, I1).
import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { LABEL_SERVICE_NAME } from '../../src/core/names.ts';
import { createNamespace } from '../support/kube.ts';
import { condition, withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import {
  createNamespaces,
  deployment,
  exportReady,
  importedBySource,
  runApp,
  runningPodIps,
  service,
  serviceExport,
  type PortSpec,
} from '../support/workloads.ts';

const NS = 'e2e-multi';
const LATE_NS = 'e2e-late-namespace';

async function readyImport(cluster: E2ECluster, name: string, namespace = NS) {
  await eventually(
    `${cluster.id}: Ready ServiceImport ${namespace}/${name}`,
    async () => condition(await cluster.serviceImport(namespace, name), 'Ready')?.status === 'True',
  );
  return (await cluster.serviceImport(namespace, name))!;
}

/** Deploys app `name` with `replicas` pods and a Service with `ports` in `cluster`; returns the pod IPs. */
function run(
  cluster: E2ECluster,
  name: string,
  replicas: number,
  opts: { ports?: PortSpec[]; headless?: boolean } = {},
): Promise<string[]> {
  return runApp(cluster, NS, name, replicas, opts);
}

function exportFrom(cluster: E2ECluster, name: string): Promise<void> {
  return exportReady(cluster, NS, name);
}

describe('e2e: services exported from both clusters', function () {
  this.timeout(180_000);
  const e2e = withE2E({ namespaces: [NS, LATE_NS] });

  before(async function () {
    this.timeout(120_000);
    await createNamespaces(e2e().clusters, NS);
  });

  it('E2, I3, S1: the same service exported from both clusters imports the union of their endpoints and lists both clusters', async () => {
    const { cls1, cls2, clusters } = e2e();
    const ips = { cls1: await run(cls1, 'shared', 2), cls2: await run(cls2, 'shared', 2) };
    await exportFrom(cls1, 'shared');
    await exportFrom(cls2, 'shared');
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: both clusters' endpoints`,
        async () => JSON.stringify(await importedBySource(cluster, 'shared', NS)) === JSON.stringify(ips),
      );
      await eventually(
        `${cluster.id}: status.clusters lists cls1 and cls2`,
        async () =>
          JSON.stringify((await cluster.serviceImport(NS, 'shared'))?.status?.clusters) ===
          JSON.stringify([{ cluster: 'cls1' }, { cluster: 'cls2' }]),
      );
      expect(condition(await cluster.serviceExport(NS, 'shared'), 'Conflict')).to.include({
        status: 'False',
        reason: 'NoConflicts',
      });
    }
  });

  it("X1, X2: a port conflict keeps the oldest export's port and puts Conflict=True (PortConflict) on both ServiceExports", async () => {
    const { cls1, cls2, clusters } = e2e();
    await run(cls1, 'ports', 1, { ports: [{ name: 'http', port: 80 }] });
    await run(cls2, 'ports', 1, { ports: [{ name: 'http', port: 8080 }] });
    await exportFrom(cls1, 'ports');
    await readyImport(cls2, 'ports');
    await exportFrom(cls2, 'ports');
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: Conflict=True PortConflict`,
        async () => condition(await cluster.serviceExport(NS, 'ports'), 'Conflict')?.reason === 'PortConflict',
      );
      expect(condition(await cluster.serviceExport(NS, 'ports'), 'Conflict')!.status).to.equal('True');
      expect(condition(await cluster.serviceExport(NS, 'ports'), 'Conflict')!.message).to.match(/cls1/);
      const si = await readyImport(cluster, 'ports');
      expect(si.spec.ports).to.deep.equal([{ name: 'http', port: 80, protocol: 'TCP' }]);
    }
  });

  it('X2 (mcs-api v0.5.0 conformance case): TCP/42 + UDP/42 in cls1 and TCP/42 + SCTP/142 in cls2 import the union and raise PortConflict on both', async () => {
    const { cls1, cls2, clusters } = e2e();
    await run(cls1, 'union', 1, {
      ports: [
        { name: 'tcp', port: 42 },
        { name: 'udp', port: 42, protocol: 'UDP' },
      ],
    });
    await run(cls2, 'union', 1, {
      ports: [
        { name: 'tcp', port: 42 },
        { name: 'stcp', port: 142, protocol: 'SCTP' },
      ],
    });
    await exportFrom(cls1, 'union');
    await readyImport(cls2, 'union');
    await exportFrom(cls2, 'union');
    const started = Date.now();
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: Conflict=True PortConflict`,
        async () => condition(await cluster.serviceExport(NS, 'union'), 'Conflict')?.reason === 'PortConflict',
      );
      const conflict = condition(await cluster.serviceExport(NS, 'union'), 'Conflict')!;
      expect(conflict.status).to.equal('True');
      expect(conflict.message).to.contain(
        'ports of cls2 differ from the oldest export (cls1): adds "stcp" SCTP/142, lacks "udp" UDP/42',
      );
    }
    console.log(`      PortConflict on both ServiceExports ${Date.now() - started} ms after cls2's export was Ready`);
    const union = ['stcp SCTP/142', 'tcp TCP/42', 'udp UDP/42'];
    for (const cluster of clusters) {
      await eventually(`${cluster.id}: the ServiceImport exposes the union of the three ports`, async () => {
        const ports = ((await cluster.serviceImport(NS, 'union'))?.spec.ports ?? [])
          .map((p) => `${p.name} ${p.protocol}/${p.port}`)
          .sort();
        return JSON.stringify(ports) === JSON.stringify(union);
      });
    }
  });

  it('X1, X3: a type conflict (ClusterSetIP in cls1, older; Headless in cls2) imports ClusterSetIP and puts Conflict=True (TypeConflict) on both', async () => {
    const { cls1, cls2, clusters } = e2e();
    await run(cls1, 'kinds', 1);
    await run(cls2, 'kinds', 1, { headless: true });
    await exportFrom(cls1, 'kinds');
    await readyImport(cls2, 'kinds');
    await exportFrom(cls2, 'kinds');
    for (const cluster of clusters) {
      await eventually(
        `${cluster.id}: Conflict=True TypeConflict`,
        async () => condition(await cluster.serviceExport(NS, 'kinds'), 'Conflict')?.reason === 'TypeConflict',
      );
      const si = await readyImport(cluster, 'kinds');
      expect(si.spec.type).to.equal('ClusterSetIP');
      expect(si.spec.ips).to.have.length(1);
    }
  });

  it('E6, D1: a headless export is imported as Headless without IPs, its endpoints keeping their hostnames', async () => {
    const { cls1, cls2 } = e2e();
    cls1.apply([
      service(NS, 'db', { headless: true }),
      ...['db-0', 'db-1'].map((pod) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod, namespace: NS, labels: { app: 'db' } },
        spec: {
          hostname: pod,
          subdomain: 'db',
          containers: [{ name: 'db', image: 'postgres', ports: [{ containerPort: 80 }] }],
        },
      })),
    ]);
    await eventually('2 running db pods in cls1', async () => (await runningPodIps(cls1, NS, 'db')).length === 2);
    await exportFrom(cls1, 'db');
    const si = await readyImport(cls2, 'db');
    expect(si.spec.type).to.equal('Headless');
    expect(si.spec.ips ?? []).to.deep.equal([]);
    await eventually('cls2 imports db-0 and db-1 by hostname', async () => {
      const hostnames = (await cls2.endpointSlices(NS, `${LABEL_SERVICE_NAME}=db`))
        .flatMap((s) => s.endpoints ?? [])
        .map((e) => e.hostname)
        .sort();
      return JSON.stringify(hostnames) === JSON.stringify(['db-0', 'db-1']);
    });
    const derived = (
      await cls2.kubeConfig
        .makeApiClient(CoreV1Api)
        .listNamespacedService({ namespace: NS, labelSelector: `${LABEL_SERVICE_NAME}=db` })
    ).items;
    expect(derived.map((s) => s.spec!.clusterIP)).to.deep.equal(['None']);
  });

  it('I1: a namespace that exists only in cls1 gets no import in cls2 until it is created there', async () => {
    const { cls1, cls2 } = e2e();
    await createNamespace(cls1.kubeConfig, LATE_NS);
    cls1.apply([deployment(LATE_NS, 'late', 1), service(LATE_NS, 'late')]);
    cls1.apply([serviceExport(LATE_NS, 'late')]);
    await readyImport(cls1, 'late', LATE_NS);
    const namespaces = await cls2.kubeConfig.makeApiClient(CoreV1Api).listNamespace();
    expect(
      namespaces.items.map((n) => n.metadata!.name),
      'namespaces of cls2 (never created by the worker)',
    ).to.not.include(LATE_NS);
    await createNamespace(cls2.kubeConfig, LATE_NS);
    const si = await readyImport(cls2, 'late', LATE_NS);
    expect(si.status?.clusters).to.deep.equal([{ cluster: 'cls1' }]);
  });
});
