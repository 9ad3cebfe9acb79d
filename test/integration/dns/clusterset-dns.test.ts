// D1 and D2 on the testbed: our CoreDNS build (dns/, the clusterset plugin) answers clusterset.local from ServiceImports
// and MCS EndpointSlices written by hand with the admin kubeconfig of cluster 1 (no webhook, no worker in this suite).
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { serviceAccountKubeconfig } from '../../../hack/local/kubectl.ts';
import { startCoreDns, type CoreDns, type TestCluster } from '../../../hack/testbed/index.ts';
import { waitFor } from '../../../hack/testbed/wait.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { query, type DnsReply } from '../../support/dns-client.ts';
import { createNamespace, deleteNamespace } from '../../support/kube.ts';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';

const NS = 'dns-clusterset';
const ZONE = 'clusterset.local';
const ROOT = join(import.meta.dirname, '../../..');
const CRDS = ['crds/serviceimports.yaml', 'crds/serviceexports.yaml', 'crds/clusterproperties.yaml'];

function kubectl(cluster: TestCluster, args: string[], input?: object[]): string {
  const stdin = input?.map((o) => stringify(o)).join('---\n');
  try {
    return execFileSync(kubectlBinary(), ['--kubeconfig', cluster.kubeconfigPath, '--context', cluster.context, ...args],
      { cwd: ROOT, encoding: 'utf8', input: stdin, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (err) {
    throw new Error(`kubectl ${args.join(' ')} on ${cluster.context}: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`);
  }
}

function serviceImport(name: string, type: 'ClusterSetIP' | 'Headless', ports: object[], ips: string[] = []): object {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1beta1', kind: 'ServiceImport', metadata: { name, namespace: NS },
    spec: { type, ports, ...(ips.length > 0 ? { ips } : {}) },
  };
}

interface TestEndpoint { ip: string; hostname?: string; ready: boolean }

interface SliceOptions { addressType?: 'IPv4' | 'IPv6'; ports?: object[] }

function mcsSlice(service: string, clusterId: string, endpoints: TestEndpoint[], options: SliceOptions = {}): object {
  const addressType = options.addressType ?? 'IPv4';
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: {
      name: `${service}-${clusterId}${addressType === 'IPv6' ? '-v6' : ''}`, namespace: NS,
      labels: {
        'multicluster.kubernetes.io/service-name': service,
        'multicluster.kubernetes.io/source-cluster': clusterId,
        'endpointslice.kubernetes.io/managed-by': 'dns-test.mcs-cloudmap.local',
      },
    },
    addressType,
    ports: options.ports ?? [{ name: 'pg', protocol: 'TCP', port: 5432 }],
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready }, ...(e.hostname ? { hostname: e.hostname } : {}) })),
  };
}

/** The addresses a name resolves to, sorted, or the resolver's error code (ENOTFOUND is NXDOMAIN, ENODATA is NODATA). */
async function a(resolver: Resolver, name: string): Promise<string[] | string> {
  return resolver.resolve4(`${name}.${ZONE}`).then((ips) => ips.sort(), (err: { code?: string }) => err.code ?? String(err));
}

/** A reply as comparable text: the rcode, and the answer and additional records as `<name> <type> <data>`, sorted. */
function summary(reply: DnsReply): { rcode: string; answer: string[]; additional: string[] } {
  const line = (rr: DnsReply['answers'][number]): string => {
    if (rr.type === 'SRV') return `${rr.name} SRV ${rr.data.priority} ${rr.data.weight} ${rr.data.port} ${rr.data.target}`;
    if (rr.type === 'A' || rr.type === 'AAAA') return `${rr.name} ${rr.type} ${rr.data}`;
    return `${rr.name} ${rr.type}`;
  };
  return { rcode: reply.rcode, answer: reply.answers.map(line).sort(), additional: reply.additionals.map(line).sort() };
}

