import { expect } from 'chai';
import { ConfigError } from '../../../src/config/options.ts';
import { keyOf, parseKey } from '../../../src/worker/objects.ts';
import { parseWorkerOptions, workerHelp, workerOptionSpecs } from '../../../src/worker/options.ts';

describe('worker flags', () => {
  it('every flag has an MCS_* environment fallback and appears in --help', () => {
    const help = workerHelp();
    for (const spec of Object.values(workerOptionSpecs)) {
      expect(spec.env).to.match(/^MCS_[A-Z_]+$/);
      expect(help).to.include(`--${spec.flag}  [${spec.env}]`);
    }
  });

  it('reads flags, then the environment, then defaults (quotas merge over the documented ones)', () => {
    const o = parseWorkerOptions(['--poll-interval=500ms', '--rate-limits=RegisterInstance=5', '--cloudmap-quotas=CreateService=7'], { MCS_WORKERS: '8', MCS_LEADER_ELECT: 'false' });
    expect(o.pollInterval).to.equal(500);
    expect(o.workers).to.equal(8);
    expect(o.leaderElect).to.equal(false);
    expect(o.rateLimits.RegisterInstance).to.equal(5);
    expect(o.rateLimits.DiscoverInstances).to.equal(undefined);
    expect(o.cloudMapQuotas.CreateService).to.equal(7);
    expect(o.cloudMapQuotas.DiscoverInstances).to.equal(1000);
    expect(o.clusters).to.equal(2);
    expect(o.fullResyncInterval).to.equal(300_000);
  });

  it('bad input is a ConfigError that says what is accepted', () => {
    expect(() => parseWorkerOptions(['--workers=0'], {})).to.throw(ConfigError, /from 1 to 256/);
    expect(() => parseWorkerOptions(['--log-level=loud'], {})).to.throw(ConfigError, /trace, debug, info, warn, error/);
  });

  it('queue keys are namespace/name', () => {
    expect(parseKey(keyOf('demo', 'nginx-hello'))).to.deep.equal({ namespace: 'demo', name: 'nginx-hello' });
    expect(() => parseKey('nginx-hello')).to.throw(/namespace\/name/);
  });
});
