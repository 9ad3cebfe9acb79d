// The AWS SDK client for Cloud Map. The SDK's own retries are off: the adapter's call layer owns rate limiting,
// throttling backoff, retries and the per-attempt deadline (M6), so every attempt is visible to the rate limiter and
// the metrics.
import { ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { DEFAULT_CALL_TIMEOUT_MS } from './call.ts';

/** A connect within the Region takes milliseconds; 3 s leaves room for a lost SYN's first retransmission (1 s). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3_000;

export interface CloudMapClientOptions {
  region: string;
  /** A Cloud Map compatible endpoint (the emulator in tests); the SDK's regional default when absent. */
  endpoint?: string;
  /** Static credentials; the SDK's default provider chain (environment, web identity, instance role) when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Longest TCP connect (default DEFAULT_CONNECT_TIMEOUT_MS; the SDK's is none: a lost SYN waits for the kernel). */
  connectTimeoutMs?: number;
  /** Longest silence on a socket with a request outstanding (default the call deadline, DEFAULT_CALL_TIMEOUT_MS). */
  idleTimeoutMs?: number;
}

export function createCloudMapClient(options: CloudMapClientOptions): ServiceDiscoveryClient {
  return new ServiceDiscoveryClient({
    region: options.region,
    maxAttempts: 1,
    // The SDK's own bounds on a connection that never opens or goes silent; an answer that keeps trickling in is
    // ended by the caller's deadline (call.ts), which aborts the request.
    requestHandler: {
      connectionTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      socketTimeout: options.idleTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
    },
    ...(options.credentials ? { credentials: options.credentials } : {}),
    // DiscoverInstances and DiscoverInstancesRevision otherwise go to `data-<host>`, which a custom endpoint lacks.
    ...(options.endpoint ? { endpoint: options.endpoint, disableHostPrefix: true } : {}),
  });
}
