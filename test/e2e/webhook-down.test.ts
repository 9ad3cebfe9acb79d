// The webhook server down in both clusters (every replica), with the shipped failurePolicy Fail on ServiceExports,
// ServiceImports and MCS EndpointSlices: what a user sees (the apiserver's refusal naming the webhook), what waits
// (an unexport's finalizer, the other cluster's import clean-up), and that once the server is back nothing is left
// stuck: the waiting deletions complete and a retried export is imported (E3, I3; docs/reliability.md). With
// BENCH_RESULTS=bench/results its figures replace bench/results/faults-webhook-down.json.
import { expect } from 'chai';
import { resultOfThisRun, writeTestResult } from '../../hack/results/result-file.ts';
import { condition, withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-webhook-down';

/** A Service without selector and its EndpointSlice of one ready address. */
function selectorless(name: string, address: string): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: NS },
      spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-local`, namespace: NS, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: '', port: 80, protocol: 'TCP' }],
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
    },
  ];
}

describe('e2e: the webhook server down in every cluster, failurePolicy Fail (E3, I3)', function () {
  this.timeout(300_000);
  const e2e = withE2E({ namespaces: [NS] });

  it('refuses new exports with the webhook named, holds deletions, and leaves nothing stuck once it is back', async () => {
    const { cls1, cls2, clusters, stopWebhook, startWebhook } = e2e();
    await createNamespaces(clusters, NS);
    cls1.apply([...selectorless('before', '10.253.0.1'), serviceExport(NS, 'before')]);
    await eventually(
      'cls2 imports "before"',
      async () => condition(await cls2.serviceImport(NS, 'before'), 'Ready')?.status === 'True',
      60_000,
    );

    for (const c of clusters) await stopWebhook(c);
    let refusal = '';
    try {
      cls1.apply(selectorless('during', '10.253.0.2'));
      try {
        cls1.apply([serviceExport(NS, 'during')]);
      } catch (err) {
        refusal = (err as Error).message;
      }
      console.log(
        `      what kubectl apply of a ServiceExport says while the webhook is down:\n        ${refusal.split('\n').join('\n        ')}`,
      );
      expect(refusal, 'the ServiceExport create is refused naming the webhook').to.match(
        /failed calling webhook "serviceexports\.(mutate|validate)\.multicluster\.x-k8s\.io"/,
      );
      expect(await cls1.serviceExport(NS, 'during')).to.equal(undefined);

      // Deleting an export is accepted; the worker withdraws it from Cloud Map, but its finalizer's removal is an
      // update the webhook must admit, and the other cluster's import removal a delete it must admit.
      cls1.kubectl(['delete', 'serviceexport', 'before', '-n', NS, '--wait=false']);
      await new Promise((r) => setTimeout(r, 15_000));
      const held = await cls1.serviceExport(NS, 'before');
      console.log(
        `      15 s after the delete: cls1's export ${held ? `still there, finalizers ${JSON.stringify(held.metadata.finalizers)}` : 'gone'}; cls2's import ${(await cls2.serviceImport(NS, 'before')) ? 'still there' : 'gone'}`,
      );
    } finally {
      for (const c of clusters) await startWebhook(c);
    }
    const back = Date.now();
    await eventually(
      "cls1's deleted export to be gone (finalizer released)",
      async () => (await cls1.serviceExport(NS, 'before')) === undefined,
      90_000,
    );
    await eventually(
      'cls2 to drop the import of "before"',
      async () => (await cls2.serviceImport(NS, 'before')) === undefined,
      90_000,
    );
    const completedMs = Date.now() - back;
    console.log(`      deletions completed ${(completedMs / 1000).toFixed(1)} s after the webhook was back`);
    cls1.apply([serviceExport(NS, 'during')]);
    await eventually(
      'cls2 imports "during", exported once the webhook is back',
      async () => condition(await cls2.serviceImport(NS, 'during'), 'Ready')?.status === 'True',
      60_000,
    );
    const stuck = JSON.parse(cls1.kubectl(['get', 'serviceexports', '-n', NS, '-o', 'json'])) as {
      items: Array<{ metadata: { name: string; deletionTimestamp?: string } }>;
    };
    const terminating = stuck.items.filter((e) => e.metadata.deletionTimestamp).map((e) => e.metadata.name);
    expect(terminating, 'exports stuck in deletion').to.deep.equal([]);
    writeTestResult(
      resultOfThisRun({
        benchmark: 'faults',
        scenario: 'webhook-down',
        size: 'every webhook replica of both clusters stopped while a user exports and unexports',
        command: 'BENCH_RESULTS=bench/results npx mocha --timeout 120000 test/e2e/webhook-down.test.ts',
        figures: [
          {
            name: 'waiting deletions completed after the server is back',
            value: Math.round(completedMs / 100) / 10,
            unit: 's',
          },
          { name: 'exports left Terminating', value: terminating.length, unit: '', atMost: 0 },
        ],
      }),
    );
  });
});
