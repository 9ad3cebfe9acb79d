// Stock CoreDNS (hack/install-testbed.sh builds it from the Go module proxy) serving clusterset.local from one cluster's
// ServiceImports and MCS EndpointSlices with the kubernetes plugin's `multicluster` option (D1, D2; docs/dns.md). The
// plugin reads ServiceImports as v1alpha1, so once any exist its lists go through the conversion webhook.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import { join } from 'node:path';
import { coreDnsAvailability } from './paths.ts';
import { freePorts } from './ports.ts';
import { Supervisor } from './supervisor.ts';

export interface CoreDns {
  /** host:port to give a resolver, e.g. `new Resolver().setServers([address])`. */
  address: string;
  stop(): Promise<void>;
}

export interface CoreDnsSpec {
  /** For the default Corefile: the cluster whose ServiceImports are served. */
  kubeconfigPath?: string;
  /** The kubeconfig's context; also names the process. */
  context: string;
  /** Holds the Corefile and coredns.log. */
  dir: string;
  timeoutMs?: number;
  /**
   * The name whose answer (NXDOMAIN included) means started. Default: one in clusterset.local that does not exist, so
   * also that CoreDNS has listed everything it watches (until then it answers SERVFAIL for names it does not find).
   */
  probeName?: string;
  /** The Corefile for a server on `port`; default: one server block with `kubernetesBlock()` and `errors`. */
  corefile?: (port: number) => string;
  /**
   * Where the server is asked: this port (default: a free one) at this address (default 127.0.0.1). Binding to the
   * address is the Corefile's (`bind`); without it CoreDNS listens on every address.
   */
  listen?: { host?: string; port?: number };
}

/**
 * The kubernetes plugin's block, in a Corefile's server block, for cluster.local and clusterset.local: `multicluster`
 * answers clusterset.local from ServiceImports, and CoreDNS refuses to start unless that zone is one of the block's too.
 * `zones` and `lines` add what a cluster's Corefile has besides (reverse zones, `pods`, `fallthrough`).
 */
export function kubernetesBlock(
  kubeconfig: string,
  context: string,
  more: { zones?: readonly string[]; lines?: readonly string[] } = {},
): string[] {
  return [
    `  kubernetes ${['cluster.local', 'clusterset.local', ...(more.zones ?? [])].join(' ')} {`,
    `    kubeconfig ${kubeconfig} ${context}`,
    ...(more.lines ?? []).map((l) => `    ${l}`),
    '    multicluster clusterset.local',
    '  }',
  ];
}

/**
 * An answer for `name`, NXDOMAIN and no data included, proves the server is up and authoritative for its zone. The kubernetes
 * plugin answers SERVFAIL instead of NXDOMAIN until it has listed everything it watches (ServiceImports included).
 */
export async function answers(
  resolver: Resolver,
  name = 'readiness-probe.default.svc.clusterset.local',
): Promise<boolean> {
  try {
    await resolver.resolve4(name);
    return true;
  } catch (err) {
    // NXDOMAIN, or a name without an A record (an IPv6-only cluster's Service): either is an answer.
    if (['ENOTFOUND', 'ENODATA'].includes((err as { code?: string }).code ?? '')) return true;
    throw err;
  }
}

export async function startCoreDns(spec: CoreDnsSpec): Promise<CoreDns> {
  const availability = coreDnsAvailability();
  if (!availability.available) throw new Error(`CoreDNS is unavailable: ${availability.reason}`);
  mkdirSync(spec.dir, { recursive: true });
  const port = spec.listen?.port ?? ((await freePorts(1)) as [number])[0];
  const address = `${spec.listen?.host ?? '127.0.0.1'}:${port}`;
  const corefile = join(spec.dir, 'Corefile');
  writeFileSync(
    corefile,
    spec.corefile?.(port) ??
      [`.:${port} {`, '  errors', ...kubernetesBlock(spec.kubeconfigPath ?? '', spec.context), '}', ''].join('\n'),
  );
  const sup = new Supervisor(spec.dir);
  try {
    const proc = sup.start({
      name: `coredns (${spec.context})`,
      command: availability.path,
      args: ['-conf', corefile],
      logPath: join(spec.dir, 'coredns.log'),
    });
    const resolver = new Resolver({ timeout: 500, tries: 1 });
    resolver.setServers([address]);
    await proc.waitReady('answers DNS queries', () => answers(resolver, spec.probeName), spec.timeoutMs ?? 30_000);
  } catch (err) {
    await sup.stopAll(1000);
    throw err;
  }
  return { address, stop: () => sup.stopAll() };
}
