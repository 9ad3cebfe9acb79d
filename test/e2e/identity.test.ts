// A worker started before its cluster's ClusterProperties exist: one clear Event and log line and a metric, nothing
// imported, then it starts on its own once they are created, without a restart (C1); and a
// cluster id changed while exporting, which freezes exports with a clear condition until it is restored (C3).
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY } from '../../src/core/names.ts';
import { applyClusterProperties, condition, withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, deployment, service, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-identity';
const NAME = 'hello';

describe('e2e: cluster identity — ClusterProperties created after the worker started, changed under an export (C1, C3)', function () {
  this.timeout(180_000);
  const e2e = withE2E({ namespaces: [NS] });

  it('C1: without ClusterProperties the worker reports it once (Event, log line, metric) and imports nothing', async () => {
    const { cls1, cls2, stopWorker, startWorker } = e2e();
    await createNamespaces([cls1, cls2], NS);
    await stopWorker(cls2);
    cls2.kubectl(['delete', 'clusterproperty', CLUSTER_ID_PROPERTY, CLUSTERSET_ID_PROPERTY]);
    await startWorker(cls2);
    await eventually(
      'mcs_cloudmap_cluster_properties_missing = 1',
      async () => (await cls2.metric('mcs_cloudmap_cluster_properties_missing')) === 1,
    );

    cls1.apply([deployment(NS, NAME, 1), service(NS, NAME), serviceExport(NS, NAME)]);
    await eventually(
      'cls1 imports its own export',
      async () => condition(await cls1.serviceImport(NS, NAME), 'Ready')?.status === 'True',
    );
    expect(await cls2.serviceImport(NS, NAME), 'a ServiceImport in cls2 while it has no identity').to.equal(undefined);

    const lines = readFileSync(cls2.worker.proc.logPath, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"event":"cluster-identity-missing"'));
    expect(lines, 'log lines about the missing ClusterProperties').to.have.length(1);
    expect(lines[0]).to.include(CLUSTER_ID_PROPERTY).and.include(CLUSTERSET_ID_PROPERTY);
    const events = JSON.parse(cls2.kubectl(['get', 'events.events.k8s.io', '-n', 'default', '-o', 'json'])) as {
      items: Array<{ reason?: string; note?: string; regarding?: { kind?: string; name?: string } }>;
    };
    const missing = events.items.filter(
      (e) => e.reason === 'ClusterPropertyMissing' && e.regarding?.kind === 'ClusterProperty',
    );
    expect(missing.length, 'Events about the missing ClusterProperties').to.be.greaterThan(0);
    expect(missing.at(-1)!.note).to.include(CLUSTER_ID_PROPERTY);
  });

  it('C1: once the ClusterProperties exist, the same worker process imports the service', async () => {
    const { cs, cls2 } = e2e();
    const pid = cls2.worker.proc.pid;
    applyClusterProperties(cls2, cs.clustersetId);
    await eventually(
      'cls2 imports the service',
      async () => condition(await cls2.serviceImport(NS, NAME), 'Ready')?.status === 'True',
    );
    expect(await cls2.metric('mcs_cloudmap_cluster_properties_missing')).to.equal(0);
    expect(cls2.worker.proc.pid).to.equal(pid);
    expect(cls2.worker.proc.status, 'the worker process exited').to.equal(undefined);
  });

  it('C3: a cluster id changed under an export freezes it with a clear condition and keeps every import; restoring it resumes', async () => {
    const { cls1, cls2 } = e2e();
    // The webhook refuses this change while exports exist; the worker must cope when it happens anyway.
    cls1.kubectl(['delete', '--ignore-not-found', 'validatingwebhookconfiguration/mcs-cloudmap-validating']);
    const setClusterId = (value: string) =>
      cls1.kubectl([
        'patch',
        'clusterproperty',
        CLUSTER_ID_PROPERTY,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { value } }),
      ]);
    setClusterId('cls1-renamed');
    await eventually(
      'Ready=False (Failed) on ServiceExport hello in cls1',
      async () => condition(await cls1.serviceExport(NS, NAME), 'Ready')?.reason === 'Failed',
    );
    const ready = condition(await cls1.serviceExport(NS, NAME), 'Ready')!;
    expect(ready.status).to.equal('False');
    expect(ready.message).to.include('C3').and.include('"cls1"').and.include('cls1-renamed');
    expect(
      condition(await cls2.serviceImport(NS, NAME), 'Ready')?.status,
      "cls2 keeps importing cls1's export",
    ).to.equal('True');
    expect((await cls2.serviceImport(NS, NAME))?.status?.clusters).to.deep.equal([{ cluster: 'cls1' }]);

    setClusterId('cls1');
    await eventually(
      'Ready=True (Exported) again',
      async () => condition(await cls1.serviceExport(NS, NAME), 'Ready')?.reason === 'Exported',
    );
  });
});
