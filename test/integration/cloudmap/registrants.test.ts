// Members that are not clusters (I9–I11) on the emulator through the real AWS SDK: ECS-style tasks registered by
// hack/testbed/ecs-tasks.ts, the emulator's custom health checks as Cloud Map documents them, and the worker's
// RegistrantWatch finding the opted-in service, following tasks and health, and writing nothing (counted at the wire:
// every request of the watch's access key, by API).
import {
  CreateHttpNamespaceCommand,
  CreateServiceCommand,
  DiscoverInstancesCommand,
  DiscoverInstancesRevisionCommand,
  ServiceDiscoveryClient,
  TagResourceCommand,
  UntagResourceCommand,
} from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { CallCounter } from '../../../src/cloudmap/metrics.ts';
import { CloudMapAdapter } from '../../../src/cloudmap/adapter.ts';
import { registrantExports } from '../../../src/core/registrants.ts';
import { createLogger } from '../../../src/observability/log.ts';
import { IMPORT_TAG, RegistrantWatch } from '../../../src/worker/registrants.ts';
import { failure, operationDone } from '../../support/cloudmap.ts';
import { createEcsRegistry, EcsServiceRegistrant } from '../../../hack/testbed/ecs-tasks.ts';
import { eventually } from '../../support/eventually.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';
import { CLUSTERSET, REGION } from './fixtures.ts';

const WATCH_KEY = 'registrant-watch';
const WRITES = [
  'RegisterInstance',
  'DeregisterInstance',
  'CreateService',
  'DeleteService',
  'UpdateService',
  'CreateHttpNamespace',
  'DeleteNamespace',
  'TagResource',
  'UntagResource',
  'UpdateInstanceCustomHealthStatus',
];

