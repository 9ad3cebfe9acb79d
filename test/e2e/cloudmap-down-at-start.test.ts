// A worker started while Cloud Map does not answer at all (its endpoint refuses connections) cannot make its first read,
// so it reconciles nothing; a new ServiceExport still gets a condition saying why (Ready=False, Pending, "Waiting for
// Cloud Map: <error>") instead of no status. Once the worker reaches Cloud Map the export becomes Ready.
import { expect } from 'chai';
import { freePorts } from '../../hack/testbed/ports.ts';
import { condition, restoreCls1WorkerAfterEach, withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, service, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-cloudmap-down';

describe('e2e: a worker that cannot reach Cloud Map at start', function () {
  this.timeout(300_000);
  const e2e = withE2E({ namespaces: [NS] });
  /** cls1's worker points at a dead endpoint: put back after a failed test, so the suite's clean-up can unexport. */
  const deadEndpoint = restoreCls1WorkerAfterEach(e2e);

  it('writes "Waiting for Cloud Map" on a new export, then Ready once Cloud Map answers', async () => {
    const { cls1, clusters, stopWorker, startWorker } = e2e();
    await createNamespaces(clusters, NS);
    const [closed] = (await freePorts(1)) as [number];
    await stopWorker(cls1);
    deadEndpoint(true);
    await startWorker(cls1, {}, { endpoint: `http://127.0.0.1:${closed}` });

    const since = Date.now();
    cls1.apply([service(NS, 'web'), serviceExport(NS, 'web')]);
    let ready: ReturnType<typeof condition>;
    await eventually(
      'cls1: ServiceExport web says it waits for Cloud Map',
      async () => {
        ready = condition(await cls1.serviceExport(NS, 'web'), 'Ready');
        return ready?.message.startsWith('Waiting for Cloud Map: ') === true;
      },
      60_000,
    );
    console.log(
      `      condition after ${((Date.now() - since) / 1000).toFixed(1)} s: ${ready!.status}/${ready!.reason}: ${ready!.message}`,
    );
    expect(ready!).to.deep.include({ status: 'False', reason: 'Pending' });

    await stopWorker(cls1);
    await startWorker(cls1);
    deadEndpoint(false);
    await eventually(
      'cls1: ServiceExport web Ready once Cloud Map answers',
      async () => condition(await cls1.serviceExport(NS, 'web'), 'Ready')?.status === 'True',
      60_000,
    );
  });
});
