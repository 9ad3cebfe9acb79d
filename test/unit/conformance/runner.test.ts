// The pure parts of `npm run conformance` around the suite: its command line, the suite's flags, the merged
// kubeconfig, the implementation URL, the cluster DNS version.
import { expect } from 'chai';
import { parse } from 'yaml';
import { parseConformanceArgs } from '../../../hack/conformance/args.ts';
import { coreDnsVersionIn } from '../../../hack/conformance/environment.ts';
import { repositoryUrl } from '../../../hack/conformance/identity.ts';
import { mergeKubeconfigs } from '../../../hack/conformance/kubeconfig.ts';
import { finishedCases, suiteArgs } from '../../../hack/conformance/run-suite.ts';

const IMPL = {
  organization: 'Example',
  project: 'mcs-cloudmap',
  version: '0.1.0+0123456789ab',
  url: 'https://example.com/x',
};

function kubeconfig(name: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters:\n  - name: ${name}\n    cluster:\n      server: https://127.0.0.1:1${name.length}`,
    `users:\n  - name: ${name}\n    user:\n      client-certificate-data: AAAA`,
    `contexts:\n  - name: ${name}\n    context:\n      cluster: ${name}\n      user: ${name}`,
    `current-context: ${name}`,
    '',
  ].join('\n');
}

describe('npm run conformance', () => {
  describe('command line', () => {
    it('runs once on one ClusterSet by default', () => {
      expect(parseConformanceArgs([])).to.deep.equal({
        runs: 1,
        fresh: false,
        renderDocs: false,
        keepLogs: false,
        ipFamilies: 'IPv4',
      });
    });

    it('takes --runs, --fresh, --keep-logs and a label filter, with = or a separate value', () => {
      expect(
        parseConformanceArgs(['--runs', '3', '--fresh', '--label-filter=Required && !DNS', '--keep-logs']),
      ).to.deep.equal({
        runs: 3,
        fresh: true,
        renderDocs: false,
        keepLogs: true,
        labelFilter: 'Required && !DNS',
        ipFamilies: 'IPv4',
      });
      expect(parseConformanceArgs(['--runs=2', '--label-filter', 'Connectivity'])).to.include({
        runs: 2,
        labelFilter: 'Connectivity',
      });
    });

    it('refuses what it does not know, with the usage', () => {
      expect(() => parseConformanceArgs(['--runs', '0'])).to.throw(
        /--runs takes a whole number of at least 1, not "0"; usage:/,
      );
      expect(() => parseConformanceArgs(['--runs', 'two'])).to.throw(/not "two"/);
      expect(() => parseConformanceArgs(['--label-filter'])).to.throw(/--label-filter needs a value/);
      expect(() => parseConformanceArgs(['--focus', 'x'])).to.throw(/unknown argument "--focus"/);
      expect(() => parseConformanceArgs(['--render-docs', '--runs', '2'])).to.throw(
        /--render-docs takes no other argument/,
      );
      expect(parseConformanceArgs(['--ip-families', 'dual'])).to.include({ ipFamilies: 'dual' });
      expect(parseConformanceArgs(['--render-docs', '--ip-families=IPv6'])).to.include({
        renderDocs: true,
        ipFamilies: 'IPv6',
      });
      expect(() => parseConformanceArgs(['--ip-families', 'IPv5'])).to.throw(
        /--ip-families takes IPv4, IPv6, dual, not "IPv5"/,
      );
    });
  });

  it('gives the suite both contexts, both reports and the implementation flags, and the label filter only when set', () => {
    const args = suiteArgs({ kubeconfig: '/tmp/k', contexts: ['cls1', 'cls2'], implementation: IMPL });
    const flag = (name: string) => args[args.indexOf(name) + 1];
    expect(flag('-contexts')).to.equal('cls1,cls2');
    expect(flag('-kubeconfig')).to.equal('/tmp/k');
    expect(flag('-ginkgo.json-report')).to.equal('report.json');
    expect(flag('-ginkgo.junit-report')).to.equal('junit.xml');
    expect([flag('-organization'), flag('-project'), flag('-version'), flag('-url')]).to.deep.equal([
      'Example',
      'mcs-cloudmap',
      '0.1.0+0123456789ab',
      'https://example.com/x',
    ]);
    expect(args).to.not.include('-ginkgo.label-filter');
    const filtered = suiteArgs({
      kubeconfig: '/tmp/k',
      contexts: ['cls1'],
      implementation: IMPL,
      labelFilter: 'Required',
    });
    expect(filtered.slice(-2)).to.deep.equal(['-ginkgo.label-filter', 'Required']);
  });

  it('counts the cases Ginkgo finished from its verbose output', () => {
    const out = [
      '[It] should be inaccessible',
      '• [12.3 seconds]',
      '------',
      '• [FAILED] [61.0 seconds]',
      'S [SKIPPED] [0.0 seconds]',
      '  • not a case',
    ].join('\n');
    expect(finishedCases(out)).to.equal(3);
  });

  it("merges the clusters' kubeconfigs into one with a context per cluster", () => {
    const merged = parse(mergeKubeconfigs([kubeconfig('cls1'), kubeconfig('cls2')])) as {
      contexts: { name: string }[];
      clusters: { name: string; cluster: { server: string } }[];
      users: unknown[];
      'current-context': string;
    };
    expect(merged.contexts.map((c) => c.name)).to.deep.equal(['cls1', 'cls2']);
    expect(merged.clusters.map((c) => c.name)).to.deep.equal(['cls1', 'cls2']);
    expect(merged.users).to.have.length(2);
    expect(merged['current-context']).to.equal('cls1');
    expect(() => mergeKubeconfigs([kubeconfig('cls1'), kubeconfig('cls1')])).to.throw(
      /two kubeconfigs name the same cluster "cls1"/,
    );
    expect(() => mergeKubeconfigs(['apiVersion: v1\nkind: Config\n'])).to.throw(/no context/);
  });

  it("turns package.json's repository into the URL the report names", () => {
    expect(repositoryUrl('git+https://github.com/acme/mcs-cloudmap.git')).to.equal(
      'https://github.com/acme/mcs-cloudmap',
    );
    expect(repositoryUrl({ url: 'https://github.com/acme/mcs-cloudmap' })).to.equal(
      'https://github.com/acme/mcs-cloudmap',
    );
    expect(repositoryUrl('github:acme/mcs-cloudmap')).to.equal('https://github.com/acme/mcs-cloudmap');
    expect(repositoryUrl('acme/mcs-cloudmap')).to.equal('https://github.com/acme/mcs-cloudmap');
    expect(repositoryUrl(undefined)).to.equal(undefined);
  });

  it('reads the cluster DNS version from the start-up lines CoreDNS logs', () => {
    expect(coreDnsVersionIn('.:53 on 172.31.0.11\nCoreDNS-1.11.4\nlinux/amd64, go1.26.8, \n')).to.equal(
      'CoreDNS-1.11.4',
    );
    expect(coreDnsVersionIn('[INFO] plugin/reload: Running configuration SHA512')).to.equal(undefined);
  });
});
