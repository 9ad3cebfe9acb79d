import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { withClusterSet } from '../../support/clusterset.ts';
import { kubeClientFor } from '../../../src/kube/client.ts';
import { createInformer, type Informer, type InformerOptions } from '../../../src/runtime/informer.ts';
import { resourcePath, SERVICE_EXPORTS, SERVICES, type KubeObject } from '../../../src/kube/resources.ts';
import { keepFields, LAST_APPLIED_ANNOTATION } from '../../../src/runtime/trim.ts';
import { startCuttableProxy } from '../../support/proxy.ts';
import { captureLogger, createTestNamespace, deleteNamespace, installCrds, kubeConfigVia } from '../kube/support.ts';
import { eventually } from '../../support/eventually.ts';

interface Recorded {
  adds: string[];
  /** `same`: old is the very object delivered, which is how the member tells a resync from a change (M7). */
  updates: { name: string; oldRv: string | undefined; newRv: string | undefined; same: boolean }[];
  deletes: string[];
}

function record<T extends KubeObject>(informer: Informer<T>): Recorded {
  const r: Recorded = { adds: [], updates: [], deletes: [] };
  informer.addHandlers({
    onAdd: (o) => r.adds.push(o.metadata.name),
    onUpdate: (o, old) =>
      r.updates.push({
        name: o.metadata.name,
        oldRv: old.metadata.resourceVersion,
        newRv: o.metadata.resourceVersion,
        same: o === old,
      }),
    onDelete: (o) => r.deletes.push(o.metadata.name),
  });
  return r;
}

function service(namespace: string, name: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels },
    spec: { ports: [{ port: 80, protocol: 'TCP' }] },
  };
}

