// A throwaway CA and a serving certificate signed by it, made with openssl: for tests, the benchmark and the demo, where
// the webhook runs outside the cluster at https://127.0.0.1:<port> and cert-manager is not there to issue one.

import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DevCertificates {
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The CA in base64 PEM, as webhook configurations and CRD conversion stanzas take it. */
  caBundle: string;
}

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`openssl ${args[0]} failed: ${stderr.trim() || (err as Error).message}`, { cause: err });
  }
}

/**
 * Writes ca.crt/ca.key into `dir` (unless `ca` names an existing CA to reuse) and `<name>.crt`/`<name>.key` for the
 * given IP addresses and DNS names. ECDSA P-256 keys keep this fast on a small machine.
 */
export function makeDevCertificates(
  dir: string,
  hosts: readonly string[] = ['127.0.0.1', 'localhost'],
  name = 'tls',
  ca?: { caFile: string; caKeyFile: string },
): DevCertificates {
  const caFile = ca?.caFile ?? join(dir, 'ca.crt');
  const caKeyFile = ca?.caKeyFile ?? join(dir, 'ca.key');
  if (!ca) {
    openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      caKeyFile,
      '-out',
      caFile,
      '-days',
      '7',
      '-subj',
      '/CN=mcs-cloudmap-dev-ca',
    ]);
  }
  const keyFile = join(dir, `${name}.key`);
  const certFile = join(dir, `${name}.crt`);
  const csr = join(dir, `${name}.csr`);
  const ext = join(dir, `${name}.ext`);
  const san = hosts.map((h) => (/^[\d.]+$|:/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
  writeFileSync(ext, `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    csr,
    '-subj',
    `/CN=${hosts[0] ?? name}`,
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    caFile,
    '-CAkey',
    caKeyFile,
    '-CAcreateserial',
    '-out',
    certFile,
    '-days',
    '7',
    '-extfile',
    ext,
  ]);
  return { caFile, certFile, keyFile, caBundle: Buffer.from(readFileSync(caFile)).toString('base64') };
}
