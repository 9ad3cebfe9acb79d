// ServiceExports that cannot export (E4, E5): reported with Valid=False and an Event, nothing in Cloud Map, and
// exported as soon as the Service becomes exportable.
import { DiscoverInstancesCommand } from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { condition, withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, deployment, service, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-validity';
const NAME = 'later';

interface EventView {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { kind?: string; name?: string };
}

/** events.k8s.io Events about ServiceExport NS/NAME. */
function exportEvents(cluster: E2ECluster): EventView[] {
  const list = JSON.parse(cluster.kubectl(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json'])) as {
    items: EventView[];
  };
  return list.items.filter((e) => e.regarding?.kind === 'ServiceExport' && e.regarding.name === NAME);
}

describe('e2e: ServiceExports of missing and ExternalName Services (E4, E5, X4)', function () {
  this.timeout(180_000);
  const e2e = withE2E({ namespaces: [NS] });

  before(async function () {
    this.timeout(60_000);
    await createNamespaces(e2e().clusters, NS);
  });

  it('E4: an export without its Service is Valid=False (NoService), Ready=False (Pending), with a Warning Event', async () => {
    const { cls1 } = e2e();
    cls1.apply([serviceExport(NS, NAME)]);
    await eventually(
      'Valid=False NoService',
      async () => condition(await cls1.serviceExport(NS, NAME), 'Valid')?.reason === 'NoService',
    );
    const se = (await cls1.serviceExport(NS, NAME))!;
    expect(condition(se, 'Valid')).to.include({ status: 'False', observedGeneration: se.metadata.generation });
    expect(condition(se, 'Valid')!.message).to.match(/create the Service/);
    expect(condition(se, 'Ready')).to.include({ status: 'False', reason: 'Pending' });
    await eventually('a Warning Event NoService on the ServiceExport', () =>
      exportEvents(cls1).some((e) => e.reason === 'NoService' && e.type === 'Warning'),
    );
  });

  it('E5: an ExternalName Service behind the export makes it Valid=False (InvalidServiceType); nothing reaches Cloud Map or cls2', async () => {
    const { cls1, cls2, cloudMap } = e2e();
    cls1.apply([
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: NAME, namespace: NS },
        spec: { type: 'ExternalName', externalName: 'nginx.example.com' },
      },
    ]);
    await eventually(
      'Valid=False InvalidServiceType',
      async () => condition(await cls1.serviceExport(NS, NAME), 'Valid')?.reason === 'InvalidServiceType',
    );
    expect(condition(await cls1.serviceExport(NS, NAME), 'Valid')!.status).to.equal('False');
    await eventually('a Warning Event InvalidServiceType', () =>
      exportEvents(cls1).some((e) => e.reason === 'InvalidServiceType'),
    );
    const found = await cloudMap
      .send(new DiscoverInstancesCommand({ NamespaceName: NS, ServiceName: NAME, HealthStatus: 'ALL' }))
      .then(
        (out) => out.Instances ?? [],
        (err: unknown) => (/NotFound$/.test((err as { name?: string }).name ?? '') ? [] : Promise.reject(err)),
      );
    expect(found).to.deep.equal([]);
    expect(await cls2.serviceImport(NS, NAME)).to.equal(undefined);
  });

  it('E5 (mcs-api v0.5.0 conformance case): exporting an existing ExternalName Service is admitted, gets Valid=False (InvalidServiceType) and imports nowhere', async () => {
    const { cls1, cls2 } = e2e();
    cls1.apply([
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'external', namespace: NS },
        spec: { type: 'ExternalName', externalName: 'example.com' },
      },
    ]);
    cls1.apply([serviceExport(NS, 'external')]);
    await eventually(
      'Valid=False InvalidServiceType',
      async () => condition(await cls1.serviceExport(NS, 'external'), 'Valid')?.reason === 'InvalidServiceType',
    );
    expect(condition(await cls1.serviceExport(NS, 'external'), 'Valid')!.status).to.equal('False');
    for (const cluster of [cls1, cls2])
      expect(await cluster.serviceImport(NS, 'external'), `no ServiceImport in ${cluster.id}`).to.equal(undefined);
  });

  it('E4: once a ClusterIP Service replaces it, the export turns Valid and Ready and cls2 imports it', async () => {
    const { cls1, cls2 } = e2e();
    cls1.kubectl(['delete', 'service', NAME, '-n', NS]);
    cls1.apply([deployment(NS, NAME, 1), service(NS, NAME)]);
    await eventually(
      'Ready=True Exported',
      async () => condition(await cls1.serviceExport(NS, NAME), 'Ready')?.reason === 'Exported',
    );
    expect(condition(await cls1.serviceExport(NS, NAME), 'Valid')).to.include({ status: 'True', reason: 'Valid' });
    await eventually('a Normal Event when the export became valid', () =>
      exportEvents(cls1).some((e) => e.reason === 'Valid' && e.type === 'Normal'),
    );
    await eventually(
      'cls2 imports it',
      async () => condition(await cls2.serviceImport(NS, NAME), 'Ready')?.status === 'True',
    );
  });
});
