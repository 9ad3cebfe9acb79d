// The testbed's stand-in for Route 53 Resolver in the VPC: stock CoreDNS serving the zone files the Cloud Map emulator
// writes for its private DNS namespaces (CloudMapEmulatorOptions.zoneDir, cloudmap_emulator/dns_zones.py) with the
// `auto` plugin, which loads every `db.<zone>` of the directory and reloads one whose SOA serial grew. It listens on
// every address of the host, so a process on the data path's bridge asks it at the host's bridge address.
import { join } from 'node:path';
import { startCoreDns, type CoreDns } from './coredns.ts';

/** Answered by the `whoami` plugin whatever the zones hold: the probe that says the server is up. */
const PROBE_ZONE = 'namespace-dns.probe';

/** How often CoreDNS looks for new zone files and for changed serials (the emulator writes within 0.2 s). */
const RELOAD = '1s';

export function startNamespaceDns(zoneDir: string, dir: string): Promise<CoreDns> {
  return startCoreDns({
    context: 'cloud-map-dns-namespaces',
    dir: join(dir, 'namespace-dns'),
    probeName: `up.${PROBE_ZONE}`,
    corefile: (port) =>
      [
        `${PROBE_ZONE}:${port} {`,
        '  whoami',
        '}',
        `.:${port} {`,
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
