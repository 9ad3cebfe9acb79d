// A serving certificate and key from files, re-read when they change (after controller-runtime's certwatcher). The
// files are typically a Secret volume that cert-manager rewrites. A new pair goes to `apply` (an HTTPS server's
// setSecureContext): connections already open keep their handshake, new ones get the new certificate, so rotation
// needs no restart and drops no request. A half-written pair (cert and key not matching yet) is skipped and retried on
// the next check. Any process that serves TLS uses it; today that is the webhook server (the worker serves none).

import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { Logger } from '../observability/log.ts';

export interface KeyPair {
  cert: string;
  key: string;
}

export function readKeyPair(certFile: string, keyFile: string): KeyPair {
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(
        `cannot read the TLS ${what} file ${file}: ${(err as Error).message}; set --tls-cert-file and --tls-key-file`,
        { cause: err },
      );
    }
  };
  const pair = { cert: read(certFile, 'certificate'), key: read(keyFile, 'key') };
  try {
    createSecureContext(pair);
  } catch (err) {
    throw new Error(`TLS certificate ${certFile} and key ${keyFile} are not a usable pair: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return pair;
}

/** notAfter of the first certificate in `pem`, Unix seconds. */
export function notAfter(pem: string): number {
  return Math.floor(new Date(new X509Certificate(pem).validTo).getTime() / 1000);
}

export interface CertificateWatch {
  stop(): void;
}

/**
 * Checks the files every `intervalMs`; calls `apply` with each new valid pair. Errors are logged once per distinct
 * message so a broken file does not flood the log.
 */
export function watchKeyPair(
  certFile: string,
  keyFile: string,
  current: KeyPair,
  intervalMs: number,
  logger: Logger,
  apply: (pair: KeyPair) => void,
): CertificateWatch {
  let last = current;
  let lastError = '';
  const timer = setInterval(() => {
    try {
      const cert = readFileSync(certFile, 'utf8');
      const key = readFileSync(keyFile, 'utf8');
      if (cert === last.cert && key === last.key) return;
      const pair = readKeyPair(certFile, keyFile);
      apply(pair);
      last = pair;
      lastError = '';
      logger.info(
        { event: 'tls-reloaded', certFile, notAfter: new Date(notAfter(pair.cert) * 1000).toISOString() },
        'serving certificate reloaded',
      );
    } catch (err) {
      const message = (err as Error).message;
      if (message !== lastError)
        logger.warn({ event: 'tls-reload-failed', certFile, err: message }, 'keeping the current certificate');
      lastError = message;
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
