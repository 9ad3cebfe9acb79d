import { expect } from 'chai';
import { boolOption, ConfigError, durationOption, enumOption, intOption, parseOptions, rateMapOption, stringOption } from '../../../src/config/options.ts';

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
    expect(parseOptions(specs, [], {})).to.deep.equal({ port: 9443, name: 'x', leader: true, policy: 'Warn', poll: 1000, rates: { DiscoverInstances: 100 } });
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
    const v = parseOptions(specs, ['--poll-interval=250ms', '--rate-limits=RegisterInstance=5, DiscoverInstances=7'], {});
    expect(v.poll).to.equal(250);
    expect(v.rates).to.deep.equal({ DiscoverInstances: 7, RegisterInstance: 5 });
    expect(parseOptions(specs, [], { T_POLL: '5m' }).poll).to.equal(300_000);
  });
  it('says what is accepted on bad input', () => {
    expect(() => parseOptions(specs, ['--port=0'], {})).to.throw(ConfigError, /--port: expected a whole number from 1 to 65535, got "0"/);
    expect(() => parseOptions(specs, ['--nope=1'], {})).to.throw(ConfigError, /unknown flag --nope/);
    expect(() => parseOptions(specs, ['--conflict-policy=Maybe'], {})).to.throw(ConfigError, /one of Warn, Reject/);
    expect(() => parseOptions(specs, ['--poll-interval=soon'], {})).to.throw(ConfigError, /duration/);
    expect(() => parseOptions(specs, ['stray'], {})).to.throw(ConfigError, /unexpected argument/);
    expect(() => parseOptions(specs, ['--rate-limits=X=-1'], {})).to.throw(ConfigError, /Api=requestsPerSecond/);
  });
});
