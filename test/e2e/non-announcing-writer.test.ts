// A ClusterSet mid-migration, as the Cloud Map side of it looks: the AWS controller v0.3.1 (stood in for by its
// instances, written here the way it writes them: no markers, no marker bumps) is active next to mcs-cloudmap. The last
// unexport keeps the empty Cloud Map service while v0.3.1 is seen, since v0.3.1's 10 s service caches fail a namespace's
// whole import when one goes (M3), and deletes it once v0.3.1 is gone.
import {
  CreateServiceCommand,
  DeleteServiceCommand,
  DeregisterInstanceCommand,
  ListNamespacesCommand,
  ListServicesCommand,
  RegisterInstanceCommand,
  type ServiceDiscoveryClient,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { CloudMapAdapter } from '../../src/cloudmap/adapter.ts';
import type { CloudMapInstance } from '../../src/core/types.ts';
import { v031Instance as standInInstance, v031InstanceId } from '../support/v031.ts';
import { retried, withE2E, type E2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, exportReady, importedBySource, runApp } from '../support/workloads.ts';

const NS = 'e2e-v031';
const APP = 'web';
const V031_ID = 'tcp-10_244_2_0-8080';
const NS_CHANGES = 'e2e-v031-changes';
const NS_NEW = 'e2e-v031-new';

/** An instance as v0.3.1 registers an endpoint of cluster cls0 (its id, its attributes, no markers). */
function v031Instance(
  clustersetId: string,
  ip: string,
  serviceType: 'ClusterSetIP' | 'Headless' = 'ClusterSetIP',
  port?: number,
): CloudMapInstance {
  return standInInstance(
    { clusterId: 'cls0', clustersetId, serviceType },
    { ip, nodeName: 'node-0', ...(port === undefined ? {} : { port }) },
  );
}

/**
 * Rounds of cls1's close checks between `since` and `until` (epoch ms), counted at the emulator: its checks
 * (DiscoverInstancesRevision) of `service` (`<namespace>/<name>`), which each round makes once. A loaded machine makes
 * rounds later, not the change visible to fewer of them.
 */
async function closeChecks(cs: E2E['cs'], service: string, since: number, until: number): Promise<number> {
  const requests = await cs.cloudMapControl.requests(since, ['DiscoverInstancesRevision']);
  return requests.filter((r) => r.app.startsWith('cls1-') && r.serviceName === service && r.start * 1000 <= until)
    .length;
}

async function serviceIds(cloudMap: ServiceDiscoveryClient): Promise<Map<string, string>> {
  const namespaces = await cloudMap.send(new ListNamespacesCommand({}));
  const namespaceId = namespaces.Namespaces?.find((n) => n.Name === NS)?.Id;
  if (namespaceId === undefined) return new Map();
  const services = await cloudMap.send(
    new ListServicesCommand({ Filters: [{ Name: 'NAMESPACE_ID', Values: [namespaceId], Condition: 'EQ' }] }),
  );
  return new Map((services.Services ?? []).map((s) => [s.Name!, s.Id!]));
}

describe('e2e: a controller that does not announce its writes (v0.3.1) is active (M3)', function () {
  this.timeout(300_000);
  const e2e = withE2E({ namespaces: [NS, NS_CHANGES, NS_NEW] });
  it('M3: the last unexport keeps the empty Cloud Map service while v0.3.1 is seen, and deletes it once it is gone', async () => {
    const { clusters, cls1, cloudMap, cs, stopWorker, startWorker } = e2e();
    // A short resync, so the worker sees the stand-in's new service in seconds (its listing finds it); the suite's
    // processes are its own.
    await stopWorker(cls1);
    await startWorker(cls1, { MCS_FULL_RESYNC_INTERVAL: '3s', MCS_RESYNC_BUDGET: '600' });
    await createNamespaces(clusters, NS);
    await runApp(cls1, NS, APP, 1);
    await exportReady(cls1, NS, APP);

    const namespaceId = (
      await retried('ListNamespaces', () => cloudMap.send(new ListNamespacesCommand({})))
    ).Namespaces!.find((n) => n.Name === NS)!.Id!;
    const v031Service = (
      await retried('CreateService', () =>
        cloudMap.send(new CreateServiceCommand({ Name: 'api', NamespaceId: namespaceId })),
      )
    ).Service!.Id!;
    const instance = v031Instance(cs.clustersetId, '10.244.2.0');
    await retried('RegisterInstance', () =>
      cloudMap.send(
        new RegisterInstanceCommand({
          ServiceId: v031Service,
          InstanceId: instance.id,
          Attributes: instance.attributes,
        }),
      ),
    );
    let v031Active = true;
    try {
      await eventually(
        "cls1 to import the stand-in's service",
        async () => (await cls1.serviceImport(NS, 'api')) !== undefined,
        60_000,
      );

      cls1.kubectl(['delete', 'serviceexport', APP, '-n', NS, '--timeout=60s']);
      await eventually(
        'the kept service logged',
        () => readFileSync(cls1.worker.proc.logPath, 'utf8').includes('"cloudmap-service-kept"'),
        30_000,
      );
      expect(
        [...(await retried('ListServices', () => serviceIds(cloudMap))).keys()].sort(),
        'Cloud Map services',
      ).to.deep.equal(['api', APP]);

      // v0.3.1 gone: its instance deregistered; once the worker has seen that, the next unexport deletes the service.
      await retried('DeregisterInstance', () =>
        cloudMap.send(new DeregisterInstanceCommand({ ServiceId: v031Service, InstanceId: V031_ID })),
      );
      v031Active = false;
      await eventually(
        "cls1 to drop the stand-in's import",
        async () => (await cls1.serviceImport(NS, 'api')) === undefined,
        60_000,
      );
      await exportReady(cls1, NS, APP);
      cls1.kubectl(['delete', 'serviceexport', APP, '-n', NS, '--timeout=60s']);
      await eventually(`Cloud Map service ${APP} deleted`, async () => !(await serviceIds(cloudMap)).has(APP), 30_000);
    } finally {
      // A v0.3.1 instance left behind would keep every later suite's empty services.
      if (v031Active)
        await retried('DeregisterInstance', () =>
          cloudMap.send(new DeregisterInstanceCommand({ ServiceId: v031Service, InstanceId: V031_ID })),
        );
    }
    await eventually(
      "the stand-in's service to be deletable",
      async () =>
        cloudMap.send(new DeleteServiceCommand({ Id: v031Service })).then(
          () => true,
          () => false,
        ),
      30_000,
    );
  });

  it('M6: the changes v0.3.1 makes in a namespace where it has instances reach the imports by the next close check, at the default settings', async () => {
    const { clusters, cls1, cs, startWorker, stopWorker } = e2e();
    const v031 = new CloudMapAdapter({
      clusterId: 'cls0',
      clustersetId: cs.clustersetId,
      client: {
        region: cs.region,
        endpoint: cs.cloudMapEndpoint,
        credentials: { accessKeyId: 'testbed', secretAccessKey: 'testbed' },
      },
    });
    await createNamespaces(clusters, NS_CHANGES);
    // v0.3.1 was there first, as in a migration: the worker's first listing finds its service.
    const service = await v031.ensureService(await v031.ensureNamespace(NS_CHANGES), 'api');
    const first = v031Instance(cs.clustersetId, '10.244.3.1');
    await v031.waitForOperations([await v031.registerInstance(service, first)]);
    await stopWorker(cls1);
    await startWorker(cls1);
    const imported = async () => (await importedBySource(cls1, 'api', NS_CHANGES)).cls0?.length ?? 0;
    await eventually("cls1 to import the stand-in's service", async () => (await imported()) === 1, 60_000);

    // Each change counted in cls1's close checks of the service from the end of its operation (about 1 s, as Cloud
    // Map's) to cls1's slices.
    const rounds: number[] = [];
    const checked = `${NS_CHANGES}/api`;
    try {
      for (let n = 2; n <= 11; n++) {
        const added = v031Instance(cs.clustersetId, `10.244.3.${n}`);
        await v031.waitForOperations([await v031.registerInstance(service, added)]);
        let since = Date.now();
        await eventually(`${n} endpoints imported`, async () => (await imported()) === 2, 30_000);
        rounds.push(await closeChecks(cs, checked, since, Date.now()));
        await v031.waitForOperations(await v031.deregisterInstances(service, [added.id]));
        since = Date.now();
        await eventually(`${n}: back to 1 endpoint`, async () => (await imported()) === 1, 30_000);
        rounds.push(await closeChecks(cs, checked, since, Date.now()));
      }
    } finally {
      await v031.waitForOperations(await v031.deregisterInstances(service, [first.id]));
      v031.destroy();
    }
    console.log(
      `      v0.3.1 scale up / down by one endpoint, cls1's close checks from its operation's end to its slices (${rounds.length}): ${rounds.join(' ')}`,
    );
    // The round under way may have read before the change; the next one sees it (and one more may start before the
    // slices are read back here).
    expect(Math.max(...rounds), 'most close checks before a change was imported').to.be.at.most(3);
  });

  it('M3: a service v0.3.1 creates there, headless or not, one it exports next to mcs-cloudmap, and its unexport reach the imports by the next rounds of close checks, at the default settings', async () => {
    const { clusters, cls1, cs, startWorker, stopWorker } = e2e();
    const v031 = new CloudMapAdapter({
      clusterId: 'cls0',
      clustersetId: cs.clustersetId,
      client: {
        region: cs.region,
        endpoint: cs.cloudMapEndpoint,
        credentials: { accessKeyId: 'testbed', secretAccessKey: 'testbed' },
      },
    });
    await createNamespaces(clusters, NS_NEW);
    const namespaceId = await v031.ensureNamespace(NS_NEW);
    // v0.3.1 has instances in the namespace before the worker starts (a ClusterSet mid-migration).
    const present = await v031.ensureService(namespaceId, 'present');
    const first = v031Instance(cs.clustersetId, '10.244.4.1');
    await v031.waitForOperations([await v031.registerInstance(present, first)]);
    await stopWorker(cls1);
    await startWorker(cls1);
    await eventually(
      "cls1 to import the stand-in's service",
      async () => (await importedBySource(cls1, 'present', NS_NEW)).cls0?.length === 1,
      60_000,
    );
    await runApp(cls1, NS_NEW, APP, 1);
    await exportReady(cls1, NS_NEW, APP);

    // Rounds of close checks (each checks `present`, always there) from the end of the change's operation to `check`
    // true in cls1.
    const rounds: Record<string, number> = {};
    const timed = async (what: string, change: () => Promise<unknown>, check: () => Promise<boolean>) => {
      await change();
      const since = Date.now();
      await eventually(what, check, 30_000);
      rounds[what] = await closeChecks(cs, `${NS_NEW}/present`, since, Date.now());
    };
    const written: Array<{ service: string; id: string }> = [{ service: present, id: first.id }];
    const register = async (name: string, instance: CloudMapInstance) => {
      const service = await v031.ensureService(namespaceId, name, true);
      written.push({ service, id: instance.id });
      await v031.waitForOperations([await v031.registerInstance(service, instance)]);
    };
    try {
      await timed(
        'new export',
        () => register('api', v031Instance(cs.clustersetId, '10.244.4.2')),
        async () => (await importedBySource(cls1, 'api', NS_NEW)).cls0?.length === 1,
      );
      await timed(
        'new headless export',
        () => register('hl', v031Instance(cs.clustersetId, '10.244.4.3', 'Headless')),
        async () =>
          (await cls1.serviceImport(NS_NEW, 'hl'))?.spec.type === 'Headless' &&
          (await importedBySource(cls1, 'hl', NS_NEW)).cls0?.length === 1,
      );
      // The same Service as cls1's (its unnamed port 80): the stand-in's default 8080 under the same name would be a
      // port conflict that v0.3.1, the older export, wins, leaving cls1's endpoints out of the port (X5).
      await timed(
        'both clusters exporting',
        () => register(APP, v031Instance(cs.clustersetId, '10.244.4.4', 'ClusterSetIP', 80)),
        async () => {
          const bySource = await importedBySource(cls1, APP, NS_NEW);
          return bySource.cls0?.length === 1 && bySource.cls1?.length === 1;
        },
      );
      const api = written.find((w) => w.id === v031InstanceId('10.244.4.2', 8080))!;
      await timed(
        'unexport',
        async () => v031.waitForOperations(await v031.deregisterInstances(api.service, [api.id])),
        async () => (await cls1.serviceImport(NS_NEW, 'api')) === undefined,
      );
    } finally {
      for (const w of written)
        await v031.waitForOperations(await v031.deregisterInstances(w.service, [w.id])).catch(() => {});
      v031.destroy();
    }
    console.log(
      `      v0.3.1's writes, cls1's rounds of close checks from the end of its operation to cls1's import: ${JSON.stringify(rounds)}`,
    );
    // As above; a new service is found by the round's listing of its namespace, the only one v0.3.1 writes in now.
    for (const [what, n] of Object.entries(rounds)) expect(n, what).to.be.at.most(3);
  });
});