describe('members that are not clusters: ECS-style tasks on the emulator (I9–I11)', function () {
  this.timeout(90_000);
  let moto: StandaloneMoto;
  let client: ServiceDiscoveryClient;
  let namespaceId = '';

  before(async () => {
    moto = await startStandaloneMoto();
  });
  after(async () => {
    client?.destroy();
    await moto?.stop();
  });
  beforeEach(async () => {
    await moto.reset();
    client?.destroy();
    client = new ServiceDiscoveryClient({
      endpoint: moto.endpoint,
      region: REGION,
      credentials: { accessKeyId: 'platform-team', secretAccessKey: 'x' },
      disableHostPrefix: true,
    });
    namespaceId = (
      await operationDone(client, (await client.send(new CreateHttpNamespaceCommand({ Name: 'shop' }))).OperationId)
    ).NAMESPACE!;
  });

  async function discover(service: string) {
    return client.send(
      new DiscoverInstancesCommand({ NamespaceName: 'shop', ServiceName: service, HealthStatus: 'ALL' }),
    );
  }

  describe('the emulator follows Cloud Map', () => {
    it('AWS_INIT_HEALTH_STATUS sets the first status of a custom health check; updates change it but not InstancesRevision', async () => {
      const registry = await createEcsRegistry(client, namespaceId, 'payments');
      const ecs = new EcsServiceRegistrant(client, registry.id, {
        cluster: 'prod',
        service: 'payments',
        region: REGION,
      });
      await ecs.start({ id: 'task-1', ip: '10.1.0.1', port: 8080, zone: 'us-east-1a', healthy: false });
      await ecs.start({ id: 'task-2', ip: '10.1.0.2', port: 8080, zone: 'us-east-1b' });
      const health = async () =>
        Object.fromEntries(
          ((await discover('payments')).Instances ?? []).map((i): [string, string] => [
            i.InstanceId ?? '',
            i.HealthStatus ?? '',
          ]),
        );
      expect(await health()).to.deep.equal({ 'task-1': 'UNHEALTHY', 'task-2': 'HEALTHY' });
      const revision = async () =>
        (await client.send(new DiscoverInstancesRevisionCommand({ NamespaceName: 'shop', ServiceName: 'payments' })))
          .InstancesRevision;
      const before = await revision();
      await ecs.setHealth('task-1', true);
      await ecs.setHealth('task-2', false);
      expect(await health()).to.deep.equal({ 'task-1': 'HEALTHY', 'task-2': 'UNHEALTHY' });
      expect(await revision()).to.equal(before);
    });

    it('a service without a custom health check refuses UpdateInstanceCustomHealthStatus (CustomHealthNotFound)', async () => {
      const { Service } = await client.send(new CreateServiceCommand({ Name: 'plain', NamespaceId: namespaceId }));
      const ecs = new EcsServiceRegistrant(client, Service!.Id!, { cluster: 'prod', service: 'plain', region: REGION });
      await ecs.start({ id: 'task-1', ip: '10.1.0.1', port: 8080, zone: 'us-east-1a', healthy: false });
      expect(
        (await discover('plain')).Instances?.[0]?.HealthStatus,
        'no health check: AWS_INIT_HEALTH_STATUS ignored',
      ).to.equal('HEALTHY');
      expect((await failure(ecs.setHealth('task-1', false))).name).to.equal('CustomHealthNotFound');
    });
  });

  describe('RegistrantWatch', () => {
    let stop: AbortController;
    let watch: RegistrantWatch;
    let adapter: CloudMapAdapter;
    let changes: string[];

    function startWatch(namespaces: string[], intervals = { scanIntervalMs: 200, pollIntervalMs: 100 }): Promise<void> {
      stop = new AbortController();
      changes = [];
      adapter = new CloudMapAdapter({
        clusterId: 'cls1',
        clustersetId: CLUSTERSET,
        client: {
          region: REGION,
          endpoint: moto.endpoint,
          credentials: { accessKeyId: WATCH_KEY, secretAccessKey: 'x' },
        },
        metrics: new CallCounter(),
        rateLimits: { ListNamespaces: 100, ListServices: 100 },
      });
      watch = new RegistrantWatch({
        cloudMap: adapter,
        namespaces: () => namespaces,
        ...intervals,
        onChange: ({ namespace, service }) => changes.push(`${namespace}/${service}`),
        signal: stop.signal,
        log: createLogger('registrants-it', process.env.MCS_LOG_LEVEL ?? 'silent'),
      });
      return watch.start();
    }
    afterEach(async () => {
      stop?.abort();
      await watch?.stop();
      adapter?.destroy();
    });

    /** Every request the watch sent, by API. */
    async function watchCalls(): Promise<Record<string, number>> {
      const counts: Record<string, number> = {};
      for (const r of await moto.control.requests())
        if (r.accessKey === WATCH_KEY) counts[r.api] = (counts[r.api] ?? 0) + 1;
      return counts;
    }

    /** The members of shop/payments as the import side computes them: name → ready addresses. */
    function members(): Record<string, string[]> {
      const { exports } = registrantExports(watch.instances('shop', 'payments'), {
        clustersetId: CLUSTERSET,
        namespace: 'shop',
        name: 'payments',
      });
      return Object.fromEntries(
        exports.map((e) => [e.clusterId, e.endpoints.filter((x) => x.ready).map((x) => x.address)]),
      );
    }

    it('I9: imports only the tagged service of a namespace this cluster has; follows tasks and health; writes nothing', async () => {
      const payments = await createEcsRegistry(client, namespaceId, 'payments', { [IMPORT_TAG]: 'true' });
      await createEcsRegistry(client, namespaceId, 'untagged');
      await createEcsRegistry(client, namespaceId, 'tagged-false', { [IMPORT_TAG]: 'false' });
      const ecs = new EcsServiceRegistrant(client, payments.id, {
        cluster: 'prod',
        service: 'payments',
        region: REGION,
      });
      await ecs.start({ id: 'task-1', ip: '10.1.0.1', port: 8080, zone: 'us-east-1a' });

      await startWatch(['shop', 'default']);
      expect(watch.read).to.equal(true);
      expect(watch.services()).to.deep.equal([{ namespace: 'shop', service: 'payments' }]);
      expect(members()).to.deep.equal({ 'ecs.prod': ['10.1.0.1'] });

      await ecs.start({ id: 'task-2', ip: '10.1.0.2', port: 8080, zone: 'us-east-1b', healthy: false });
      await eventually(
        'the new task, not ready',
        () =>
          JSON.stringify(members()) === JSON.stringify({ 'ecs.prod': ['10.1.0.1'] }) &&
          watch.instances('shop', 'payments').length === 2,
      );
      await ecs.setHealth('task-2', true);
      await eventually('task-2 ready once healthy', () => members()['ecs.prod']?.length === 2);
      await ecs.setHealth('task-1', false);
      await eventually(
        'task-1 not ready once unhealthy',
        () => JSON.stringify(members()['ecs.prod']) === '["10.1.0.2"]',
      );
      await ecs.stop('task-2');
      await eventually('task-2 gone once stopped', () => watch.instances('shop', 'payments').length === 1);
      expect(changes.every((c) => c === 'shop/payments')).to.equal(true);

      await client.send(new UntagResourceCommand({ ResourceARN: payments.arn, TagKeys: [IMPORT_TAG] }));
      await eventually('the service to leave once untagged', () => watch.services().length === 0);
      expect(watch.instances('shop', 'payments')).to.deep.equal([]);

      const calls = await watchCalls();
      expect(
        Object.keys(calls).filter((api) => WRITES.includes(api)),
        'write calls of the watch',
      ).to.deep.equal([]);
      expect(Object.keys(calls).sort()).to.deep.equal([
        'DiscoverInstances',
        'ListNamespaces',
        'ListServices',
        'ListTagsForResource',
      ]);
    });

    it('I9: a tagged service in a namespace this cluster lacks, or one this controller created, is not watched', async () => {
      const { Service } = await client.send(
        new CreateServiceCommand({
          Name: 'ours',
          NamespaceId: namespaceId,
          Description: 'Created by mcs-cloudmap (Kubernetes Multi-Cluster Services)',
        }),
      );
      await client.send(
        new TagResourceCommand({ ResourceARN: Service!.Arn!, Tags: [{ Key: IMPORT_TAG, Value: 'true' }] }),
      );
      await createEcsRegistry(client, namespaceId, 'payments', { [IMPORT_TAG]: 'true' });
      await startWatch(['default']);
      expect(watch.services()).to.deep.equal([]);
      stop.abort();
      await watch.stop();
      await startWatch(['shop']);
      expect(watch.services()).to.deep.equal([{ namespace: 'shop', service: 'payments' }]);
      const tagReads = (await moto.control.requests(0, ['ListTagsForResource'])).filter(
        (r) => r.accessKey === WATCH_KEY,
      );
      expect(tagReads, 'tags are read only of services this controller did not create').to.have.length(1);
    });

    it('idle cost: per poll interval one DiscoverInstances per opted-in service; per scan one ListNamespaces, one ListServices per namespace here and one ListTagsForResource per foreign service', async () => {
      const payments = await createEcsRegistry(client, namespaceId, 'payments', { [IMPORT_TAG]: 'true' });
      await createEcsRegistry(client, namespaceId, 'orders', { [IMPORT_TAG]: 'true' });
      await createEcsRegistry(client, namespaceId, 'untagged');
      const ecs = new EcsServiceRegistrant(client, payments.id, {
        cluster: 'prod',
        service: 'payments',
        region: REGION,
      });
      await ecs.start({ id: 'task-1', ip: '10.1.0.1', port: 8080, zone: 'us-east-1a' });
      // Scans once a second and polls every 250 ms for 4 s: about 4 scans and 16 polls of two services.
      const started = Date.now();
      await startWatch(['shop'], { scanIntervalMs: 1000, pollIntervalMs: 250 });
      await new Promise((r) => setTimeout(r, 4000));
      stop.abort();
      await watch.stop();
      const seconds = (Date.now() - started) / 1000;
      const calls = await watchCalls();
      const scans = calls.ListNamespaces ?? 0;
      const reads: Record<string, number> = {};
      for (const r of await moto.control.requests(0, ['DiscoverInstances']))
        if (r.accessKey === WATCH_KEY) reads[r.serviceName] = (reads[r.serviceName] ?? 0) + 1;
      console.log(
        `      idle cost over ${seconds.toFixed(1)} s: ${JSON.stringify(calls)} (${scans} scans; reads ${JSON.stringify(reads)})`,
      );
      // Counts per scan and per poll, not per second: how many rounds fit in the window depends on the machine's load.
      expect(scans).to.be.at.least(1);
      expect(calls.ListServices).to.equal(scans);
      expect(calls.ListTagsForResource).to.equal(3 * scans);
      // Each poll reads both opted-in services (the stop may fall between the two) and never the untagged one.
      expect(Object.keys(reads).sort()).to.deep.equal(['shop/orders', 'shop/payments']);
      expect(Math.abs(reads['shop/orders']! - reads['shop/payments']!)).to.be.at.most(1);
      expect(Object.keys(calls).filter((api) => WRITES.includes(api))).to.deep.equal([]);
    });
  });
});
