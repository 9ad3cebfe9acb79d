// Finds credentials where they must never be: component logs, Events and statuses. The credentials are the ones a local
// install handed out (ServiceAccount tokens in kubeconfigs, TLS private keys, the AWS secret key), searched for
// verbatim, plus anything shaped like a private key or a JWT, whoever it belongs to.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

export interface Credential {
  what: string;
  value: string;
}
export interface Text {
  where: string;
  text: string;
}

const SHAPES: Array<[string, RegExp]> = [
  ['a PEM private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/],
  ['a JWT (bearer token)', /eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}/],
];

/**
 * Every file under `dir`, recursively. A folder that goes away while it is read (a real node's containerd removing a
 * snapshot as the testbed stops) is passed over: what is gone cannot leak.
 */
export function filesUnder(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return entries.flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.isFile() ? [join(dir, e.name)] : [],
  );
}

/** Tokens and client keys of every *.kubeconfig under `dir`, and the body of every *.key (PEM) file. */
export function credentialsUnder(dir: string): Credential[] {
  const found: Credential[] = [];
  for (const file of filesUnder(dir)) {
    if (file.endsWith('.kubeconfig')) {
      const config = parse(readFileSync(file, 'utf8')) as {
        users?: Array<{ user?: { token?: string; 'client-key-data'?: string } }>;
      };
      for (const { user } of config.users ?? []) {
        if (user?.token) found.push({ what: `the token in ${file}`, value: user.token });
        if (user?.['client-key-data'])
          found.push({ what: `the client key in ${file}`, value: user['client-key-data'] });
      }
    } else if (file.endsWith('.key')) {
      // A key's first line of base64 is enough to recognise it, whether it is printed with its newlines or without.
      const body = readFileSync(file, 'utf8')
        .split('\n')
        .find((l) => l.length >= 40 && !l.startsWith('-----'));
      if (body) found.push({ what: `the private key ${file}`, value: body });
    }
  }
  return found;
}

/** One line per credential or credential-shaped string found, naming where. */
export function credentialLeaks(texts: readonly Text[], credentials: readonly Credential[]): string[] {
  const leaks: string[] = [];
  for (const { where, text } of texts) {
    for (const c of credentials) if (text.includes(c.value)) leaks.push(`${where} contains ${c.what}`);
    for (const [what, shape] of SHAPES)
      if (shape.test(text)) leaks.push(`${where} contains ${what}: ${shape.exec(text)![0].slice(0, 24)}…`);
  }
  return leaks;
}
