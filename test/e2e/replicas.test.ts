// Two replicas of cls1's worker: only the holder of the Lease reconciles (the other keeps warm caches and makes no
// Cloud Map calls); when the leader shuts down it releases the Lease and the standby takes over (issue 4 item 6).
import { expect } from 'chai';
import type { HostProcess } from '../../hack/local/processes.ts';
import { condition, eventually, withE2E } from './harness.ts';
import { createNamespaces, deployment, service, serviceExport } from './workloads.ts';

const NS = 'e2e-replicas';

async function metric(worker: HostProcess, name: string): Promise<number> {
  const m = new RegExp(`^${name} (\\d+)`, 'm').exec(await (await fetch(worker.metricsUrl)).text());
  return m ? Number(m[1]) : 0;
}

async function cloudMapCallCount(worker: HostProcess): Promise<number> {
  const text = await (await fetch(worker.metricsUrl)).text();
  return [...text.matchAll(/^mcs_cloudmap_cloudmap_calls_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

describe('e2e: two worker replicas in one cluster (issue 4 item 6; leader election)', function () {
  this.timeout(180_000);
  const e2e = withE2E({ namespaces: [NS] });

  it('the standby reconciles nothing until the leader shuts down, then takes over at once', async () => {
    const { cls1, cls2, clusters, startReplica, stopWorker } = e2e();
    await createNamespaces(clusters, NS);
    const standby = await startReplica(cls1, 'cls1-standby');
    await eventually('the standby to be ready (caches synced)', async () => (await fetch(`${standby.healthUrl}/readyz`)).ok);
    expect(await metric(cls1.worker, 'mcs_cloudmap_leader')).to.equal(1);
    expect(await metric(standby, 'mcs_cloudmap_leader')).to.equal(0);

    cls1.apply([deployment(NS, 'before', 1), service(NS, 'before'), serviceExport(NS, 'before')]);
    await eventually('cls2 imports "before"', async () => condition(await cls2.serviceImport(NS, 'before'), 'Ready')?.status === 'True');
    expect(await cloudMapCallCount(standby), 'Cloud Map calls of the standby').to.equal(0);

    await stopWorker(cls1);
    await eventually('the standby to lead', async () => (await metric(standby, 'mcs_cloudmap_leader')) === 1, 15_000);
    cls1.apply([deployment(NS, 'after', 1), service(NS, 'after'), serviceExport(NS, 'after')]);
    await eventually('cls2 imports "after", exported by the new leader', async () => condition(await cls2.serviceImport(NS, 'after'), 'Ready')?.status === 'True');
    // The export's status write and cls2's import race each other; both must happen.
    await eventually('cls1\'s export of "after" to be Ready (Exported) by the new leader', async () => condition(await cls1.serviceExport(NS, 'after'), 'Ready')?.reason === 'Exported');
    // The namespace is cleaned up by the harness through cls1's worker: the standby is now that worker.
    cls1.worker = standby;
  });
});
