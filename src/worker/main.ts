// Entry point of the reconcile worker: `npm run worker -- --help`. Exits 2 on bad flags, 1 when it cannot start; on
// SIGTERM or SIGINT it shuts down gracefully (a second signal exits at once).
import { ConfigError } from '../config/options.ts';
import { versionText } from '../config/version.ts';
import { createLogger } from '../observability/log.ts';
import { parseWorkerOptions, workerHelp } from './options.ts';
import { startWorker } from './worker.ts';

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  process.stdout.write(`${workerHelp()}\n`);
  process.exit(0);
}
if (argv.includes('--version')) {
  process.stdout.write(`${versionText('worker')}\n`);
  process.exit(0);
}

let options;
try {
  options = parseWorkerOptions(argv);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`mcs-cloudmap worker: ${err.message}\n`);
  process.exit(2);
}

const log = createLogger('worker', options.logLevel);
let worker;
try {
  worker = await startWorker(options, log);
} catch (err) {
  log.fatal(
    { event: 'start-failed', err: err instanceof Error ? err.message : String(err) },
    'the worker could not start',
  );
  process.exit(1);
}

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ event: 'shutdown', signal }, 'shutting down');
    worker.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error(
          { event: 'shutdown-failed', err: err instanceof Error ? err.message : String(err) },
          'shutdown failed',
        );
        process.exit(1);
      },
    );
  });
}
