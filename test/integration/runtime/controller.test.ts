// The controller builder over informers of a real kube-apiserver: changes to the kind reconciled and to the kinds it
// owns reach the reconciler as keys, what belongs to nothing reaches it not, and a stop waits for the reconcile in
// flight and lets no later change through.
import { expect } from 'chai';
import type { KubeConfig } from '@kubernetes/client-node';
import { withClusterSet } from '../../support/clusterset.ts';
import { kubeClientFor } from '../../../src/kube/client.ts';
import { CONFIG_MAPS, resourcePath, SERVICES, type KubeObject } from '../../../src/kube/resources.ts';
import { ControllerBuilder } from '../../../src/runtime/controller-builder.ts';
import type { Controller } from '../../../src/runtime/controller.ts';
import { createInformer, type Informer } from '../../../src/runtime/informer.ts';
import { captureLogger, createTestNamespace, deleteNamespace } from '../kube/support.ts';
import { eventually } from '../../support/eventually.ts';

const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;

describe('controller builder on a real kube-apiserver: informers → keys → queue → reconcile', function () {
  this.timeout(60_000);
  const clusterSet = withClusterSet();
  let kc: KubeConfig;
  let ns: string;
  let services: Informer<KubeObject>;
  let configMaps: Informer<KubeObject>;
  let controller: Controller<string> | undefined;
  const { logger } = captureLogger();

  const create = (body: KubeObject, resource = SERVICES) =>
    kubeClientFor(kc).request({ method: 'POST', path: resourcePath(resource, ns), body });
  const remove = (name: string, resource = SERVICES) =>
    kubeClientFor(kc).request({ method: 'DELETE', path: resourcePath(resource, ns, name) });
  const service = (name: string): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns },
      spec: { ports: [{ port: 80 }] },
    }) as KubeObject;
  const configMap = (name: string, labels: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, labels },
  });

  /** Services reconciled, with whether the cache held the Service then; each reconcile waits for `gate` if set. */
  function declare(
    reconciled: Array<{ key: string; exists: boolean }>,
    gate?: () => Promise<void>,
  ): Controller<string> {
    controller = new ControllerBuilder<string>('services', { concurrency: 2, logger })
      .for(services, keyOf)
      .owns(configMaps, (cm) =>
        cm.metadata.labels?.owner === undefined ? undefined : `${cm.metadata.namespace}/${cm.metadata.labels.owner}`,
      )
      .complete(async (key) => {
        await gate?.();
        const [namespace, name] = key.split('/');
        reconciled.push({ key, exists: services.get(namespace, name!) !== undefined });
      });
    return controller;
  }

  before(async () => {
    kc = clusterSet().clusters[0]!.kubeConfig();
    ns = await createTestNamespace(kc, 'controller');
  });

  beforeEach(async () => {
    services = createInformer<KubeObject>({ kubeConfig: kc, path: resourcePath(SERVICES, ns), resyncMs: 0, logger });
    configMaps = createInformer<KubeObject>({
      kubeConfig: kc,
      path: resourcePath(CONFIG_MAPS, ns),
      resyncMs: 0,
      logger,
    });
  });

  afterEach(async () => {
    await controller?.stop();
    controller = undefined;
    await Promise.all([services.stop(), configMaps.stop()]);
  });

  after(async () => {
    await deleteNamespace(kc, ns);
  });

  it('reconciles the Service that changed, and the owner of a ConfigMap that changed; nothing for an unowned one', async () => {
    await create(service('before'));
    const reconciled: Array<{ key: string; exists: boolean }> = [];
    const c = declare(reconciled);
    c.watch();
    services.start();
    configMaps.start();
    await Promise.all([services.waitForSync(), configMaps.waitForSync()]);
    // The initial list's adds came before start(): the owner queues what it needs.
    expect(reconciled).to.deep.equal([]);
    c.start();
    c.requeue(services.list().map(keyOf));
    await eventually('the listed Service reconciled', () => reconciled.length === 1);

    await create(service('web'));
    await eventually('web reconciled', () => reconciled.some((r) => r.key === `${ns}/web`));
    await create(configMap('unowned', {}), CONFIG_MAPS);
    await create(configMap('web-settings', { owner: 'web' }), CONFIG_MAPS);
    await eventually(
      'web reconciled for its ConfigMap',
      () => reconciled.filter((r) => r.key === `${ns}/web`).length === 2,
    );
    await remove('web');
    await eventually('web reconciled once gone', () => reconciled.some((r) => r.key === `${ns}/web` && !r.exists));
    expect(configMaps.get(ns, 'unowned')).to.not.equal(undefined);
    expect(reconciled.map((r) => r.key)).to.deep.equal([`${ns}/before`, `${ns}/web`, `${ns}/web`, `${ns}/web`]);
    await remove('before');
  });

  it('a stop waits for the reconcile in flight, and no change after it is reconciled', async () => {
    const reconciled: Array<{ key: string; exists: boolean }> = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let entered = 0;
    const c = declare(reconciled, () => {
      entered++;
      return gate;
    });
    c.watch();
    services.start();
    configMaps.start();
    await Promise.all([services.waitForSync(), configMaps.waitForSync()]);
    c.start();
    await create(service('slow'));
    await eventually('the reconcile of slow started', () => entered === 1);
    let stopped = false;
    const stopping = c.stop().then(() => (stopped = true));
    await create(service('late'));
    await eventually('the informer saw late', () => services.get(ns, 'late') !== undefined);
    expect(stopped, 'stop resolved with a reconcile in flight').to.equal(false);
    open();
    await stopping;
    expect(reconciled.map((r) => r.key)).to.deep.equal([`${ns}/slow`]);
    expect(entered).to.equal(1);
    await Promise.all([remove('slow'), remove('late')]);
  });
});
