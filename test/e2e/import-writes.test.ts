// What importing a new service costs the importing cluster's apiserver, counted in its audit log: the ServiceImport
// created, its ClusterSetIP written once the derived Service has one, its status written once, the derived Service
// and one EndpointSlice, and nothing written again once the watch delivers those writes back (I1–I5, S1).
import { expect } from 'chai';
import { auditedWrites } from '../support/audit.ts';
import { condition, withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, importedBySource, runApp, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-import-writes';
const SERVICES = 4;
/** Long enough for every watch event of the imports' writes to come back and be reconciled. */
const QUIET_MS = 10_000;

describe('e2e: a new import is written once, not again when its own writes come back (I1–I5)', function () {
  this.timeout(240_000);
  const e2e = withE2E({ namespaces: [NS] });

  it('each ServiceImport: one create, one spec write with its ClusterSetIP, one status write whose Ready observes the generation', async () => {
    const { clusters, cls1, cls2 } = e2e();
    await createNamespaces(clusters, NS);
    const names = Array.from({ length: SERVICES }, (_, i) => `writes-${i}`);
    for (const name of names) await runApp(cls1, NS, name, 2);
    const since = Date.now();
    cls1.apply(names.map((name) => serviceExport(NS, name)));
    await eventually(
      `cls2 to import ${SERVICES} services with both endpoints`,
      async () => {
        for (const name of names) if (((await importedBySource(cls2, name, NS)).cls1 ?? []).length !== 2) return false;
        return true;
      },
      90_000,
    );
    await new Promise((r) => setTimeout(r, QUIET_MS));

    const byWorker = auditedWrites(cls2.cluster, since).filter(
      (w) => w.userAgent.startsWith('mcs-cloudmap-worker') && w.namespace === NS && w.code < 300,
    );
    for (const name of names) {
      const mine = byWorker.filter((w) => w.name === name);
      const status = mine.filter((w) => w.resource === 'serviceimports/status').length;
      const spec = mine.filter((w) => w.resource === 'serviceimports').length;
      const si = await cls2.serviceImport(NS, name);
      const ready = condition(si, 'Ready');
      expect(ready?.status, `${name}: Ready`).to.equal('True');
      expect(ready?.observedGeneration, `${name}: Ready observes the ServiceImport's generation`).to.equal(
        si?.metadata?.generation,
      );
      expect(spec, `${name}: ServiceImport writes (create, then spec.ips): ${JSON.stringify(mine)}`).to.equal(2);
      expect(status, `${name}: ServiceImport status writes: ${JSON.stringify(mine)}`).to.equal(1);
    }
    const slices = byWorker.filter((w) => w.resource === 'endpointslices');
    expect(slices.length, `EndpointSlice writes: ${JSON.stringify(slices)}`).to.be.at.most(2 * SERVICES);
  });
});
