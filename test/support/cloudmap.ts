// AWS SDK settings that point the Cloud Map (servicediscovery) client at the testbed's emulator.
import type { ServiceDiscoveryClientConfig } from '@aws-sdk/client-servicediscovery';
import type { TestClusterSet } from '../../hack/testbed/index.ts';

/**
 * `disableHostPrefix` matters: the SDK otherwise sends DiscoverInstances(Revision) to `data-<host>`, which does not
 * resolve for a local endpoint. The emulator accepts any credentials.
 */
export function cloudMapClientConfig(cs: Pick<TestClusterSet, 'cloudMapEndpoint' | 'region'>): ServiceDiscoveryClientConfig {
  return {
    endpoint: cs.cloudMapEndpoint,
    region: cs.region,
    credentials: { accessKeyId: 'testbed', secretAccessKey: 'testbed' },
    disableHostPrefix: true,
    maxAttempts: 1,
  };
}