describe('informer on a real kube-apiserver: list, watch, resync, healing', function () {
  this.timeout(60_000);
  const clusterSet = withClusterSet();
  let kc: KubeConfig;
  let ns: string;
  const informers: Informer<KubeObject>[] = [];

  const create = (body: unknown, path = resourcePath(SERVICES, ns)) =>
    kubeClientFor(kc).request({ method: 'POST', path, body });
  const remove = (name: string, resource = SERVICES) =>
    kubeClientFor(kc).request({ method: 'DELETE', path: resourcePath(resource, ns, name) });

  before(async () => {
    kc = clusterSet().clusters[0]!.kubeConfig();
    ns = await createTestNamespace(kc, 'kube-informer');
  });

  afterEach(async () => {
    await Promise.all(informers.splice(0).map((i) => i.stop()));
  });

  after(async () => {
    await deleteNamespace(kc, ns);
  });

  function start<T extends KubeObject>(
    opts: Partial<InformerOptions<T>> & { path: string },
    kubeConfig = kc,
  ): Informer<T> {
    const informer = createInformer<T>({ kubeConfig, resyncMs: 0, logger: captureLogger().logger, ...opts });
    informers.push(informer);
    return informer;
  }

  it('delivers the initial list as adds, then creates, updates (with the old object) and deletes; indexes follow', async () => {
    await create(service(ns, 'before', { app: 'web' }));
    const informer = start({ path: resourcePath(SERVICES, ns) });
    const seen = record(informer);
    expect(informer.hasSynced()).to.equal(false);
    informer.start();
    await informer.waitForSync();
    expect(informer.hasSynced()).to.equal(true);
    expect(seen.adds).to.deep.equal(['before']);
    expect(informer.get(ns, 'before')?.kind).to.equal('Service');

    await create(service(ns, 'after', { app: 'web' }));
    await eventually('add of "after"', () => seen.adds.includes('after'));
    expect(
      informer
        .listByLabel('app', 'web', ns)
        .map((s) => s.metadata.name)
        .sort(),
    ).to.deep.equal(['after', 'before']);

    const before = informer.get(ns, 'before')!;
    await kubeClientFor(kc).request({
      method: 'PATCH',
      path: resourcePath(SERVICES, ns, 'before'),
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { app: 'api' } } },
    });
    await eventually('update of "before"', () => seen.updates.some((u) => u.name === 'before'));
    const update = seen.updates.find((u) => u.name === 'before')!;
    expect(update.oldRv).to.equal(before.metadata.resourceVersion);
    expect(update.newRv).to.not.equal(before.metadata.resourceVersion);
    expect(update.same).to.equal(false);
    expect(informer.listByLabel('app', 'web').map((s) => s.metadata.name)).to.deep.equal(['after']);
    expect(informer.listBySelector({ app: 'api' }, ns).map((s) => s.metadata.name)).to.deep.equal(['before']);

    await remove('after');
    await eventually('delete of "after"', () => seen.deletes.includes('after'));
    expect(informer.get(ns, 'after')).to.equal(undefined);
    expect(informer.list(ns).map((s) => s.metadata.name)).to.deep.equal(['before']);
    await remove('before');
  });

  it('reads a list longer than a page to its end, page after page, and watches on from it', async function () {
    this.timeout(120_000);
    const count = 501;
    const configMapsPath = `/api/v1/namespaces/${ns}/configmaps`;
    const names = Array.from({ length: count }, (_, i) => `bulk-${String(i).padStart(3, '0')}`);
    for (let i = 0; i < names.length; i += 25) {
      await Promise.all(
        names.slice(i, i + 25).map((name) =>
          create(
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, namespace: ns, labels: { bulk: 'yes' } },
              data: { k: 'v' },
            },
            configMapsPath,
          ),
        ),
      );
    }
    const informer = start({ path: configMapsPath, labelSelector: 'bulk=yes' });
    const seen = record(informer);
    informer.start();
    await informer.waitForSync();
    expect(seen.adds.sort()).to.deep.equal(names);
    expect(informer.list(ns).every((c) => c.kind === 'ConfigMap' && c.apiVersion === 'v1')).to.equal(true);
    // The watch goes on from the snapshot's resourceVersion: a change after the list is seen as one.
    await create(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'after', namespace: ns, labels: { bulk: 'yes' } },
        data: {},
      },
      configMapsPath,
    );
    await eventually('the ConfigMap created after the list', () => seen.adds.includes('after'));
    expect(seen.adds.length).to.equal(count + 1);
  });

  it('watches a CRD (ServiceExport) with a label selector', async () => {
    await installCrds(clusterSet().clusters[0]!.kubeconfigPath);
    const exportsPath = resourcePath(SERVICE_EXPORTS, ns);
    const informer = start({ path: resourcePath(SERVICE_EXPORTS), labelSelector: 'team=a' });
    const seen = record(informer);
    informer.start();
    await informer.waitForSync();
    const svcex = (name: string, team: string) => ({
      apiVersion: 'multicluster.x-k8s.io/v1beta1',
      kind: 'ServiceExport',
      metadata: { name, namespace: ns, labels: { team } },
    });
    await create(svcex('mine', 'a'), exportsPath);
    await create(svcex('theirs', 'b'), exportsPath);
    await eventually('add of ServiceExport "mine"', () => seen.adds.includes('mine'));
    await kubeClientFor(kc).request({ method: 'DELETE', path: resourcePath(SERVICE_EXPORTS, ns, 'mine') });
    await eventually('delete of ServiceExport "mine"', () => seen.deletes.includes('mine'));
    expect(seen.adds).to.not.include('theirs');
    expect(informer.get(ns, 'mine')).to.equal(undefined);
    await remove('theirs', SERVICE_EXPORTS);
  });

  it('caches and delivers objects as trimmed, from the list and from the watch (no managedFields, last-applied or status)', async () => {
    type Svc = KubeObject & { spec?: unknown; status?: unknown };
    const annotated = (name: string) => ({
      ...service(ns, name),
      metadata: { name, namespace: ns, annotations: { [LAST_APPLIED_ANNOTATION]: '{"a":1}', team: 'a' } },
    });
    await create(annotated('listed'));
    const informer = start<Svc>({ path: resourcePath(SERVICES, ns), trim: keepFields<Svc>('spec') });
    const delivered: Svc[] = [];
    informer.addHandlers({ onAdd: (o) => delivered.push(o), onUpdate: (o) => delivered.push(o) });
    informer.start();
    await informer.waitForSync();
    await create(annotated('watched'));
    await eventually('add of "watched"', () => informer.get(ns, 'watched') !== undefined);
    for (const name of ['listed', 'watched']) {
      const cached = informer.get(ns, name)!;
      expect(cached.metadata.managedFields, name).to.equal(undefined);
      expect(cached.metadata.annotations, name).to.deep.equal({ team: 'a' });
      expect(cached.metadata.uid, name).to.be.a('string');
      expect(cached).to.have.keys('apiVersion', 'kind', 'metadata', 'spec');
      expect(
        delivered
          .filter((o) => o.metadata.name === name)
          .every((o) => o === cached || o.metadata.managedFields === undefined),
        name,
      ).to.equal(true);
    }
    await remove('listed');
    await remove('watched');
  });

  it('resync re-delivers every cached object to onUpdate(obj, obj)', async () => {
    await create(service(ns, 'steady'));
    const informer = start({ path: resourcePath(SERVICES, ns), resyncMs: 300 });
    const seen = record(informer);
    informer.start();
    await informer.waitForSync();
    await eventually(
      'two resyncs of "steady"',
      () => seen.updates.filter((u) => u.name === 'steady').length >= 2,
      5000,
    );
    for (const u of seen.updates) expect(u).to.include({ oldRv: u.newRv, same: true });
    await remove('steady');
  });

  it('heals after its connection is cut: reconnects with backoff, logs it, and catches up on what changed meanwhile', async () => {
    const proxy = await startCuttableProxy(clusterSet().clusters[0]!.server);
    try {
      const { logger, lines } = captureLogger();
      await create(service(ns, 'old'));
      const informer = start(
        { path: resourcePath(SERVICES, ns), logger, backoff: { baseMs: 100, maxMs: 400, jitter: 0.5 } },
        kubeConfigVia(kc, proxy.url),
      );
      const seen = record(informer);
      informer.start();
      await informer.waitForSync();

      proxy.down();
      await create(service(ns, 'created-while-down'));
      await remove('old');
      await eventually(
        'a reconnect attempt to be logged',
        () => lines.filter((l) => l.event === 'reconnect').length >= 2,
      );
      expect(seen.adds).to.not.include('created-while-down');
      expect(informer.isCurrent(), 'current while reconnects fail').to.equal(false);
      proxy.up();

      await informer.waitUntilCurrent();
      // The watch resumed from the last resourceVersion: what it missed follows as its first events.
      await eventually(
        'the informer to catch up',
        () => seen.adds.includes('created-while-down') && seen.deletes.includes('old'),
      );
      expect(informer.list(ns).map((s) => s.metadata.name)).to.deep.equal(['created-while-down']);
      const reconnects = lines.filter((l) => l.event === 'reconnect');
      for (const l of reconnects) {
        expect(l).to.include({ resource: resourcePath(SERVICES, ns), level: 'warn' });
        expect(l.err).to.be.a('string').and.not.equal('');
      }
      const delays = reconnects.map((l) => l.delayMs as number);
      expect(Math.max(...delays)).to.be.at.most(400);

      // Healthy again: a change after recovery arrives through the new watch.
      await create(service(ns, 'after-recovery'));
      await eventually('add after recovery', () => seen.adds.includes('after-recovery'));
      await remove('created-while-down');
      await remove('after-recovery');
    } finally {
      await proxy.close();
    }
  });

  it('ends its backoff early once another request on the same client is answered again', async () => {
    const proxy = await startCuttableProxy(clusterSet().clusters[0]!.server);
    try {
      const { logger, lines } = captureLogger();
      // 20 s after any failure: a reconnect well before that can only be the wake.
      const backoff = { baseMs: 20_000, maxMs: 20_000, jitter: 0 };
      const viaProxy = kubeConfigVia(kc, proxy.url);
      const informer = start({ path: resourcePath(SERVICES, ns), logger, backoff }, viaProxy);
      informer.start();
      await informer.waitForSync();

      proxy.down();
      await eventually('the watch to fail', () => lines.some((l) => l.event === 'reconnect'));
      const probe = () => kubeClientFor(viaProxy).request({ method: 'GET', path: resourcePath(SERVICES, ns) });
      await probe().then(
        () => expect.fail('answered through a cut proxy'),
        () => undefined,
      );
      proxy.up();
      const upAt = Date.now();
      await probe();
      await informer.waitUntilCurrent();
      expect(Date.now() - upAt, 'current again after the probe was answered').to.be.below(10_000);
    } finally {
      await proxy.close();
    }
  });

  it('waitForSync rejects when the informer is stopped before its first list', async () => {
    const proxy = await startCuttableProxy(clusterSet().clusters[0]!.server);
    proxy.down();
    try {
      const { logger } = captureLogger();
      const informer = start({ path: resourcePath(SERVICES, ns), logger }, kubeConfigVia(kc, proxy.url));
      informer.start();
      const waiting = informer.waitForSync();
      await informer.stop();
      let error: unknown;
      await waiting.catch((e: unknown) => {
        error = e;
      });
      expect(String(error)).to.match(/stopped before its first list/);
    } finally {
      await proxy.close();
    }
  });
});
