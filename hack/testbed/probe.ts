// One-shot HTTP(S) GETs for health checks of the testbed's components.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KeyPair } from './pki.ts';

export interface ProbeResult {
  status: number;
  body: string;
}

export interface ProbeTls {
  /** CA that signed the server's certificate. */
  ca: string;
  /** Client certificate, for servers that require one. */
  client?: KeyPair;
}

/** GET `url` with a short timeout; TLS material is read from files. Rejects on connection errors. */
export function probe(url: string, tls?: ProbeTls, timeoutMs = 2000): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const options = {
      method: 'GET',
      timeout: timeoutMs,
      agent: false as const,
      ...(tls && {
        ca: readFileSync(tls.ca),
        ...(tls.client && { cert: readFileSync(tls.client.cert), key: readFileSync(tls.client.key) }),
      }),
    };
    const req = (url.startsWith('https:') ? httpsRequest : httpRequest)(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`GET ${url}: ${err.message}`)));
    req.end();
  });
}

/** True when GET `url` answers 200. */
export async function isOk(url: string, tls?: ProbeTls): Promise<boolean> {
  const res = await probe(url, tls);
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
  return true;
}
