// Which Cloud Map namespace holds a Kubernetes namespace: the HTTP default, DNS namespaces for all or some, the way
// back from a Cloud Map name, and the settings a DNS namespace cannot go without.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  domainProblem,
  HTTP_NAMING,
  namespaceNaming,
  type DnsNamespaceSettings,
} from '../../../src/core/namespace-naming.ts';

const DNS: DnsNamespaceSettings = { domain: 'mcs.example.internal', vpc: 'vpc-0a1b', recordTypes: 'A', ttlSeconds: 10 };
const MARKER = 'mcs-cloudmap.clusterset1';

describe('core: namespace naming (HTTP or private DNS namespaces)', () => {
  it('without DNS namespaces, every namespace is the HTTP namespace of its name', () => {
    const naming = namespaceNaming({ type: 'http', dnsNamespaces: [] });
    expect(naming).to.equal(HTTP_NAMING);
    expect(naming.cloudMapName('prod')).to.equal('prod');
    expect(naming.namespaceOf('prod')).to.equal('prod');
    expect(naming.dns('prod')).to.equal(undefined);
  });

  it('ClusterSet-wide: namespace ns is <ns>.<domain>; our markers stay an HTTP namespace of their own name', () => {
    const naming = namespaceNaming({ type: 'dns', dnsNamespaces: [], dns: DNS });
    const table: [string, string, DnsNamespaceSettings | undefined][] = [
      ['prod', 'prod.mcs.example.internal', DNS],
      ['kube-public', 'kube-public.mcs.example.internal', DNS],
      [MARKER, MARKER, undefined],
    ];
    for (const [namespace, cloudMap, dns] of table) {
      expect(naming.cloudMapName(namespace), namespace).to.equal(cloudMap);
      expect(naming.namespaceOf(cloudMap), cloudMap).to.equal(namespace);
      expect(naming.dns(namespace), namespace).to.deep.equal(dns);
    }
    // An HTTP namespace `prod` (from before the switch) stands for nothing: `prod` lives in prod.<domain> now.
    expect(naming.namespaceOf('prod')).to.equal(undefined);
    // Another domain's namespace is not one of ours either way.
    expect(naming.namespaceOf('prod.other.internal')).to.equal('prod.other.internal');
  });

  it('per namespace: only the listed namespaces are DNS ones', () => {
    const naming = namespaceNaming({ type: 'http', dnsNamespaces: ['payments'], dns: DNS });
    expect(naming.cloudMapName('payments')).to.equal('payments.mcs.example.internal');
    expect(naming.cloudMapName('web')).to.equal('web');
    expect(naming.namespaceOf('payments.mcs.example.internal')).to.equal('payments');
    expect(naming.namespaceOf('web')).to.equal('web');
    // Not a name this naming gives `web`: it stands for itself, which no Kubernetes namespace is called (dots).
    expect(naming.namespaceOf('web.mcs.example.internal')).to.equal('web.mcs.example.internal');
    expect(naming.namespaceOf('payments')).to.equal(undefined);
    expect(naming.dns('web')).to.equal(undefined);
  });

  it('property: the way back finds the namespace the way there named, for every Kubernetes namespace name', () => {
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/);
    fc.assert(
      fc.property(label, fc.array(label), fc.constantFrom('http' as const, 'dns' as const), (ns, listed, type) => {
        const naming = namespaceNaming({ type, dnsNamespaces: listed, dns: DNS });
        expect(naming.namespaceOf(naming.cloudMapName(ns))).to.equal(ns);
        expect(naming.dns(ns) !== undefined).to.equal(type === 'dns' || listed.includes(ns));
      }),
    );
  });

  it('a DNS namespace without a usable domain is refused with what to fix', () => {
    const cases: [Partial<DnsNamespaceSettings> | undefined, RegExp][] = [
      [undefined, /needs a domain/],
      [{ domain: '' }, /domain "" is empty/],
      [{ domain: 'Mcs.Example' }, /"Mcs", which is not a lowercase DNS label/],
      [{ domain: 'a..b' }, /"", which is not a lowercase DNS label/],
      [{ domain: `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(10)}` }, /characters long/],
    ];
    for (const [change, message] of cases) {
      const dns = change === undefined ? undefined : { ...DNS, ...change };
      expect(() => namespaceNaming({ type: 'dns', dnsNamespaces: [], ...(dns && { dns }) }), message.source).to.throw(
        message,
      );
    }
    expect(() => namespaceNaming({ type: 'http', dnsNamespaces: ['Not_A_Namespace'], dns: DNS })).to.throw(
      /"Not_A_Namespace" is not a Kubernetes namespace name/,
    );
    expect(domainProblem('mcs.example.internal')).to.equal(undefined);
  });
});
