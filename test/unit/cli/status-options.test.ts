// `mcs-cloudmap status` looks for a namespace's services where the worker put them: the same DNS-namespace flags.
import { expect } from 'chai';
import { ConfigError } from '../../../src/config/options.ts';
import { parseStatusOptions, statusNaming } from '../../../src/cli/status-options.ts';

describe('status flags: the Cloud Map namespace of each Kubernetes namespace', () => {
  it('reads the HTTP namespace of the same name by default, <ns>.<domain> with the worker’s DNS settings', () => {
    expect(statusNaming(parseStatusOptions([], {})).cloudMapName('prod')).to.equal('prod');
    const env = { MCS_CLOUDMAP_NAMESPACE_TYPE: 'dns', MCS_DNS_NAMESPACE_DOMAIN: 'mcs.example.internal' };
    expect(statusNaming(parseStatusOptions([], env)).cloudMapName('prod')).to.equal('prod.mcs.example.internal');
    const some = parseStatusOptions(['--dns-namespaces=payments', '--dns-namespace-domain=mcs.example.internal'], {});
    expect([statusNaming(some).cloudMapName('payments'), statusNaming(some).cloudMapName('web')]).to.deep.equal([
      'payments.mcs.example.internal',
      'web',
    ]);
  });

  it('a DNS type without a usable domain is a ConfigError naming the flag (no VPC needed to read)', () => {
    expect(() => parseStatusOptions(['--cloudmap-namespace-type=dns'], {})).to.throw(
      ConfigError,
      /--dns-namespace-domain: the DNS namespaces' domain "" is empty/,
    );
  });
});
