// Shared setup of the Cloud Map adapter's integration tests: adapters for pretend clusters on one emulator, instances
// labelled as a cluster's, and polling helpers that count rather than time.
import { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { CloudMapAdapter, type CloudMapAdapterOptions } from '../../../src/cloudmap/adapter.ts';
import { CallCounter } from '../../../src/cloudmap/metrics.ts';
import type { CloudMapWatcher } from '../../../src/change-detection/cloudmap-watcher.ts';
import type { CloudMapInstance } from '../../../src/core/types.ts';
import { startStandaloneMoto, type StandaloneMoto } from '../../support/moto.ts';

export const CLUSTERSET = 'clusterset-it';
export const REGION = 'us-east-1';

/** A plain AWS SDK client of the emulator at `endpoint`, for what a test does beside the adapter. */
export function rawClient(endpoint: string): ServiceDiscoveryClient {
  return new ServiceDiscoveryClient({
    region: REGION,
    endpoint,
    disableHostPrefix: true,
    credentials: { accessKeyId: 't', secretAccessKey: 't' },
  });
}

export interface TestAdapter {
  adapter: CloudMapAdapter;
  calls: CallCounter;
}

export function adapterFor(
  endpoint: string,
  clusterId: string,
  extra: Partial<CloudMapAdapterOptions> = {},
): TestAdapter {
  const calls = new CallCounter();
  const adapter = new CloudMapAdapter({
    clusterId,
    clustersetId: CLUSTERSET,
    client: { region: REGION, endpoint, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } },
    metrics: calls,
    ...extra,
  });
  return { adapter, calls };
}

/** An instance as cluster `clusterId` of the test ClusterSet would register it. */
export function instanceOf(clusterId: string, id: string, extra: Record<string, string> = {}): CloudMapInstance {
  return {
    id,
    attributes: {
      CLUSTER_ID: clusterId,
      CLUSTERSET_ID: CLUSTERSET,
      AWS_INSTANCE_IPV4: '10.0.0.1',
      AWS_INSTANCE_PORT: '80',
      ...extra,
    },
  };
}

/** Registers instances for one cluster and waits for their operations. */
export async function registerAll(
  adapter: CloudMapAdapter,
  serviceId: string,
  instances: readonly CloudMapInstance[],
): Promise<void> {
  const ops = await Promise.all(instances.map((i) => adapter.registerInstance(serviceId, i)));
  await adapter.waitForOperations(ops);
}

/**
 * Call inside describe(): an emulator of the suite's own, reset before each test; watchers pushed on `running` are
 * stopped after each test.
 */
export function withEmulator(): { moto: () => StandaloneMoto; running: CloudMapWatcher[] } {
  let moto: StandaloneMoto | undefined;
  const running: CloudMapWatcher[] = [];
  before(async () => {
    moto = await startStandaloneMoto();
  });
  after(() => moto?.stop());
  beforeEach(() => moto!.reset());
  afterEach(async () => {
    await Promise.all(running.splice(0).map((w) => w.stop()));
  });
  return { moto: () => moto!, running };
}
