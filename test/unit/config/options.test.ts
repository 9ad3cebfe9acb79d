import { expect } from 'chai';
import {
  boolOption,
  ConfigError,
  durationOption,
  enumOption,
  formatHelp,
  intOption,
  parseOptions,
  rateMapOption,
  renamed,
  stringOption,
} from '../../../src/config/options.ts';
import { METRICS_OFF, parseWebhookOptions } from '../../../src/webhook/options.ts';
import { parseWorkerOptions } from '../../../src/worker/options.ts';

/** The DeprecationWarnings `run` emits (Node.js emits them on the next tick). */
async function deprecations(run: () => void): Promise<string[]> {
  const seen: string[] = [];
  const listener = (w: Error) => {
    if (w.name === 'DeprecationWarning') seen.push(w.message);
  };
  process.on('warning', listener);
  try {
    run();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return seen;
}

const specs = {
  port: intOption('port', 'T_PORT', 9443, 'port', 1, 65535),
  name: stringOption('name', 'T_NAME', 'x', 'name'),
  leader: boolOption('leader-elect', 'T_LEADER', true, 'leader'),
  policy: enumOption('conflict-policy', 'T_POLICY', 'Warn', ['Warn', 'Reject'] as const, 'policy'),
  poll: durationOption('poll-interval', 'T_POLL', 1000, 'poll'),
  rates: rateMapOption('rate-limits', 'T_RATES', { DiscoverInstances: 100 }, 'rates'),
};

describe('config options', () => {
  it('uses defaults when neither flag nor env is given', () => {
    expect(parseOptions(specs, [], {})).to.deep.equal({
      port: 9443,
      name: 'x',
      leader: true,
      policy: 'Warn',
      poll: 1000,
      rates: { DiscoverInstances: 100 },
    });
  });
  it('prefers the flag over the environment', () => {
    const v = parseOptions(specs, ['--port=1234', '--name', 'y'], { T_PORT: '99', T_NAME: 'z', T_POLICY: 'reject' });
    expect(v.port).to.equal(1234);
    expect(v.name).to.equal('y');
    expect(v.policy).to.equal('Reject');
  });
  it('treats a bare boolean flag as true and parses false', () => {
    expect(parseOptions(specs, ['--leader-elect', '--port', '1'], {}).leader).to.equal(true);
    expect(parseOptions(specs, ['--leader-elect=false'], {}).leader).to.equal(false);
  });
  it('parses durations and rate maps', () => {
    const v = parseOptions(
      specs,
      ['--poll-interval=250ms', '--rate-limits=RegisterInstance=5, DiscoverInstances=7'],
      {},
    );
    expect(v.poll).to.equal(250);
    expect(v.rates).to.deep.equal({ DiscoverInstances: 7, RegisterInstance: 5 });
    expect(parseOptions(specs, [], { T_POLL: '5m' }).poll).to.equal(300_000);
  });
  it('says what is accepted on bad input', () => {
    expect(() => parseOptions(specs, ['--port=0'], {})).to.throw(
      ConfigError,
      /--port: expected a whole number from 1 to 65535, got "0"/,
    );
    expect(() => parseOptions(specs, ['--nope=1'], {})).to.throw(ConfigError, /unknown flag --nope/);
    expect(() => parseOptions(specs, ['--conflict-policy=Maybe'], {})).to.throw(ConfigError, /one of Warn, Reject/);
    expect(() => parseOptions(specs, ['--poll-interval=soon'], {})).to.throw(ConfigError, /duration/);
    expect(() => parseOptions(specs, ['stray'], {})).to.throw(ConfigError, /unexpected argument/);
    expect(() => parseOptions(specs, ['--rate-limits=X=-1'], {})).to.throw(ConfigError, /Api=requestsPerSecond/);
  });

  it('reads a renamed option under its old flag and variable, warning once per spelling and saying what to use', async () => {
    const renamedSpecs = {
      jobs: renamed(intOption('import-jobs', 'T_IMPORT_JOBS', 4, 'jobs'), {
        flag: 'jobs',
        env: 'T_JOBS',
        removedIn: '0.3.0',
      }),
    };
    const warned = await deprecations(() => {
      expect(parseOptions(renamedSpecs, ['--jobs=7'], {}).jobs).to.equal(7);
      expect(parseOptions(renamedSpecs, [], { T_JOBS: '5' }).jobs).to.equal(5);
      expect(
        parseOptions(renamedSpecs, [], { T_JOBS: '5', T_IMPORT_JOBS: '6' }).jobs,
        'the new variable wins',
      ).to.equal(6);
      expect(parseOptions(renamedSpecs, ['--jobs=8'], {}).jobs).to.equal(8);
    });
    expect(warned).to.deep.equal([
      '--jobs is deprecated and stops working in 0.3.0: use --import-jobs',
      'T_JOBS is deprecated and stops working in 0.3.0: use T_IMPORT_JOBS',
    ]);
    expect(formatHelp('t', renamedSpecs)).to.include('Deprecated spellings, read until 0.3.0: --jobs, T_JOBS.');
  });
});

describe('renamed flags of the processes (deprecated spellings read until 0.3.0)', () => {
  it('--workers / MCS_WORKERS are --import-workers / MCS_IMPORT_WORKERS, beside --export-workers', async () => {
    const warned = await deprecations(() => {
      expect(parseWorkerOptions(['--workers=9'], {}).importWorkers).to.equal(9);
      expect(parseWorkerOptions([], { MCS_WORKERS: '7' }).importWorkers).to.equal(7);
    });
    expect(warned).to.have.length(2);
    expect(parseWorkerOptions(['--import-workers=5'], {}).importWorkers).to.equal(5);
  });

  it('LOG_LEVEL is MCS_LOG_LEVEL, like every other variable, in both processes', () => {
    expect(parseWorkerOptions([], { LOG_LEVEL: 'debug' }).logLevel).to.equal('debug');
    expect(parseWebhookOptions([], { LOG_LEVEL: 'warn', MCS_LOG_LEVEL: 'error' }).logLevel).to.equal('error');
  });

  it('the webhook\'s --metrics-port turns off with "off"; 0, which picks a free port in the worker, still turns it off with a warning', async () => {
    expect(parseWebhookOptions(['--metrics-port=off'], {}).metricsPort).to.equal(METRICS_OFF);
    const warned = await deprecations(() =>
      expect(parseWebhookOptions([], { MCS_METRICS_PORT: '0' }).metricsPort).to.equal(METRICS_OFF),
    );
    expect(warned).to.deep.equal([
      '--metrics-port=0 to turn the listener off is deprecated and stops working in 0.3.0: use --metrics-port=off',
    ]);
    expect(parseWebhookOptions(['--metrics-port=9090'], {}).metricsPort).to.equal(9090);
    expect(parseWorkerOptions(['--metrics-port=0'], {}).metricsPort, 'the worker: any free port').to.equal(0);
  });
});
