import { expect } from 'chai';
import { kubeClientFor } from '../../../src/kube/client.ts';
import { createInformer } from '../../../src/runtime/informer.ts';
import { NAMESPACES, resourcePath, SERVICES, type KubeObject } from '../../../src/kube/resources.ts';
import { startPrivateApiserver, type PrivateApiserver } from '../kube/private-apiserver.ts';
import { startCuttableProxy, type CuttableProxy } from '../../support/proxy.ts';
import { captureLogger, kubeConfigVia } from '../kube/support.ts';
import { eventually } from '../../support/eventually.ts';

describe('informer relists on 410 Gone after an apiserver restart', function () {
  this.timeout(120_000);
  let apiserver: PrivateApiserver;
  let proxy: CuttableProxy;
  let failed = false;

  before(async () => {
    apiserver = await startPrivateApiserver();
    proxy = await startCuttableProxy(apiserver.server);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  after(async () => {
    await proxy?.close();
    await apiserver?.stop({ keepLogs: failed });
    if (failed) console.error(`kube-apiserver and etcd logs kept in ${apiserver.logsDir}`);
  });

  it('an informer that missed changes while cut off gets 410 on reconnect, relists at once, reports the missed add and delete, and is current only then', async () => {
    const kc = apiserver.kubeConfig();
    const client = kubeClientFor(kc);
    const ns = 'relist';
    const svc = (name: string) => ({ metadata: { name, namespace: ns }, spec: { ports: [{ port: 80 }] } });
    await client.request({ method: 'POST', path: resourcePath(NAMESPACES), body: { metadata: { name: ns } } });
    for (const name of ['a', 'b'])
      await client.request({ method: 'POST', path: resourcePath(SERVICES, ns), body: svc(name) });

    const { logger, lines } = captureLogger();
    const informer = createInformer<KubeObject>({
      kubeConfig: kubeConfigVia(kc, proxy.url),
      path: resourcePath(SERVICES, ns),
      resyncMs: 0,
      logger,
      backoff: { baseMs: 100, maxMs: 1000, jitter: 0.5 },
    });
    const adds: string[] = [];
    const deletes: string[] = [];
    informer.addHandlers({ onAdd: (o) => adds.push(o.metadata.name), onDelete: (o) => deletes.push(o.metadata.name) });
    informer.start();
    try {
      await informer.waitForSync();
      expect(adds.sort()).to.deep.equal(['a', 'b']);
      const rvBefore = informer.lastResourceVersion();

      proxy.down();
      await client.request({ method: 'POST', path: resourcePath(SERVICES, ns), body: svc('c') });
      await client.request({ method: 'DELETE', path: resourcePath(SERVICES, ns, 'a') });
      // The restarted apiserver's watch cache starts at the current revision: rvBefore is now too old for it.
      await apiserver.restart();
      await eventually(
        'several reconnects to fail',
        () => lines.filter((l) => l.event === 'reconnect').length >= 3,
        30_000,
      );
      expect(informer.isCurrent(), 'current while its watch fails').to.equal(false);
      proxy.up();

      await informer.waitUntilCurrent();
      expect(deletes, 'the missed delete, delivered before the cache counts as current').to.include('a');
      expect(adds).to.include('c');
      expect(
        informer
          .list(ns)
          .map((o) => o.metadata.name)
          .sort(),
      ).to.deep.equal(['b', 'c']);
      const relists = lines.filter((l) => l.event === 'relist');
      expect(relists, 'a relist log line').to.have.length.at.least(1);
      expect(relists[0]).to.include({ resource: resourcePath(SERVICES, ns), level: 'warn', resourceVersion: rvBefore });
      expect(String(relists[0]!.err)).to.match(/too old resource version|410|Expired|Gone/i);
      // The 410 shows the server answers again: relisted at once, not after the backoff the failed reconnects built up.
      expect(relists[0]!.delayMs, 'delay before the relist').to.equal(0);
      expect(informer.isCurrent()).to.equal(true);
      expect(Number(informer.lastResourceVersion())).to.be.greaterThan(Number(rvBefore));
    } finally {
      await informer.stop();
    }
  });
});
