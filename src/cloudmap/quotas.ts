// Cloud Map request quotas and the client-side limits derived from them (M6). Quotas are per account and Region and
// shared by every cluster of the ClusterSet (and by people using the console or CLI), so each controller keeps to an
// equal share of a fraction of them (--cloudmap-quota-share, 80 % by default): staying under the quota by design. A
// busy controller may borrow past its share, up to the controllers' whole fraction, while nobody throttles it
// (adaptive-rate.ts): a cluster syncing alone is not held to 1/n of the quota. Pure.

/** Key of the quota used for APIs without an entry of their own. */
export const OTHER_APIS = '*';

export interface ApiQuota {
  /** Requests per second the account may make, steadily. */
  readonly rate: number;
  /** Requests the account may make at once after a quiet period (the token bucket's size). */
  readonly burst: number;
}

/**
 * Account quotas per API. DiscoverInstances (1,000/s steady, 2,000 burst) and DiscoverInstancesRevision (3,000/s) are
 * AWS's documented defaults (Cloud Map developer guide, "Cloud Map service quotas" and "Handle DiscoverInstances API
 * request throttling"). AWS publishes no figure for the control-plane APIs: these are the limits AWS's own MCS
 * controller (v0.3.x, pkg/common/ratelimiter.go) keeps to as "the default limits", and ListInstances' 50/s as quoted
 * by an AWS account team (kubernetes-sigs/external-dns issue 2505) — the same table the testbed's emulator enforces.
 * Override with --cloudmap-quotas when an account's real limits are known.
 */
export const CLOUD_MAP_QUOTAS: Readonly<Record<string, ApiQuota>> = {
  DiscoverInstances: { rate: 1000, burst: 2000 },
  DiscoverInstancesRevision: { rate: 3000, burst: 3000 },
  RegisterInstance: { rate: 50, burst: 100 },
  DeregisterInstance: { rate: 50, burst: 100 },
  GetOperation: { rate: 100, burst: 200 },
  ListInstances: { rate: 50, burst: 100 },
  ListServices: { rate: 2, burst: 10 },
  ListNamespaces: { rate: 0.5, burst: 5 },
  CreateService: { rate: 5, burst: 50 },
  CreateHttpNamespace: { rate: 0.5, burst: 5 },
  [OTHER_APIS]: { rate: 10, burst: 20 },
};

/**
 * The share of each quota the controllers of a ClusterSet take together by default; the rest is left to people, tools
 * and other controllers on the account. An account used by the ClusterSet alone may give them all of it.
 */
export const DEFAULT_CONTROLLERS_SHARE = 0.8;

export interface ClientLimit {
  /** Requests per second this controller allows itself: its share. */
  readonly rate: number;
  /** Size of its token bucket at that rate (at least 1). */
  readonly burst: number;
  /** Requests per second it may borrow up to while busy and not throttled (at least `rate`). */
  readonly ceiling: number;
}

export interface ClientLimitInput {
  /** Clusters whose controllers use the same account and Region (at least 1). */
  readonly clusters: number;
  /** Account quota rates per API that differ from CLOUD_MAP_QUOTAS (the burst scales with the rate). */
  readonly quotas?: Readonly<Record<string, number>>;
  /** Client rates per API set outright (the burst scales with the rate), bypassing the sharing. */
  readonly overrides?: Readonly<Record<string, number>>;
  /** The fraction of each quota the controllers take together, in (0, 1]; default DEFAULT_CONTROLLERS_SHARE. */
  readonly share?: number;
}

function scaled(quota: ApiQuota, rate: number, ceiling: number): ClientLimit {
  return { rate, burst: Math.max(1, (quota.burst / quota.rate) * rate), ceiling };
}

/**
 * Each API's client-side limit: the controllers' share of the account quota divided equally among `clusters`,
 * borrowing up to the whole of that share; or exactly the rate `overrides` names for the API, without borrowing.
 * Every API of CLOUD_MAP_QUOTAS, `quotas` and `overrides` gets an entry, and `*` always.
 */
export function clientLimits(input: ClientLimitInput): Record<string, ClientLimit> {
  const clusters = Math.max(1, Math.floor(input.clusters));
  const share = input.share ?? DEFAULT_CONTROLLERS_SHARE;
  if (!(share > 0 && share <= 1))
    throw new RangeError(`the controllers' share of the Cloud Map quotas must be in (0, 1], got ${share}`);
  const apis = new Set([
    ...Object.keys(CLOUD_MAP_QUOTAS),
    ...Object.keys(input.quotas ?? {}),
    ...Object.keys(input.overrides ?? {}),
  ]);
  const out: Record<string, ClientLimit> = {};
  for (const api of apis) {
    const table = CLOUD_MAP_QUOTAS[api] ?? CLOUD_MAP_QUOTAS[OTHER_APIS]!;
    const quotaRate = input.quotas?.[api];
    const quota = quotaRate === undefined ? table : { rate: quotaRate, burst: (table.burst / table.rate) * quotaRate };
    const override = input.overrides?.[api];
    const controllers = quota.rate * share;
    out[api] =
      override === undefined ? scaled(quota, controllers / clusters, controllers) : scaled(quota, override, override);
  }
  return out;
}

/**
 * The least time, in seconds, in which `calls` (requests per API) fit the given limits: each API's calls beyond its
 * burst at its rate, the slowest API deciding (APIs are limited independently and run in parallel).
 */
export function quotaLowerBoundSeconds(
  calls: Readonly<Record<string, number>>,
  limits: Readonly<Record<string, ApiQuota | ClientLimit>>,
): number {
  let bound = 0;
  for (const [api, n] of Object.entries(calls)) {
    const limit = limits[api] ?? limits[OTHER_APIS]!;
    bound = Math.max(bound, Math.max(0, n - limit.burst) / limit.rate);
  }
  return bound;
}
