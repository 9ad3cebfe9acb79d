// Cloud Map instance ids (M3). Every cluster registers into the same Cloud Map service, so ids must be unique across
// clusters; Cloud Map allows at most 64 characters from [0-9a-zA-Z_/:.@-].
//
// Formats written by this controller (`<tag>` = first 12 hex digits of sha256(clustersetId NUL clusterId), so ids of two
// clusters never collide even when they reuse pod IPs, nor those of two ClusterSets sharing an account and reusing a
// cluster id; protocols lowercase; addresses verbatim):
//   <proto>-<address>-<port>-<tag>  an endpoint address × endpoint port; <port> is the Service port it serves, since one
//                                   endpoint port may serve two Service ports while Service ports are unique
//   ip-<address>-<tag>              an endpoint of a Service without ports
//   svc-<proto>-<port>-<tag>        a Service port no endpoint serves (see cloudmap-attributes.ts)
//   svc-<tag>                       a Service without ports and without endpoints
// e.g. tcp-10.0.0.5-80-14757f89808b for cluster cls1 of ClusterSet clusterset1.
// When an unusual address spelling would push an id past 64 characters, the address part becomes `h` + 16 hex digits of
// sha256(address) (still deterministic and unique per address).
//
// Format of the AWS controller v0.3.1, read but never written: `<proto>-<ip with . and : as _>-<port>`, e.g.
// `tcp-10_10_28_116-80`. It collides when two clusters reuse a pod IP, which is why we do not write it.

import { shortHash } from './hashed-names.ts';
import type { CloudMapInstance, Protocol } from './types.ts';

export const MAX_INSTANCE_ID_LENGTH = 64;
const CLUSTER_TAG_LENGTH = 12;
const ADDRESS_HASH_LENGTH = 16;
const INSTANCE_ID_CHARS = /^[0-9a-zA-Z_/:.@-]+$/;

/** The cluster whose instance an id names; a ClusterExport is one. */
export interface InstanceOwner {
  clusterId: string;
  clustersetId: string;
}

/** The short, fixed-length stand-in for a cluster (in its ClusterSet) that ends every id this controller writes. */
export function clusterTag(owner: InstanceOwner): string {
  return shortHash([owner.clustersetId, owner.clusterId], CLUSTER_TAG_LENGTH);
}

function withAddress(build: (address: string) => string, address: string): string {
  const readable = build(address);
  if (readable.length <= MAX_INSTANCE_ID_LENGTH && INSTANCE_ID_CHARS.test(readable)) return readable;
  return build(`h${shortHash([address], ADDRESS_HASH_LENGTH)}`);
}

/** Id of the instance for one endpoint address × endpoint port of a cluster, keyed by the Service port it serves. */
export function endpointInstanceId(
  owner: InstanceOwner,
  address: string,
  protocol: Protocol,
  servicePort: number,
): string {
  const tag = clusterTag(owner);
  return withAddress((a) => `${protocol.toLowerCase()}-${a}-${servicePort}-${tag}`, address);
}

/** Id of the instance for an endpoint of a Service that has no ports. */
export function portlessEndpointInstanceId(owner: InstanceOwner, address: string): string {
  const tag = clusterTag(owner);
  return withAddress((a) => `ip-${a}-${tag}`, address);
}

/** Id of the address-less instance that keeps a Service port visible while no endpoint serves it. */
export function servicePortInstanceId(owner: InstanceOwner, protocol: Protocol, port: number): string {
  return `svc-${protocol.toLowerCase()}-${port}-${clusterTag(owner)}`;
}

/** Id of the address-less instance of a Service that has neither ports nor endpoints. */
export function serviceInstanceId(owner: InstanceOwner): string {
  return `svc-${clusterTag(owner)}`;
}

/** The id the AWS controller v0.3.1 gives an endpoint port (for tests and migration tooling; never registered by us). */
export function legacyInstanceId(protocol: Protocol, address: string, port: number): string {
  return `${protocol.toLowerCase()}-${address.replace(/[.:]/g, '_')}-${port}`;
}

export type InstanceIdFormat = 'mcs-cloudmap' | 'legacy';

/** What an id says about itself. Attributes remain the source of truth; the id only tells who wrote it. */
export interface ParsedInstanceId {
  format: InstanceIdFormat;
  /** Present for ids written by this controller. */
  clusterTag?: string;
  protocol?: Protocol;
  port?: number;
  /** As written in the id: verbatim for ours, with `.` and `:` turned into `_` for the legacy format. */
  address?: string;
}

const PROTOCOLS: Record<string, Protocol> = { tcp: 'TCP', udp: 'UDP', sctp: 'SCTP' };
const TAG = `[0-9a-f]{${CLUSTER_TAG_LENGTH}}`;
const PORT = '(\\d{1,5})';
const OURS_ENDPOINT = new RegExp(`^(tcp|udp|sctp)-([^-]+)-${PORT}-(${TAG})$`);
const OURS_PORTLESS = new RegExp(`^ip-([^-]+)-(${TAG})$`);
const OURS_SERVICE_PORT = new RegExp(`^svc-(tcp|udp|sctp)-${PORT}-(${TAG})$`);
const OURS_SERVICE = new RegExp(`^svc-(${TAG})$`);
const LEGACY = new RegExp(`^(tcp|udp|sctp)-([0-9a-fA-F_]+)-${PORT}$`);

/** Recognises the formats above; undefined for anything else (instances written by other tools). */
export function parseInstanceId(id: string): ParsedInstanceId | undefined {
  let m = OURS_ENDPOINT.exec(id);
  if (m)
    return {
      format: 'mcs-cloudmap',
      protocol: PROTOCOLS[m[1]!],
      address: m[2]!,
      port: Number(m[3]),
      clusterTag: m[4]!,
    };
  m = OURS_PORTLESS.exec(id);
  if (m) return { format: 'mcs-cloudmap', address: m[1]!, clusterTag: m[2]! };
  m = OURS_SERVICE_PORT.exec(id);
  if (m) return { format: 'mcs-cloudmap', protocol: PROTOCOLS[m[1]!], port: Number(m[2]), clusterTag: m[3]! };
  m = OURS_SERVICE.exec(id);
  if (m) return { format: 'mcs-cloudmap', clusterTag: m[1]! };
  m = LEGACY.exec(id);
  if (m) return { format: 'legacy', protocol: PROTOCOLS[m[1]!], address: m[2]!, port: Number(m[3]) };
  return undefined;
}

/** The instances by id, in the order listed (Cloud Map lists each id once: a re-registration updates it in place). */
export function latestById(instances: readonly CloudMapInstance[]): Map<string, CloudMapInstance> {
  const byId = new Map<string, CloudMapInstance>();
  for (const instance of instances) byId.set(instance.id, instance);
  return byId;
}
