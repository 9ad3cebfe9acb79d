// Port rules of the MCS API: merging the ports of every exporting cluster into the ServiceImport's ports (X2), and the
// JSON shape and semantic comparison of ports shared by ServiceImports, derived Services and EndpointSlices.
import type { Protocol, ServicePort } from './types.ts';

/** Why a port was left out of the merge (X2). */
export type PortClashKind =
  /** Same name, different protocol or port number. */
  | 'name'
  /** Same protocol and port number, different name (empty counts as a name). */
  | 'protocolPort'
  /** Same name, protocol and port, but a different appProtocol (an unset appProtocol agrees with any). */
  | 'appProtocol';

/** One port of a newer export that lost against a port of an older one. */
export interface PortClash {
  kind: PortClashKind;
  kept: ServicePort;
  keptBy: string;
  dropped: ServicePort;
  droppedBy: string;
}

/**
 * A newer export whose ports are not those of the oldest export (mcs-api v0.5.0 `PortConflict`, X2), leaving out what
 * its clashes already report: the ports only it exports and the oldest export's ports it lacks.
 */
export interface PortDifference {
  clusterId: string;
  oldest: string;
  added: ServicePort[];
  lacking: ServicePort[];
}

/** Per cluster, the names of the merged ports its endpoints serve: those it defines as the merge states them (X5). */
export type ServedPorts = ReadonlyMap<string, ReadonlySet<string>>;

export interface PortMerge {
  /** The union: the first export's ports in its order, then every new port in precedence order. */
  ports: ServicePort[];
  /**
   * X5, strict port conflicts: a cluster serves a merged port when its own port joined it without a clash (same name,
   * protocol and number, no other appProtocol). A cluster whose port lost a clash does not serve that port, so its
   * endpoints must not receive the port's traffic: they would be reached on a port its Service does not expose.
   */
  served: ServedPorts;
  /** X2: true when the port lists are not identical in every export, whether or not any port clashes. */
  conflicting: boolean;
  clashes: PortClash[];
  differences: PortDifference[];
}

/**
 * X2: the union of the exports' ports, given in precedence order (oldest export first). A port joins an existing one with
 * the same name when protocol and port agree; otherwise, or when its (protocol, port) is already taken under another
 * name, it clashes and the older port wins. The oldest export's ports therefore always survive unchanged.
 */
export function mergePorts(
  exportsInPrecedenceOrder: ReadonlyArray<{ clusterId: string; ports: readonly ServicePort[] }>,
): PortMerge {
  const ports: ServicePort[] = [];
  const byName = new Map<string, number>();
  const byProtocolPort = new Map<string, number>();
  // The first appProtocol set for each merged port, and who set it: a later, different one clashes with it.
  const appProtocol: Array<{ value: string; by: string } | undefined> = [];
  const addedBy: string[] = [];
  const clashes: PortClash[] = [];
  const served = new Map<string, Set<string>>();

  for (const { clusterId, ports: exported } of exportsInPrecedenceOrder) {
    const own = new Set<string>();
    served.set(clusterId, own);
    for (const port of exported) {
      const named = byName.get(port.name);
      if (named !== undefined) {
        const kept = ports[named]!;
        const seen = appProtocol[named];
        if (kept.protocol !== port.protocol || kept.port !== port.port) {
          clashes.push({ kind: 'name', kept, keptBy: addedBy[named]!, dropped: port, droppedBy: clusterId });
        } else if (port.appProtocol !== undefined && seen !== undefined && seen.value !== port.appProtocol) {
          clashes.push({
            kind: 'appProtocol',
            kept: { ...kept, appProtocol: seen.value },
            keptBy: seen.by,
            dropped: port,
            droppedBy: clusterId,
          });
        } else {
          if (port.appProtocol !== undefined && seen === undefined)
            appProtocol[named] = { value: port.appProtocol, by: clusterId };
          own.add(port.name);
        }
        continue;
      }
      const taken = byProtocolPort.get(protocolPortKey(port));
      if (taken !== undefined) {
        clashes.push({
          kind: 'protocolPort',
          kept: ports[taken]!,
          keptBy: addedBy[taken]!,
          dropped: port,
          droppedBy: clusterId,
        });
        continue;
      }
      byName.set(port.name, ports.length);
      byProtocolPort.set(protocolPortKey(port), ports.length);
      appProtocol.push(port.appProtocol === undefined ? undefined : { value: port.appProtocol, by: clusterId });
      addedBy.push(clusterId);
      ports.push(port);
      own.add(port.name);
    }
  }
  const differences = portDifferences(exportsInPrecedenceOrder, clashes);
  return { ports, served, conflicting: clashes.length > 0 || differences.length > 0, clashes, differences };
}

