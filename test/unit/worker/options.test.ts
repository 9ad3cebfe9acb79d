import { expect } from 'chai';
import { ConfigError } from '../../../src/config/options.ts';
import { keyOf, parseKey } from '../../../src/worker/objects.ts';
import { namingOf, parseWorkerOptions, workerHelp, workerOptionSpecs } from '../../../src/worker/options.ts';

describe('worker flags', () => {
  it('every flag has an MCS_* environment fallback and appears in --help', () => {
    const help = workerHelp();
    for (const spec of Object.values(workerOptionSpecs)) {
      expect(spec.env).to.match(/^MCS_[A-Z_]+$/);
      expect(help).to.include(`--${spec.flag}  [${spec.env}]`);
    }
  });

  it('reads flags, then the environment, then defaults (quotas merge over the documented ones)', () => {
    const o = parseWorkerOptions(
      ['--poll-interval=500ms', '--rate-limits=RegisterInstance=5', '--cloudmap-quotas=CreateService=7'],
      { MCS_IMPORT_WORKERS: '8', MCS_LEADER_ELECT: 'false' },
    );
    expect(o.pollInterval).to.equal(500);
    expect(o.importWorkers).to.equal(8);
    expect(o.leaderElect).to.equal(false);
    expect(o.rateLimits.RegisterInstance).to.equal(5);
    expect(o.rateLimits.DiscoverInstances).to.equal(undefined);
    expect(o.cloudMapQuotas.CreateService).to.equal(7);
    expect(o.cloudMapQuotas.DiscoverInstances).to.equal(1000);
    expect(o.clusters).to.equal(2);
    expect(o.fullResyncInterval).to.equal(300_000);
    expect(o.cloudMapQuotaShare).to.equal(80);
    expect(parseWorkerOptions([], { MCS_CLOUDMAP_QUOTA_SHARE: '100' }).cloudMapQuotaShare).to.equal(100);
  });

  it('bad input is a ConfigError that says what is accepted', () => {
    expect(() => parseWorkerOptions(['--import-workers=0'], {})).to.throw(ConfigError, /from 1 to 256/);
    expect(() => parseWorkerOptions(['--log-level=loud'], {})).to.throw(ConfigError, /trace, debug, info, warn, error/);
    expect(() => parseWorkerOptions(['--cloudmap-quota-share=0'], {})).to.throw(
      ConfigError,
      /--cloudmap-quota-share: expected a whole number from 1 to 100/,
    );
  });

  it('DNS namespaces: the type, domain and VPC fit together, or the worker does not start', () => {
    const o = parseWorkerOptions(
      ['--cloudmap-namespace-type=dns', '--dns-namespace-domain=mcs.example.internal', '--dns-namespace-vpc=vpc-1'],
      {},
    );
    expect(namingOf(o).cloudMapName('prod')).to.equal('prod.mcs.example.internal');
    expect(namingOf(o).dns('prod')).to.deep.equal({
      domain: 'mcs.example.internal',
      vpc: 'vpc-1',
      recordTypes: 'A',
      ttlSeconds: 10,
    });
    expect(namingOf(parseWorkerOptions([], {})).cloudMapName('prod')).to.equal('prod');
    expect(() => parseWorkerOptions(['--cloudmap-namespace-type=dns'], {})).to.throw(
      ConfigError,
      /domain "" is empty \(set --dns-namespace-domain and --dns-namespace-vpc\)/,
    );
    expect(() =>
      parseWorkerOptions(['--dns-namespaces=payments', '--dns-namespace-domain=mcs.example.internal'], {}),
    ).to.throw(ConfigError, /--dns-namespace-vpc: a DNS namespace is created in a VPC/);
  });

  it('dead clusters: heartbeat every 30s, withdrawn after 3m, never reaped unless asked; the three must fit together', () => {
    const o = parseWorkerOptions([], {});
    expect([o.heartbeatInterval, o.deadClusterTtl, o.reapDeadClustersAfter]).to.deep.equal([30_000, 180_000, 0]);
    expect(
      parseWorkerOptions(['--dead-cluster-ttl=12s', '--heartbeat-interval=2s', '--reap-dead-clusters-after=20s'], {})
        .reapDeadClustersAfter,
    ).to.equal(20_000);
    expect(parseWorkerOptions([], { MCS_DEAD_CLUSTER_TTL: '0s' }).deadClusterTtl).to.equal(0);
    expect(() => parseWorkerOptions(['--heartbeat-interval=500ms'], {})).to.throw(ConfigError, /at least 1s/);
    expect(() => parseWorkerOptions(['--dead-cluster-ttl=50s'], {})).to.throw(
      ConfigError,
      /at least twice --heartbeat-interval \(60000ms\)/,
    );
    expect(() => parseWorkerOptions(['--reap-dead-clusters-after=1m'], {})).to.throw(
      ConfigError,
      /at least --dead-cluster-ttl/,
    );
  });

  it('queue keys are namespace/name', () => {
    expect(parseKey(keyOf('demo', 'nginx-hello'))).to.deep.equal({ namespace: 'demo', name: 'nginx-hello' });
    expect(() => parseKey('nginx-hello')).to.throw(/namespace\/name/);
  });

  it('Cloud Map deadlines: connect 3s, call 15s, liveness 5m; liveness must outlast one call with its retries', () => {
    const o = parseWorkerOptions([], {});
    expect([o.cloudMapConnectTimeout, o.cloudMapCallTimeout, o.progressTimeout]).to.deep.equal([
      3_000, 15_000, 300_000,
    ]);
    const short = parseWorkerOptions(['--cloudmap-call-timeout=5s', '--progress-timeout=2m'], {
      MCS_CLOUDMAP_CONNECT_TIMEOUT: '1s',
    });
    expect([short.cloudMapConnectTimeout, short.cloudMapCallTimeout, short.progressTimeout]).to.deep.equal([
      1_000, 5_000, 120_000,
    ]);
    expect(() => parseWorkerOptions(['--cloudmap-call-timeout=500ms'], {})).to.throw(
      ConfigError,
      /--cloudmap-call-timeout: at least 1s/,
    );
    expect(() => parseWorkerOptions(['--cloudmap-connect-timeout=10ms'], {})).to.throw(
      ConfigError,
      /--cloudmap-connect-timeout: at least 100ms/,
    );
    // 8 attempts of 30 s and 7 backoffs of at most 0.2+0.4+...+10 s: 240 s + 22.6 s.
    expect(() => parseWorkerOptions(['--cloudmap-call-timeout=30s', '--progress-timeout=4m'], {})).to.throw(
      ConfigError,
      /--progress-timeout: longer than one Cloud Map call with its retries at --cloudmap-call-timeout 30000ms \(262600ms\), got 240000ms/,
    );
  });
});
