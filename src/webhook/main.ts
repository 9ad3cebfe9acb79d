// Entry point of the webhook server: `npm run webhook -- --help`.
// Starts informers on Services, ServiceExports, ServiceImports and ClusterProperties, serves HTTPS at once (unready until
// the caches are synced), and on SIGTERM/SIGINT becomes unready, finishes in-flight requests and exits.

import { ConfigError } from '../config/options.ts';
import { versionText } from '../config/version.ts';
import { loadKubeAccess } from '../kube/kube-access.ts';
import { createLogger } from '../observability/log.ts';
import { informerView } from './cluster-caches.ts';
import { parseWebhookOptions, splitList, webhookHelp } from './options.ts';
import { startWebhookServer } from './transport/server.ts';

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(webhookHelp());
    return;
  }
  if (argv.includes('--version')) {
    console.log(versionText('webhook'));
    return;
  }
  let options;
  try {
    options = parseWebhookOptions(argv);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`mcs-cloudmap webhook: ${err.message}`);
    process.exitCode = 2;
    return;
  }
  const logger = createLogger('webhook', options.logLevel);
  const kubeConfig = await loadKubeAccess(options.kubeconfig);

  const informers = informerView(kubeConfig, logger);
  informers.start();
  const server = await startWebhookServer(
    {
      port: options.port,
      bindAddress: options.bindAddress,
      tlsCertFile: options.tlsCertFile,
      tlsKeyFile: options.tlsKeyFile,
      tlsReloadIntervalMs: options.tlsReloadInterval,
      metricsPort: options.metricsPort,
      conflictPolicy: options.conflictPolicy,
      externalNamePolicy: options.externalNamePolicy,
      writers: { worker: options.workerServiceAccount, deleters: splitList(options.systemDeleters) },
      maxRequestBytes: options.maxRequestBytes,
      shutdownDelayMs: options.shutdownDelay,
      shutdownTimeoutMs: options.shutdownTimeout,
      cacheSyncGraceMs: options.cacheSyncGrace,
    },
    informers.view,
    informers,
    logger,
  );

  const stop = async (signal: string) => {
    logger.info({ event: 'signal', signal }, 'shutting down');
    await server.shutdown();
    await informers.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

main(process.argv.slice(2)).catch((err: unknown) => {
  createLogger('webhook').fatal(
    { event: 'startup-failed', err: (err as Error).message },
    'webhook server failed to start',
  );
  process.exit(1);
});
