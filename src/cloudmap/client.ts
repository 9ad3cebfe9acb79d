// The AWS SDK client for Cloud Map. The SDK's own retries are off: the adapter's call layer owns rate limiting,
// throttling backoff and retries (M6), so every attempt is visible to the rate limiter and the metrics.
import { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';

export interface CloudMapClientOptions {
  region: string;
  /** A Cloud Map compatible endpoint (the emulator in tests); the SDK's regional default when absent. */
  endpoint?: string;
  /** Static credentials; the SDK's default provider chain (environment, web identity, instance role) when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export function createCloudMapClient(options: CloudMapClientOptions): ServiceDiscoveryClient {
  return new ServiceDiscoveryClient({
    region: options.region,
    maxAttempts: 1,
    ...(options.credentials ? { credentials: options.credentials } : {}),
    // DiscoverInstances and DiscoverInstancesRevision otherwise go to `data-<host>`, which a custom endpoint lacks.
    ...(options.endpoint ? { endpoint: options.endpoint, disableHostPrefix: true } : {}),
  });
}
