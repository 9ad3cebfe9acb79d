// The Cloud Map emulator's start-up options and its control endpoint (/_emulator/...): the documented behaviour of
// Cloud Map added to moto in process by the Python package hack/testbed/cloudmap_emulator (docs/testbed.md).

/** How the emulator behaves; every field is optional and defaults to the realistic mode. */
export interface CloudMapEmulatorOptions {
  /** `realistic` (default): operations take `operationDelayMs`, request quotas throttle. `fast`: both off. */
  mode?: 'realistic' | 'fast';
  /** How long an operation stays SUBMITTED/PENDING before SUCCESS or FAIL (realistic: 1000, fast: 0). */
  operationDelayMs?: number;
  /** Request quotas on or off (realistic: on, fast: off). */
  throttling?: boolean;
  /** Token bucket per API (`*` = every other API), per account and Region; merged over the documented defaults. */
  rates?: Record<string, { rate: number; burst: number }>;
  /** Resource quotas; 0 turns one off. */
  quotas?: Partial<Record<CloudMapQuota, number>>;
  /** Seed of the fault switch's random draws. */
  seed?: number;
  /**
   * Where to write each private DNS namespace's records as the RFC 1035 zone file `db.<namespace name>`, kept current
   * (a few times a second) for a DNS server to serve (namespace-dns.ts); default: none written.
   */
  zoneDir?: string;
}

export type CloudMapQuota =
  | 'instancesPerService'
  | 'instancesPerNamespace'
  | 'namespacesPerRegion'
  | 'customAttributesPerInstance'
  | 'servicesPerNamespace';

/**
 * The fault switch: shares (0..1) of requests answered 500/503, ThrottlingException, held for `timeoutMs`, or dropped
 * without an answer. `{ regions: ['eu-west-1'], disconnectRate: 1 }` switches a Region off: every call to it fails
 * as against an unreachable endpoint (the SDK rejects with a network error, code ECONNRESET, no HTTP status).
 */
export interface CloudMapFaults {
  errorRate?: number;
  throttleRate?: number;
  timeoutRate?: number;
  /** Share of requests whose connection is closed without an answer. */
  disconnectRate?: number;
  /** Added to every request (the filters below apply). */
  latencyMs?: number;
  /** How long a "timeout" request is held before it is answered 504 (default 30000). */
  timeoutMs?: number;
  /** Only these APIs (default: every API). */
  apis?: string[];
  /** Only requests to these Regions (default: every Region). */
  regions?: string[];
  /** Only requests from these accounts (default: every account). */
  accounts?: string[];
}

export interface CloudMapEmulatorConfig {
  mode: 'realistic' | 'fast';
  operationDelayMs: number;
  throttling: boolean;
  rates: Record<string, { rate: number; burst: number }>;
  quotas: Record<CloudMapQuota, number>;
  faults: Required<CloudMapFaults>;
}

/** Requests counted at the emulator: per API by outcome (`ok`, `throttled`, `fault` or an error code), per access
 * key, account and Region by API. */
export interface CloudMapCallLog {
  total: number;
  byApi: Record<string, Record<string, number>>;
  byAccessKey: Record<string, Record<string, number>>;
  byAccount: Record<string, Record<string, number>>;
  byRegion: Record<string, Record<string, number>>;
}

/** moto's default account: what every access key not made by `credentialsFor` acts as. */
export const DEFAULT_ACCOUNT = '123456789012';

/** Credentials the emulator attributes to a 12-digit account: the access key carries the account, so no
 * registration is needed. The secret is not checked. */
export function credentialsFor(accountId: string): { accessKeyId: string; secretAccessKey: string } {
  if (!/^\d{12}$/.test(accountId))
    throw new Error(`credentialsFor: ${JSON.stringify(accountId)} is not a 12-digit AWS account id`);
  return { accessKeyId: `ACCOUNT${accountId}`, secretAccessKey: `testbed-${accountId}` };
}

/** A namespace of `ownerAccount` shared with other accounts, as an AWS RAM resource share would (docs/testbed.md). */
export interface NamespaceShare {
  ownerAccount: string;
  region: string;
  /** The namespace's id or ARN. */
  namespaceId: string;
  withAccounts: string[];
}

/** One Cloud Map request as the emulator saw it (`GET /_emulator/requests`). */
export interface CloudMapRequest {
  /** Epoch seconds when it arrived and when it was answered. */
  start: number;
  end: number;
  api: string;
  accessKey: string;
  /** `app/<id>` of the client's user agent (the AWS SDK sends AWS_SDK_UA_APP_ID there), or "". */
  app: string;
  /** `ok`, `throttled`, `fault` or the error code answered. */
  outcome: string;
  serviceId: string;
  /** `<NamespaceName>/<ServiceName>` of DiscoverInstances and DiscoverInstancesRevision (they name no id), or "". */
  serviceName: string;
  instanceId: string;
  /** CLUSTER_ID of the instance written: the request's (RegisterInstance) or the instance's when it arrived (DeregisterInstance). */
  clusterId: string;
}

