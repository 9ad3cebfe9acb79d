// Runs the webhook server in-process on loopback against one real cluster, with a throwaway CA made by openssl, and
// registers it there (webhook configurations and CRD conversion with url + caBundle) exactly as src/webhook/registration/webhook-configurations.ts
// and src/webhook/crd/definitions.ts produce them. Tests then drive it with kubectl.

import { KubeConfig } from '@kubernetes/client-node';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from '../../support/eventually.ts';
import { createLogger } from '../../../src/observability/log.ts';
import { informerView, type InformerView } from '../../../src/webhook/cluster-caches.ts';
import { customResourceDefinitions } from '../../../src/webhook/crd/definitions.ts';
import { makeDevCertificates, type DevCertificates } from '../../../hack/local/dev-certificates.ts';
import type { ConflictPolicy } from '../../../src/webhook/admission/export-conflicts.ts';
import type { ExternalNamePolicy } from '../../../src/webhook/admission/exported-service.ts';
import {
  MUTATING_CONFIGURATION_NAME,
  VALIDATING_CONFIGURATION_NAME,
  webhookConfigurations,
} from '../../../src/webhook/registration/webhook-configurations.ts';
import { startWebhookServer, type WebhookServer } from '../../../src/webhook/transport/server.ts';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';

export interface KubectlResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * `kubectl --kubeconfig <path> ...args`, with `input` on stdin; never throws on a non-zero exit. Asynchronous on purpose:
 * the webhook server answering the apiserver runs in this process, so a blocking child would deadlock it.
 */
export function kubectl(kubeconfigPath: string, args: readonly string[], input?: string): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlBinary(), ['--kubeconfig', kubeconfigPath, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`kubectl ${args.join(' ')}: ${err.message}`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code ?? -1, stdout, stderr });
    });
    child.stdin.end(input ?? '');
  });
}

/** kubectl that must succeed; returns stdout and stderr (where kubectl prints `Warning:` lines). */
export async function kubectlOk(
  kubeconfigPath: string,
  args: readonly string[],
  input?: string,
): Promise<KubectlResult> {
  const r = await kubectl(kubeconfigPath, args, input);
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.status}): ${r.stderr.trim()}`);
  return r;
}

/** The object etcd holds under `key` (the apiserver's storage, read through etcd's JSON gateway on `etcdUrl`). */
export async function storedObject(etcdUrl: string, key: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${etcdUrl}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from(key).toString('base64') }),
  });
  const value = ((await res.json()) as { kvs?: Array<{ value: string }> }).kvs?.[0]?.value;
  if (value === undefined) throw new Error(`etcd has no ${key}`);
  return JSON.parse(Buffer.from(value, 'base64').toString()) as Record<string, unknown>;
}

export interface RegisteredWebhook {
  server: WebhookServer;
  informers: InformerView;
  certs: DevCertificates;
  /** Removes the webhook configurations, points the CRDs back at the in-cluster Service, stops the server. */
  stop(): Promise<void>;
}

export interface HarnessOptions {
  kubeconfigPath: string;
  policy: ConflictPolicy;
  /** E5: Warn unless told otherwise. */
  externalNamePolicy?: ExternalNamePolicy;
  /** User name treated as the reconcile worker (I6). */
  worker: string;
}

/**
 * Writes each object as given (replace, or create when missing): unlike apply, no field another manager set earlier
 * (such as a conversion `service` where we now want `url`) survives.
 */
async function put(kubeconfigPath: string, objects: readonly unknown[]): Promise<void> {
  for (const object of objects) {
    const json = JSON.stringify(object);
    const replaced = await kubectl(kubeconfigPath, ['replace', '-f', '-'], json);
    if (replaced.status === 0) continue;
    if (!/NotFound|not found/.test(replaced.stderr))
      throw new Error(`kubectl replace failed: ${replaced.stderr.trim()}`);
    await kubectlOk(kubeconfigPath, ['create', '-f', '-'], json);
  }
}

/** Waits until every CRD is Established, so the next kubectl knows the kinds. */
async function waitEstablished(kubeconfigPath: string): Promise<void> {
  const names = customResourceDefinitions().map((c) => `crd/${c.metadata.name}`);
  await kubectlOk(kubeconfigPath, ['wait', '--for=condition=Established', '--timeout=60s', ...names]);
}

export async function startRegisteredWebhook(options: HarnessOptions): Promise<RegisteredWebhook> {
  const dir = mkdtempSync(join(tmpdir(), 'mcs-webhook-it-'));
  const certs = makeDevCertificates(dir);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(options.kubeconfigPath);
  const logger = createLogger('webhook-it', process.env.MCS_LOG_LEVEL ?? 'error');

  // CRDs first (with conversion already aimed at the server we are about to start), so the informers find them.
  const port = await freePortHint();
  const target = { url: `https://127.0.0.1:${port}`, caBundle: certs.caBundle };
  await put(options.kubeconfigPath, customResourceDefinitions(target));
  await waitEstablished(options.kubeconfigPath);

  const informers = informerView(kubeConfig, logger);
  informers.start();
  const server = await startWebhookServer(
    {
      port,
      bindAddress: '127.0.0.1',
      tlsCertFile: certs.certFile,
      tlsKeyFile: certs.keyFile,
      tlsReloadIntervalMs: 500,
      metricsPort: 0,
      conflictPolicy: options.policy,
      externalNamePolicy: options.externalNamePolicy ?? 'Warn',
      writers: { worker: options.worker, deleters: [] },
      maxRequestBytes: 16 << 20,
      shutdownDelayMs: 0,
      shutdownTimeoutMs: 2_000,
      cacheSyncGraceMs: 0,
    },
    informers.view,
    informers,
    logger,
  );
  await eventually('the webhook informer caches to sync', async () => informers.unsynced().length === 0, 30_000);
  await put(options.kubeconfigPath, webhookConfigurations(target));

  return {
    server,
    informers,
    certs,
    async stop() {
      await kubectl(options.kubeconfigPath, [
        'delete',
        '--ignore-not-found',
        `validatingwebhookconfiguration/${VALIDATING_CONFIGURATION_NAME}`,
        `mutatingwebhookconfiguration/${MUTATING_CONFIGURATION_NAME}`,
      ]);
      await informers.stop();
      await server.shutdown();
      await put(options.kubeconfigPath, customResourceDefinitions());
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A port that was free a moment ago: the CRDs need the URL before the server listens. */
async function freePortHint(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
