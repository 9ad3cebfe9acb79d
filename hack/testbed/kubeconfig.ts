// Kubeconfig files with the certificates embedded, so a file can be copied or exported on its own.
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { KeyPair } from './pki.ts';

export interface KubeconfigSpec {
  /** Cluster, user and context are all named after this (the cluster id for the admin kubeconfig). */
  context: string;
  server: string;
  caCert: string;
  client: KeyPair;
}

function base64File(path: string): string {
  return readFileSync(path).toString('base64');
}

export function writeKubeconfig(path: string, spec: KubeconfigSpec): void {
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: spec.context, cluster: { server: spec.server, 'certificate-authority-data': base64File(spec.caCert) } },
    ],
    users: [
      {
        name: spec.context,
        user: {
          'client-certificate-data': base64File(spec.client.cert),
          'client-key-data': base64File(spec.client.key),
        },
      },
    ],
    contexts: [{ name: spec.context, context: { cluster: spec.context, user: spec.context } }],
    'current-context': spec.context,
  };
  writeFileSync(path, stringify(doc), { mode: 0o600 });
}