/** One record Route 53 would keep for a Cloud Map instance of a DNS namespace (`GET /_emulator/dns`). */
export interface DnsRecord {
  /** Absolute, e.g. `echo.prod.mcs.internal.`. */
  name: string;
  type: 'A' | 'AAAA' | 'SRV' | 'CNAME';
  ttl: number;
  value: string;
}

/** Command-line flags of `python -m cloudmap_emulator` for these options. */
export function emulatorArgs(opts: CloudMapEmulatorOptions): string[] {
  const args: string[] = [];
  if (opts.mode !== undefined) args.push('--mode', opts.mode);
  if (opts.operationDelayMs !== undefined) args.push('--operation-delay-ms', String(opts.operationDelayMs));
  if (opts.throttling !== undefined) args.push('--throttling', opts.throttling ? 'on' : 'off');
  if (opts.rates !== undefined)
    args.push(
      '--rates',
      Object.entries(opts.rates)
        .map(([api, r]) => `${api}=${r.rate}/${r.burst}`)
        .join(','),
    );
  if (opts.quotas !== undefined)
    args.push(
      '--quotas',
      Object.entries(opts.quotas)
        .map(([q, v]) => `${q}=${v}`)
        .join(','),
    );
  if (opts.seed !== undefined) args.push('--seed', String(opts.seed));
  if (opts.zoneDir !== undefined) args.push('--zone-dir', opts.zoneDir);
  return args;
}

/** Client of the emulator's control endpoint; changes apply at once, without a restart. */
export class CloudMapEmulatorControl {
  readonly endpoint: string;

  constructor(endpoint: string) {
    this.endpoint = endpoint;
  }

  async #request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.endpoint}/_emulator/${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await res.text();
    if (!res.ok)
      throw new Error(`Cloud Map emulator ${method} /_emulator/${path} answered HTTP ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  }

  config(): Promise<CloudMapEmulatorConfig> {
    return this.#request('GET', 'config');
  }

  /** Changes part of the configuration (`mode` resets the delay and throttling to the mode's, unless also given). */
  configure(
    change: Omit<CloudMapEmulatorOptions, 'seed' | 'zoneDir'> & { faults?: CloudMapFaults },
  ): Promise<CloudMapEmulatorConfig> {
    return this.#request('POST', 'config', change);
  }

  setFaults(faults: CloudMapFaults): Promise<Required<CloudMapFaults>> {
    return this.#request('POST', 'faults', faults);
  }

  clearFaults(): Promise<Required<CloudMapFaults>> {
    return this.#request('DELETE', 'faults');
  }

  calls(): Promise<CloudMapCallLog> {
    return this.#request('GET', 'calls');
  }

  /** The requests logged since `since` (epoch ms; default all kept), of `apis` only when given, oldest first. */
  async requests(since = 0, apis: readonly string[] = []): Promise<CloudMapRequest[]> {
    const query = new URLSearchParams({ since: String(since / 1000), apis: apis.join(',') });
    return (await this.#request<{ requests: CloudMapRequest[] }>('GET', `requests?${query.toString()}`)).requests;
  }

  resetCalls(): Promise<CloudMapCallLog> {
    return this.#request('DELETE', 'calls');
  }

  /** Credentials that act as `accountId` (see the function of the same name). */
  credentialsFor(accountId: string): { accessKeyId: string; secretAccessKey: string } {
    return credentialsFor(accountId);
  }

  /** Shares a namespace whose creation finished with `withAccounts` (added to any earlier share). Returns every share. */
  async shareNamespace(share: NamespaceShare): Promise<NamespaceShare[]> {
    return (await this.#request<{ shares: NamespaceShare[] }>('POST', 'shares', share)).shares;
  }

  /** Stops sharing a namespace with `withAccounts`, or with every account when it is omitted. Returns every share. */
  async unshareNamespace(
    share: Omit<NamespaceShare, 'withAccounts'> & { withAccounts?: string[] },
  ): Promise<NamespaceShare[]> {
    return (await this.#request<{ shares: NamespaceShare[] }>('DELETE', 'shares', share)).shares;
  }

  /** Every DNS namespace's records, by zone (the namespace's name), as the zone files hold them. */
  async dnsZones(): Promise<Record<string, DnsRecord[]>> {
    return (await this.#request<{ zones: Record<string, DnsRecord[]> }>('GET', 'dns')).zones;
  }

  async shares(): Promise<NamespaceShare[]> {
    return (await this.#request<{ shares: NamespaceShare[] }>('GET', 'shares')).shares;
  }

  /** Forgets every namespace, service, instance, operation, share, request quota bucket and logged call, and returns
   * the configuration (mode, rates, quotas, faults) to what it was at start. */
  async reset(): Promise<void> {
    await this.#request('POST', 'reset');
  }
}
