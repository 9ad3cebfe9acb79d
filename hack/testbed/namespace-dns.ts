// The testbed's stand-in for the Route 53 Resolver of the VPC: stock CoreDNS serving the zone files the Cloud Map
// emulator writes for its private DNS namespaces (CloudMapEmulatorOptions.zoneDir, cloudmap_emulator/dns_zones.py) with
// the `auto` plugin, which loads every `db.<zone>` of the directory and reloads one whose SOA serial grew.
import { join } from 'node:path';
import { startCoreDns, type CoreDns } from './coredns.ts';

/** Answered by the `whoami` plugin whatever the zones hold: the probe that says the server is up. */
const PROBE_ZONE = 'namespace-dns.probe';

/** How often CoreDNS looks for new zone files and for changed serials (the emulator writes within 0.2 s). */
const RELOAD = '1s';

/**
 * `bindTo`: listen on port 53 of this address only, as a VPC's resolver does, so a host whose resolv.conf names the
 * address resolves through it (data-path/outside-host.ts); default: a free port on every address, asked at 127.0.0.1.
 */
export function startNamespaceDns(zoneDir: string, dir: string, bindTo?: string): Promise<CoreDns> {
  const bind = bindTo === undefined ? [] : [`  bind ${bindTo}`];
  return startCoreDns({
    context: 'cloud-map-dns-namespaces',
    dir: join(dir, 'namespace-dns'),
    probeName: `up.${PROBE_ZONE}`,
    ...(bindTo === undefined ? {} : { listen: { host: bindTo, port: 53 } }),
    corefile: (port) =>
      [
        `${PROBE_ZONE}:${port} {`,
        ...bind,
        '  whoami',
        '}',
        `.:${port} {`,
        ...bind,
        '  errors',
        '  auto {',
        `    directory ${zoneDir}`,
        `    reload ${RELOAD}`,
        '  }',
        '}',
        '',
      ].join('\n'),
  });
}