describe('clusterset.local DNS from ServiceImports and EndpointSlices (D1, D2)', function () {
  this.timeout(120_000);
  const testbed = withClusterSet();
  let cluster: TestCluster;
  let dns: CoreDns | undefined;
  const resolver = new Resolver({ timeout: 1000, tries: 2 });
  const eventually = (what: string, check: () => Promise<boolean>) => waitFor(what, check, { timeoutMs: 20_000, intervalMs: 100 });

  before(async function () {
    cluster = testbed().clusters[0]!;
    kubectl(cluster, ['apply', '--server-side', '--force-conflicts', ...CRDS.flatMap((f) => ['-f', f])]);
    kubectl(cluster, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/serviceimports.multicluster.x-k8s.io']);
    await createNamespace(cluster.kubeConfig(), NS);
    kubectl(cluster, ['apply', '-f', '-'], [
      serviceImport('web', 'ClusterSetIP', [{ name: 'http', protocol: 'TCP', port: 80 }, { protocol: 'TCP', port: 8080 }], ['10.96.100.10']),
      serviceImport('db', 'Headless', [{ name: 'pg', protocol: 'TCP', port: 5432 }]),
      mcsSlice('db', 'cls1', [{ ip: '10.244.1.5', hostname: 'db-0', ready: true }, { ip: '10.244.1.6', hostname: 'db-1', ready: false }]),
      mcsSlice('db', 'cls2', [{ ip: '10.245.2.7', hostname: 'db-0', ready: true }, { ip: '10.245.2.8', ready: true }]),
    ]);
    dns = await startCoreDns({ kubeconfigPath: cluster.kubeconfigPath, context: cluster.context, dir: join(testbed().dir, 'coredns-dns-test') });
    resolver.setServers([dns.address]);
    // The server is ready once its informers listed; the objects above were written before it started.
    await eventually('the ClusterSetIP import to resolve', async () => Array.isArray(await a(resolver, `web.${NS}.svc`)));
  });

  after(async function () {
    await dns?.stop();
    if (cluster) await deleteNamespace(cluster.kubeConfig(), NS);
  });

  it('D1: <svc>.<ns>.svc.clusterset.local of a ClusterSetIP import resolves to its spec.ips', async () => {
    expect(await a(resolver, `web.${NS}.svc`)).to.deep.equal(['10.96.100.10']);
  });

  it('D1: a ClusterSetIP import has no per-cluster names', async () => {
    expect(await a(resolver, `cls1.web.${NS}.svc`)).to.equal('ENOTFOUND');
  });

  it('D1: a Headless import resolves to the ready endpoints of every cluster, never the unready ones', async () => {
    expect(await a(resolver, `db.${NS}.svc`)).to.deep.equal(['10.244.1.5', '10.245.2.7', '10.245.2.8']);
  });

  it('D1: <hostname>.<clusterid>.<svc>.<ns>.svc.clusterset.local names one cluster\'s endpoint', async () => {
    expect(await a(resolver, `db-0.cls1.db.${NS}.svc`)).to.deep.equal(['10.244.1.5']);
    expect(await a(resolver, `db-0.cls2.db.${NS}.svc`)).to.deep.equal(['10.245.2.7']);
    expect(await a(resolver, `10-245-2-8.cls2.db.${NS}.svc`), 'an endpoint without hostname is named after its address').to.deep.equal(['10.245.2.8']);
    expect(await a(resolver, `db-1.cls1.db.${NS}.svc`), 'unready endpoint').to.equal('ENOTFOUND');
  });

  it('D2: SRV per named port — ClusterSetIP targets the service name, Headless one record per ready endpoint', async () => {
    const web = await resolver.resolveSrv(`_http._tcp.web.${NS}.svc.${ZONE}`);
    expect(web.map((r) => [r.name, r.port])).to.deep.equal([[`web.${NS}.svc.${ZONE}`, 80]]);
    const db = await resolver.resolveSrv(`_pg._tcp.db.${NS}.svc.${ZONE}`);
    expect(db.map((r) => `${r.name}:${r.port}`).sort()).to.deep.equal([
      `10-245-2-8.cls2.db.${NS}.svc.${ZONE}:5432`,
      `db-0.cls1.db.${NS}.svc.${ZONE}:5432`,
      `db-0.cls2.db.${NS}.svc.${ZONE}:5432`,
    ]);
    const unknownPort = await resolver.resolveSrv(`_https._tcp.web.${NS}.svc.${ZONE}`).then(() => 'answered', (err: { code?: string }) => err.code);
    expect(unknownPort).to.equal('ENOTFOUND');
  });

  it('D1: unknown names in the zone are NXDOMAIN; a known name without records of the type is NODATA', async () => {
    expect(await a(resolver, `missing.${NS}.svc`)).to.equal('ENOTFOUND');
    expect(await a(resolver, `web.no-such-namespace.svc`)).to.equal('ENOTFOUND');
    const aaaa = await resolver.resolve6(`web.${NS}.svc.${ZONE}`).then(() => 'answered', (err: { code?: string }) => err.code);
    expect(aaaa).to.equal('ENODATA');
    expect(await resolver.resolveTxt(`dns-version.${ZONE}`)).to.deep.equal([['1.0.0']]);
  });

  it('D1: a name appears once its ServiceImport is created, follows endpoint readiness, and goes with the import', async () => {
    expect(await a(resolver, `late.${NS}.svc`)).to.equal('ENOTFOUND');
    kubectl(cluster, ['apply', '-f', '-'], [serviceImport('late', 'ClusterSetIP', [{ name: 'http', port: 80 }], ['10.96.100.11'])]);
    await eventually('late to resolve', async () => JSON.stringify(await a(resolver, `late.${NS}.svc`)) === '["10.96.100.11"]');

    kubectl(cluster, ['apply', '-f', '-'], [mcsSlice('db', 'cls1', [{ ip: '10.244.1.5', hostname: 'db-0', ready: true }, { ip: '10.244.1.6', hostname: 'db-1', ready: true }])]);
    await eventually('db-1 to resolve once ready', async () => JSON.stringify(await a(resolver, `db-1.cls1.db.${NS}.svc`)) === '["10.244.1.6"]');

    kubectl(cluster, ['delete', 'serviceimport', 'late', '-n', NS]);
    await eventually('late to be NXDOMAIN again', async () => (await a(resolver, `late.${NS}.svc`)) === 'ENOTFOUND');
  });

  it('D3: the coredns-multicluster component\'s RBAC is all the plugin needs (CoreDNS as kube-system/coredns)', async () => {
    kubectl(cluster, ['apply', '-f', 'kustomize/components/coredns-multicluster/rbac.yaml']);
    kubectl(cluster, ['apply', '-f', '-'], [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: 'kube-system' } }]);
    const dir = join(testbed().dir, 'coredns-dns-test-rbac');
    mkdirSync(dir, { recursive: true });
    const kubeconfigPath = serviceAccountKubeconfig(cluster.kubeconfigPath, 'kube-system', 'coredns', join(dir, 'kubeconfig'));
    const restricted = await startCoreDns({ kubeconfigPath, context: cluster.context, dir });
    try {
      const r = new Resolver({ timeout: 1000, tries: 2 });
      r.setServers([restricted.address]);
      // Until its informers have listed, the server answers SERVFAIL; a missing permission would keep it there.
      await eventually('the restricted server to resolve web', async () => JSON.stringify(await a(r, `web.${NS}.svc`)) === '["10.96.100.10"]');
      expect(await a(r, `db-0.cls2.db.${NS}.svc`)).to.deep.equal(['10.245.2.7']);
    } finally {
      await restricted.stop();
      kubectl(cluster, ['delete', '--ignore-not-found', '-f', 'kustomize/components/coredns-multicluster/rbac.yaml']);
      kubectl(cluster, ['delete', '--ignore-not-found', 'serviceaccount', 'coredns', '-n', 'kube-system']);
    }
  });

  describe('A, AAAA and SRV with the additional section, through endpoint readiness and unexport (D1, D2)', () => {
    const svc = (name: string) => `${name}.${NS}.svc.${ZONE}`;
    const API = svc('api');
    const PEERS = svc('peers');
    const webPorts = (port: number) => [{ name: 'web', protocol: 'TCP', port }];
    const peersCls1 = (peer1Ready: boolean) => mcsSlice('peers', 'cls1', [
      { ip: '10.244.1.20', hostname: 'peer-0', ready: true }, { ip: '10.244.1.21', hostname: 'peer-1', ready: peer1Ready },
    ], { ports: webPorts(8080) });
    const ask = async (name: string, type: 'A' | 'AAAA' | 'SRV') => summary(await query(dns!.address, name, type));
    /** Waits until name's reply to type is want; on timeout the last difference is in the error. */
    const settles = (name: string, type: 'A' | 'AAAA' | 'SRV', want: ReturnType<typeof summary>) =>
      eventually(`${type} ${name} to answer ${JSON.stringify(want)}`, async () => {
        expect(await ask(name, type)).to.deep.equal(want);
        return true;
      });
    const nxdomain = { rcode: 'NXDOMAIN', answer: [], additional: [] };

    before(async () => {
      kubectl(cluster, ['apply', '-f', '-'], [
        // A dual-stack ClusterSetIP import; DNS is on 53 over UDP and TCP, and 9090 has no name.
        serviceImport('api', 'ClusterSetIP', [
          { name: 'http', protocol: 'TCP', port: 80 }, { name: 'dns', protocol: 'UDP', port: 53 },
          { name: 'dns-tcp', protocol: 'TCP', port: 53 }, { protocol: 'TCP', port: 9090 },
        ], ['10.96.100.20', 'fd00:96::20']),
        // A Headless import: cls1 has peer-0 (dual-stack, in an IPv4 and an IPv6 slice) and peer-1; cls2 serves the
        // port on another target port, from an endpoint without hostname, and has an unready one.
        serviceImport('peers', 'Headless', webPorts(80)),
        peersCls1(true),
        mcsSlice('peers', 'cls1', [{ ip: 'fd00:244:1::20', hostname: 'peer-0', ready: true }], { addressType: 'IPv6', ports: webPorts(8080) }),
        mcsSlice('peers', 'cls2', [{ ip: '10.245.2.20', ready: true }, { ip: '10.245.2.21', hostname: 'peer-0', ready: false }], { ports: webPorts(8081) }),
      ]);
      await eventually('api and peers to resolve', async () => (await query(dns!.address, API, 'A')).rcode === 'NOERROR' &&
        (await query(dns!.address, PEERS, 'AAAA')).rcode === 'NOERROR');
    });

    it('ClusterSetIP: A and AAAA are spec.ips; SRV of the service name is one record per port number, targets\' addresses in the additional section', async () => {
      expect(await ask(API, 'A')).to.deep.equal({ rcode: 'NOERROR', answer: [`${API} A 10.96.100.20`], additional: [] });
      expect(await ask(API, 'AAAA')).to.deep.equal({ rcode: 'NOERROR', answer: [`${API} AAAA fd00:96::20`], additional: [] });
      const addresses = [`${API} A 10.96.100.20`, `${API} AAAA fd00:96::20`];
      expect(await ask(API, 'SRV')).to.deep.equal({
        rcode: 'NOERROR',
        answer: [`${API} SRV 0 33 53 ${API}`, `${API} SRV 0 33 80 ${API}`, `${API} SRV 0 33 9090 ${API}`],
        additional: addresses,
      });
      expect(await ask(`_http._tcp.${API}`, 'SRV')).to.deep.equal({
        rcode: 'NOERROR', answer: [`_http._tcp.${API} SRV 0 100 80 ${API}`], additional: addresses,
      });
      expect(await ask(`_dns._udp.${API}`, 'SRV')).to.deep.equal({
        rcode: 'NOERROR', answer: [`_dns._udp.${API} SRV 0 100 53 ${API}`], additional: addresses,
      });
      expect((await ask(`_dns._tcp.${API}`, 'SRV')).rcode, 'the port named dns is UDP').to.equal('NXDOMAIN');
    });

    it('Headless: A and AAAA are the ready endpoints; SRV of the service name is one record per ready endpoint and port, targeting <hostname>.<clusterid>', async () => {
      expect(await ask(PEERS, 'A')).to.deep.equal({
        rcode: 'NOERROR', answer: [`${PEERS} A 10.244.1.20`, `${PEERS} A 10.244.1.21`, `${PEERS} A 10.245.2.20`], additional: [],
      });
      expect(await ask(PEERS, 'AAAA')).to.deep.equal({ rcode: 'NOERROR', answer: [`${PEERS} AAAA fd00:244:1::20`], additional: [] });
      const targets = [`peer-0.cls1.${PEERS}`, `peer-1.cls1.${PEERS}`, `10-245-2-20.cls2.${PEERS}`];
      const additional = [
        `10-245-2-20.cls2.${PEERS} A 10.245.2.20`,
        `peer-0.cls1.${PEERS} A 10.244.1.20`, `peer-0.cls1.${PEERS} AAAA fd00:244:1::20`,
        `peer-1.cls1.${PEERS} A 10.244.1.21`,
      ];
      const srv = (owner: string) => ({
        rcode: 'NOERROR',
        answer: [`${owner} SRV 0 33 8080 ${targets[0]}`, `${owner} SRV 0 33 8080 ${targets[1]}`, `${owner} SRV 0 33 8081 ${targets[2]}`],
        additional,
      });
      expect(await ask(PEERS, 'SRV')).to.deep.equal(srv(PEERS));
      expect(await ask(`_web._tcp.${PEERS}`, 'SRV')).to.deep.equal(srv(`_web._tcp.${PEERS}`));
      expect(await ask(targets[0]!, 'AAAA')).to.deep.equal({ rcode: 'NOERROR', answer: [`${targets[0]} AAAA fd00:244:1::20`], additional: [] });
    });

    it('an endpoint that turns unready leaves A, SRV and the additional section, and its own name is NXDOMAIN', async () => {
      kubectl(cluster, ['apply', '-f', '-'], [peersCls1(false)]);
      await settles(PEERS, 'SRV', {
        rcode: 'NOERROR',
        answer: [`${PEERS} SRV 0 50 8080 peer-0.cls1.${PEERS}`, `${PEERS} SRV 0 50 8081 10-245-2-20.cls2.${PEERS}`],
        additional: [`10-245-2-20.cls2.${PEERS} A 10.245.2.20`, `peer-0.cls1.${PEERS} A 10.244.1.20`, `peer-0.cls1.${PEERS} AAAA fd00:244:1::20`],
      });
      expect((await ask(`_web._tcp.${PEERS}`, 'SRV')).answer).to.have.length(2);
      expect((await ask(PEERS, 'A')).answer).to.deep.equal([`${PEERS} A 10.244.1.20`, `${PEERS} A 10.245.2.20`]);
      expect(await ask(`peer-1.cls1.${PEERS}`, 'A')).to.deep.equal(nxdomain);
    });

    it('after one cluster unexports (its EndpointSlice goes), only the other cluster\'s endpoints remain', async () => {
      kubectl(cluster, ['apply', '-f', '-'], [peersCls1(false)]);
      kubectl(cluster, ['delete', 'endpointslice', 'peers-cls2', '-n', NS]);
      await settles(PEERS, 'SRV', {
        rcode: 'NOERROR',
        answer: [`${PEERS} SRV 0 100 8080 peer-0.cls1.${PEERS}`],
        additional: [`peer-0.cls1.${PEERS} A 10.244.1.20`, `peer-0.cls1.${PEERS} AAAA fd00:244:1::20`],
      });
      expect(await ask(`10-245-2-20.cls2.${PEERS}`, 'A')).to.deep.equal(nxdomain);
    });

    it('after unexport (the ServiceImports and their EndpointSlices go) every name is NXDOMAIN with the zone\'s SOA', async () => {
      kubectl(cluster, ['delete', 'serviceimport', 'api', 'peers', '-n', NS]);
      kubectl(cluster, ['delete', 'endpointslice', '-n', NS, '-l', 'multicluster.kubernetes.io/service-name=peers']);
      await settles(API, 'A', nxdomain);
      await settles(PEERS, 'A', nxdomain);
      for (const name of [API, PEERS, `_http._tcp.${API}`, `_web._tcp.${PEERS}`, `peer-0.cls1.${PEERS}`]) {
        for (const type of ['A', 'AAAA', 'SRV'] as const) {
          const reply = await query(dns!.address, name, type);
          expect(summary(reply), `${type} ${name}`).to.deep.equal(nxdomain);
          expect(reply.authorities.map((rr) => `${rr.name} ${rr.type}`), `${type} ${name}`).to.deep.equal([`${ZONE} SOA`]);
        }
      }
    });
  });
});
