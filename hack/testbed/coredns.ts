// CoreDNS with our clusterset plugin (dns/), serving clusterset.local from one cluster's ServiceImports and
// EndpointSlices (D1, D2). hack/install-testbed.sh builds it from the repository's dns/ module.
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
  kubeconfigPath: string;
  context: string;
  /** Holds the Corefile and coredns.log. */
  dir: string;
  timeoutMs?: number;
}

/** An answer for `name`, NXDOMAIN included, proves the server is up and authoritative for its zone. */
export async function answers(resolver: Resolver, name = 'readiness-probe.default.svc.clusterset.local'): Promise<boolean> {
  try {
    await resolver.resolve4(name);
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOTFOUND') return true;
    throw err;
  }
}

export async function startCoreDns(spec: CoreDnsSpec): Promise<CoreDns> {
  const availability = coreDnsAvailability();
  if (!availability.available) throw new Error(`CoreDNS with the clusterset plugin is unavailable: ${availability.reason}`);
  mkdirSync(spec.dir, { recursive: true });
  const [port] = await freePorts(1) as [number];
  const corefile = join(spec.dir, 'Corefile');
  writeFileSync(corefile, [
    `.:${port} {`,
    '  errors',
    '  clusterset clusterset.local {',
    `    kubeconfig ${spec.kubeconfigPath} ${spec.context}`,
    '  }',
    '}',
    '',
  ].join('\n'));
  const sup = new Supervisor(spec.dir);
  try {
    const proc = sup.start({
      name: `coredns (${spec.context})`,
      command: availability.path,
      args: ['-conf', corefile],
      logPath: join(spec.dir, 'coredns.log'),
    });
    const resolver = new Resolver({ timeout: 500, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
    await proc.waitReady('answers DNS queries', () => answers(resolver), spec.timeoutMs ?? 30_000);
  } catch (err) {
    await sup.stopAll(1000);
    throw err;
  }
  return { address: `127.0.0.1:${port}`, stop: () => sup.stopAll() };
}
