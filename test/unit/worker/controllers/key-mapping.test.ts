// Which change queues which key in the export and import controllers: a Service or EndpointSlice the import side
// derived goes to the import only, one of an exported Service to the export only; a Cloud Map change to every import,
// and to an export while exported or while this cluster still has instances of it.
import { expect } from 'chai';
import { pino } from 'pino';
import {
  CONTROLLER_NAME,
  LABEL_CREATED_BY,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
} from '../../../../src/core/names.ts';
import type { KubeObject } from '../../../../src/kube/resources.ts';
import { Channel } from '../../../../src/runtime/event-sources.ts';
import type { InformerHandlers } from '../../../../src/runtime/informer.ts';
import { exportController } from '../../../../src/worker/controllers/export/controller.ts';
import { importController } from '../../../../src/worker/controllers/import/controller.ts';
import type { WorkerInformers } from '../../../../src/worker/informers.ts';
import type { ServiceRef } from '../../../../src/worker/objects.ts';

const silent = pino({ level: 'silent' });
/**
 * Lets pending microtasks and I/O callbacks run: the queue hands work out asynchronously, and after 20 ms of work in
 * one turn of the event loop it waits for the next (so a loaded machine needs a few turns).
 */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
}

/** An informer holding `objects`, whose handlers the test calls by hand. */
function fakeInformer(objects: KubeObject[] = []) {
  const handlers = new Set<InformerHandlers<KubeObject>>();
  return {
    addHandlers(h: InformerHandlers<KubeObject>) {
      handlers.add(h);
      return () => handlers.delete(h);
    },
    get: (namespace: string | undefined, name: string) =>
      objects.find((o) => (o.metadata.namespace ?? '') === (namespace ?? '') && o.metadata.name === name),
    list: () => objects,
    add: (o: KubeObject) => handlers.forEach((h) => h.onAdd?.(o)),
  };
}

function object(kind: string, namespace: string, name: string, labels: Record<string, string> = {}): KubeObject {
  return { apiVersion: 'v1', kind, metadata: { namespace, name, labels } };
}

function harness() {
  const informers = {
    serviceExports: fakeInformer([object('ServiceExport', 'demo', 'web')]),
    serviceImports: fakeInformer(),
    services: fakeInformer(),
    endpointSlices: fakeInformer(),
    namespaces: fakeInformer(),
  };
  const cloudMapChanges = new Channel<ServiceRef>();
  const silenceChanges = new Channel<ReadonlySet<string>>();
  const exported: string[] = [];
  const imported: string[] = [];
  const exports = exportController({
    settings: { concurrency: 8, logger: silent },
    informers: informers as unknown as WorkerInformers,
    cloudMapChanges,
    ours: (namespace, service) => namespace === 'demo' && service === 'withdrawn',
    reconcile: async (key) => void exported.push(key),
  });
  const imports = importController({
    settings: { concurrency: 8, logger: silent },
    informers: informers as unknown as WorkerInformers,
    cloudMapChanges,
    silenceChanges,
    cloudMapServices: () => [
      { namespace: 'demo', service: 'web' },
      { namespace: 'other', service: 'db' },
    ],
    servicesOf: (clusters) => (clusters.has('cls2') ? [{ namespace: 'demo', service: 'db' }] : []),
    reconcile: async (key) => void imported.push(key),
  });
  for (const c of [exports, imports]) {
    c.watch();
    c.start();
  }
  const keys = async () => {
    await settle();
    const result = { exported: [...exported].sort(), imported: [...imported].sort() };
    exported.length = 0;
    imported.length = 0;
    return result;
  };
  return {
    informers,
    cloudMapChanges,
    silenceChanges,
    keys,
    stop: () => Promise.all([exports.stop(), imports.stop()]),
  };
}

const derived = { [LABEL_CREATED_BY]: CONTROLLER_NAME, [LABEL_SERVICE_NAME]: 'web' };

describe('worker/controllers: what queues which key', () => {
  it('a Service: derived ones to their import, an exported one to its export, any other to nothing', async () => {
    const h = harness();
    h.informers.services.add(object('Service', 'demo', 'derived-abc', derived));
    expect(await h.keys()).to.deep.equal({ exported: [], imported: ['demo/web'] });
    h.informers.services.add(object('Service', 'demo', 'web'));
    h.informers.services.add(object('Service', 'demo', 'unexported'));
    expect(await h.keys()).to.deep.equal({ exported: ['demo/web'], imported: [] });
    await h.stop();
  });

  it('an EndpointSlice: ours to its import, one of an exported Service to its export, any other to nothing', async () => {
    const h = harness();
    h.informers.endpointSlices.add(
      object('EndpointSlice', 'demo', 'imported-1', {
        [LABEL_MANAGED_BY]: CONTROLLER_NAME,
        [LABEL_SERVICE_NAME]: 'web',
        [LABEL_KUBE_SERVICE_NAME]: 'web',
      }),
    );
    expect(await h.keys()).to.deep.equal({ exported: [], imported: ['demo/web'] });
    h.informers.endpointSlices.add(object('EndpointSlice', 'demo', 'web-x1', { [LABEL_KUBE_SERVICE_NAME]: 'web' }));
    h.informers.endpointSlices.add(object('EndpointSlice', 'demo', 'db-x1', { [LABEL_KUBE_SERVICE_NAME]: 'db' }));
    expect(await h.keys()).to.deep.equal({ exported: ['demo/web'], imported: [] });
    await h.stop();
  });

  it('a Cloud Map change: always to the import, to the export while exported or while this cluster has instances of it', async () => {
    const h = harness();
    h.cloudMapChanges.emit({ namespace: 'demo', service: 'web' });
    h.cloudMapChanges.emit({ namespace: 'demo', service: 'withdrawn' });
    h.cloudMapChanges.emit({ namespace: 'demo', service: 'peers-only' });
    expect(await h.keys()).to.deep.equal({
      exported: ['demo/web', 'demo/withdrawn'],
      imported: ['demo/peers-only', 'demo/web', 'demo/withdrawn'],
    });
    await h.stop();
  });

  it('a namespace that appears (I1) and a silence change queue the imports concerned only', async () => {
    const h = harness();
    h.informers.namespaces.add(object('Namespace', '', 'other'));
    expect(await h.keys()).to.deep.equal({ exported: [], imported: ['other/db'] });
    h.silenceChanges.emit(new Set(['cls2']));
    expect(await h.keys()).to.deep.equal({ exported: [], imported: ['demo/db'] });
    await h.stop();
  });
});
