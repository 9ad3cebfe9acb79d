// AWS SDK settings that point the Cloud Map (servicediscovery) client at the testbed's emulator.
import type { ServiceDiscoveryClientConfig } from '@aws-sdk/client-servicediscovery';
import { credentialsFor } from '../../hack/testbed/cloudmap-emulator.ts';
import type { TestClusterSet } from '../../hack/testbed/index.ts';

export { operationDone } from '../../hack/testbed/cloudmap-operation.ts';

/**
 * `disableHostPrefix` matters: the SDK otherwise sends DiscoverInstances(Revision) to `data-<host>`, which does not
 * resolve for a local endpoint. The emulator accepts any credentials; they act as `as.account` when given (else as the
 * emulator's default account), in `as.region` (else the ClusterSet's).
 */
export function cloudMapClientConfig(
  cs: Pick<TestClusterSet, 'cloudMapEndpoint' | 'region'>,
  as: { account?: string; region?: string } = {},
): ServiceDiscoveryClientConfig {
  return {
    endpoint: cs.cloudMapEndpoint,
    region: as.region ?? cs.region,
    credentials: as.account ? credentialsFor(as.account) : { accessKeyId: 'testbed', secretAccessKey: 'testbed' },
    disableHostPrefix: true,
    maxAttempts: 1,
  };
}

/** An AWS SDK error: `name` is the error code, modelled fields (e.g. DuplicateOperationId) are properties. */
export type SdkError = Error & { code?: string; $metadata?: { httpStatusCode?: number }; [field: string]: unknown };

/** The error a call rejects with (fails the test when it succeeds). */
export async function failure(call: Promise<unknown>): Promise<SdkError> {
  try {
    await call;
  } catch (err) {
    return err as SdkError;
  }
  throw new Error('expected the call to fail, it succeeded');
}