/**
 * X2 as of mcs-api v0.5.0: every export's ports compared with the oldest export's as sets of (name, protocol, port), with
 * the merge's normalisation (the empty name is a name; appProtocol is left to the clashes, since an unset one agrees
 * with any). Comparing with the oldest alone is enough: the lists are identical everywhere exactly when each equals
 * the oldest's. Ports a clash already names for that cluster are left out, so nothing is reported twice.
 */
function portDifferences(
  ordered: ReadonlyArray<{ clusterId: string; ports: readonly ServicePort[] }>,
  clashes: readonly PortClash[],
): PortDifference[] {
  const [oldest, ...newer] = ordered;
  if (oldest === undefined) return [];
  const differences: PortDifference[] = [];
  for (const { clusterId, ports } of newer) {
    const own = clashes.filter((c) => c.droppedBy === clusterId);
    const named = (port: ServicePort, side: (c: PortClash) => ServicePort) =>
      own.some((c) => portKey(side(c)) === portKey(port));
    const added = ports.filter(
      (p) => !oldest.ports.some((o) => portKey(o) === portKey(p)) && !named(p, (c) => c.dropped),
    );
    const lacking = oldest.ports.filter(
      (o) => !ports.some((p) => portKey(p) === portKey(o)) && !named(o, (c) => c.kept),
    );
    if (added.length > 0 || lacking.length > 0)
      differences.push({ clusterId, oldest: oldest.clusterId, added, lacking });
  }
  return differences;
}

/**
 * X5, strict port conflicts while the import's ports change: the served ports that are safe both under the ports
 * published now (the stored ServiceImport's and derived Service's) and under the new merge, or undefined when no port is
 * restated. A port published under the same name with another protocol, number or appProtocol is served by nobody in
 * between, so no write before the new ports are published puts a cluster's endpoints behind a port it does not define
 * as stated (kube-proxy and Gateway API implementations match slice ports to Service ports by name).
 */
export function servedWhilePortsChange(
  served: ServedPorts,
  next: readonly ServicePort[],
  published: ReadonlyArray<readonly StoredPort[]>,
): ServedPorts | undefined {
  const stated = new Map(next.map((port) => [port.name, JSON.stringify(portTuple(port))]));
  const restated = new Set(
    published
      .flat()
      .filter((port) => {
        const now = stated.get(port.name ?? '');
        return now !== undefined && now !== JSON.stringify(portTuple(port));
      })
      .map((port) => port.name ?? ''),
  );
  if (restated.size === 0) return undefined;
  return new Map(
    [...served].map(([clusterId, names]) => [clusterId, new Set([...names].filter((name) => !restated.has(name)))]),
  );
}

/** The identity of a port when comparing port lists (X2): name, protocol and number. */
function portKey(port: ServicePort): string {
  return `${port.name}|${protocolPortKey(port)}`;
}

export function protocolPortKey(port: { protocol: Protocol; port: number }): string {
  return `${port.protocol}/${port.port}`;
}

/** `"http" TCP/80`, or `TCP/80` for the unnamed port: how ports are named in conflict messages. */
export function formatPort(port: ServicePort): string {
  return port.name === '' ? protocolPortKey(port) : `"${port.name}" ${protocolPortKey(port)}`;
}

/** A port as written to the Kubernetes API: `name` left out when empty, `appProtocol` when unset. */
export interface PortSpec {
  name?: string;
  protocol: Protocol;
  port: number;
  appProtocol?: string;
}

export function toPortSpec(port: {
  name: string;
  protocol: Protocol;
  port: number;
  appProtocol?: string | undefined;
}): PortSpec {
  return {
    ...(port.name === '' ? {} : { name: port.name }),
    protocol: port.protocol,
    port: port.port,
    ...(port.appProtocol === undefined ? {} : { appProtocol: port.appProtocol }),
  };
}

/** A port as read back from the API server (client-node's V1ServicePort, V1EndpointPort and our CRD's port fit). */
export interface StoredPort {
  name?: string | undefined;
  protocol?: string | undefined;
  port?: number | undefined;
  appProtocol?: string | undefined;
}

/** Order-insensitive identity of a list of ports, with the API's defaults applied (no name = '', no protocol = TCP). */
export function portListKey(ports: readonly StoredPort[] | null | undefined): string {
  return JSON.stringify((ports ?? []).map(portTuple).sort(compareTuples));
}

/** A total order on ports (name, protocol, port, appProtocol), for deterministic output. */
export function comparePorts(a: StoredPort, b: StoredPort): number {
  return compareTuples(portTuple(a), portTuple(b));
}

function portTuple(p: StoredPort): [string, string, number, string] {
  return [p.name ?? '', p.protocol ?? 'TCP', p.port ?? 0, p.appProtocol ?? ''];
}

function compareTuples(a: ReadonlyArray<string | number>, b: ReadonlyArray<string | number>): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}
