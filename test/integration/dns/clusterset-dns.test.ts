// D1 and D2 on the testbed: stock CoreDNS, its kubernetes plugin with the multicluster option, answers clusterset.local
// from ServiceImports and MCS EndpointSlices written by hand with the admin kubeconfig of cluster 1. No worker and no
// admission webhooks in this suite; the webhook server runs for the CRDs' conversion only, since CoreDNS reads
// ServiceImports as v1alpha1 and they are stored as v1beta1.
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { startConversionWebhook, type ConversionWebhook } from '../../../hack/local/deploy.ts';
import { serviceAccountKubeconfig } from '../../../hack/local/kubectl.ts';
import { startCoreDns, type CoreDns, type TestCluster } from '../../../hack/testbed/index.ts';
import { freePorts } from '../../../hack/testbed/ports.ts';
import { eventually } from '../../support/eventually.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { query, type DnsReply } from '../../support/dns-client.ts';
import { createNamespace, deleteNamespace } from '../../support/kube.ts';
import { kubectlBinary } from '../../../hack/testbed/paths.ts';

const NS = 'dns-clusterset';
const ZONE = 'clusterset.local';
const ROOT = join(import.meta.dirname, '../../..');

/** kubeadm's ClusterRole for CoreDNS (its CoreDNS add-on manifests, Kubernetes 1.33): what cluster.local needs. */
const KUBEADM_CLUSTER_ROLE = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'system:coredns' },
  rules: [
    { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
  ],
};
const KUBEADM_CLUSTER_ROLE_BINDING = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'system:coredns' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
  subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' }],
};

function kubectl(cluster: TestCluster, args: string[], input?: object[]): string {
  const stdin = input?.map((o) => stringify(o)).join('---\n');
  try {
    return execFileSync(
      kubectlBinary(),
      ['--kubeconfig', cluster.kubeconfigPath, '--context', cluster.context, ...args],
      { cwd: ROOT, encoding: 'utf8', input: stdin, stdio: ['pipe', 'pipe', 'pipe'] },
    );
  } catch (err) {
    throw new Error(
      `kubectl ${args.join(' ')} on ${cluster.context}: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`,
      { cause: err },
    );
  }
}

function serviceImport(name: string, type: 'ClusterSetIP' | 'Headless', ports: object[], ips: string[] = []): object {
  return {
    apiVersion: 'multicluster.x-k8s.io/v1beta1',
    kind: 'ServiceImport',
    metadata: { name, namespace: NS },
    spec: { type, ports, ...(ips.length > 0 ? { ips } : {}) },
  };
}

interface TestEndpoint {
  ip: string;
  hostname?: string;
  ready: boolean;
}

interface SliceOptions {
  addressType?: 'IPv4' | 'IPv6';
  ports?: object[];
}

function mcsSlice(service: string, clusterId: string, endpoints: TestEndpoint[], options: SliceOptions = {}): object {
  const addressType = options.addressType ?? 'IPv4';
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${service}-${clusterId}${addressType === 'IPv6' ? '-v6' : ''}`,
      namespace: NS,
      labels: {
        'multicluster.kubernetes.io/service-name': service,
        'multicluster.kubernetes.io/source-cluster': clusterId,
        'endpointslice.kubernetes.io/managed-by': 'dns-test.mcs-cloudmap.local',
      },
    },
    addressType,
    ports: options.ports ?? [{ name: 'pg', protocol: 'TCP', port: 5432 }],
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready },
      ...(e.hostname ? { hostname: e.hostname } : {}),
    })),
  };
}

/** The addresses a name resolves to, sorted, or the resolver's error code (ENOTFOUND is NXDOMAIN, ENODATA is NODATA). */
async function a(resolver: Resolver, name: string): Promise<string[] | string> {
  return resolver.resolve4(`${name}.${ZONE}`).then(
    (ips) => ips.sort(),
    (err: NodeJS.ErrnoException) => err.code ?? err.message,
  );
}

/**
 * A reply as comparable text: the rcode, and the answer and additional records as `<name> <type> <data>`, sorted. SRV
 * records of one answer must have equal weights (D2); the number itself is CoreDNS's (100 divided by the records it
 * made before removing duplicates), so it is left out of the text.
 */
function summary(reply: DnsReply): { rcode: string; answer: string[]; additional: string[] } {
  const weights = new Set(reply.answers.flatMap((rr) => (rr.type === 'SRV' ? [rr.data.weight] : [])));
  expect(weights.size, `SRV weights of one answer: ${[...weights].join(', ')}`).to.be.at.most(1);
  const line = (rr: DnsReply['answers'][number]): string => {
    if (rr.type === 'SRV') return `${rr.name} SRV ${rr.data.priority} ${rr.data.port} ${rr.data.target}`;
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
  let conversion: ConversionWebhook | undefined;
  const resolver = new Resolver({ timeout: 1000, tries: 2 });

  before(async function () {
    cluster = testbed().clusters[0]!;
    conversion = await startConversionWebhook(cluster, join(testbed().dir, 'dns-test-conversion-webhook'));
    await createNamespace(cluster.kubeConfig(), NS);
    kubectl(
      cluster,
      ['apply', '-f', '-'],
      [
        serviceImport(
          'web',
          'ClusterSetIP',
          [
            { name: 'http', protocol: 'TCP', port: 80 },
            { protocol: 'TCP', port: 8080 },
          ],
          ['10.96.100.10'],
        ),
        serviceImport('db', 'Headless', [{ name: 'pg', protocol: 'TCP', port: 5432 }]),
        mcsSlice('db', 'cls1', [
          { ip: '10.244.1.5', hostname: 'db-0', ready: true },
          { ip: '10.244.1.6', hostname: 'db-1', ready: false },
        ]),
        mcsSlice('db', 'cls2', [
          { ip: '10.245.2.7', hostname: 'db-0', ready: true },
          { ip: '10.245.2.8', ready: true },
        ]),
      ],
    );
    dns = await startCoreDns({
      kubeconfigPath: cluster.kubeconfigPath,
      context: cluster.context,
      dir: join(testbed().dir, 'coredns-dns-test'),
    });
    resolver.setServers([dns.address]);
    // The server is ready once its informers listed; the objects above were written before it started.
    await eventually('the ClusterSetIP import to resolve', async () =>
      Array.isArray(await a(resolver, `web.${NS}.svc`)),
    );
  });

  after(async function () {
    await dns?.stop();
    if (cluster) await deleteNamespace(cluster.kubeConfig(), NS);
    await conversion?.stop();
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

  it("D1: <hostname>.<clusterid>.<svc>.<ns>.svc.clusterset.local names one cluster's endpoint", async () => {
    expect(await a(resolver, `db-0.cls1.db.${NS}.svc`)).to.deep.equal(['10.244.1.5']);
    expect(await a(resolver, `db-0.cls2.db.${NS}.svc`)).to.deep.equal(['10.245.2.7']);
    expect(
      await a(resolver, `10-245-2-8.cls2.db.${NS}.svc`),
      'an endpoint without hostname is named after its address',
    ).to.deep.equal(['10.245.2.8']);
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
    const unknownPort = await resolver.resolveSrv(`_https._tcp.web.${NS}.svc.${ZONE}`).then(
      () => 'answered',
      (err: { code?: string }) => err.code,
    );
    expect(unknownPort).to.equal('ENOTFOUND');
  });

  it('D1: unknown names in the zone are NXDOMAIN; a known name without records of the type is NODATA', async () => {
    expect(await a(resolver, `missing.${NS}.svc`)).to.equal('ENOTFOUND');
    expect(await a(resolver, `web.no-such-namespace.svc`)).to.equal('ENOTFOUND');
    const aaaa = await resolver.resolve6(`web.${NS}.svc.${ZONE}`).then(
      () => 'answered',
      (err: { code?: string }) => err.code,
    );
    expect(aaaa).to.equal('ENODATA');
    // The schema version of the kubernetes plugin's cluster.local specification; the multicluster specification says
    // 1.0.0 (docs/dns.md, the one known difference).
    expect(await resolver.resolveTxt(`dns-version.${ZONE}`)).to.deep.equal([['1.1.0']]);
  });

  it('D1: a name appears once its ServiceImport is created, follows endpoint readiness, and goes with the import', async () => {
    expect(await a(resolver, `late.${NS}.svc`)).to.equal('ENOTFOUND');
    kubectl(
      cluster,
      ['apply', '-f', '-'],
      [serviceImport('late', 'ClusterSetIP', [{ name: 'http', port: 80 }], ['10.96.100.11'])],
    );
    await eventually(
      'late to resolve',
      async () => JSON.stringify(await a(resolver, `late.${NS}.svc`)) === '["10.96.100.11"]',
    );

    kubectl(
      cluster,
      ['apply', '-f', '-'],
      [
        mcsSlice('db', 'cls1', [
          { ip: '10.244.1.5', hostname: 'db-0', ready: true },
          { ip: '10.244.1.6', hostname: 'db-1', ready: true },
        ]),
      ],
    );
    await eventually(
      'db-1 to resolve once ready',
      async () => JSON.stringify(await a(resolver, `db-1.cls1.db.${NS}.svc`)) === '["10.244.1.6"]',
    );

    kubectl(cluster, ['delete', 'serviceimport', 'late', '-n', NS]);
    await eventually('late to be NXDOMAIN again', async () => (await a(resolver, `late.${NS}.svc`)) === 'ENOTFOUND');
  });

  it("D3: kubeadm's system:coredns plus the coredns-multicluster component's RBAC is all CoreDNS needs (as kube-system/coredns)", async () => {
    kubectl(cluster, ['apply', '-f', 'kustomize/components/coredns-multicluster/rbac.yaml']);
    kubectl(
      cluster,
      ['apply', '-f', '-'],
      [
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: 'kube-system' } },
        KUBEADM_CLUSTER_ROLE,
        KUBEADM_CLUSTER_ROLE_BINDING,
      ],
    );
    const dir = join(testbed().dir, 'coredns-dns-test-rbac');
    mkdirSync(dir, { recursive: true });
    const kubeconfigPath = serviceAccountKubeconfig(
      cluster.kubeconfigPath,
      'kube-system',
      'coredns',
      join(dir, 'kubeconfig'),
    );
    const restricted = await startCoreDns({ kubeconfigPath, context: cluster.context, dir });
    try {
      const r = new Resolver({ timeout: 1000, tries: 2 });
      r.setServers([restricted.address]);
      // Until it has listed everything it watches, the server answers SERVFAIL; a missing permission would keep it there.
      await eventually(
        'the restricted server to resolve web',
        async () => JSON.stringify(await a(r, `web.${NS}.svc`)) === '["10.96.100.10"]',
      );
      expect(await a(r, `db-0.cls2.db.${NS}.svc`)).to.deep.equal(['10.245.2.7']);
    } finally {
      await restricted.stop();
      kubectl(cluster, ['delete', '--ignore-not-found', '-f', 'kustomize/components/coredns-multicluster/rbac.yaml']);
      kubectl(cluster, ['delete', '--ignore-not-found', 'serviceaccount', 'coredns', '-n', 'kube-system']);
      kubectl(cluster, [
        'delete',
        '--ignore-not-found',
        'clusterrolebinding/system:coredns',
        'clusterrole/system:coredns',
      ]);
    }
  });

  it("D3: the component's Corefile (kubeadm's with the multicluster lines) runs in stock CoreDNS: both zones answer, and it reports ready", async () => {
    const shipped = (
      parse(readFileSync(join(ROOT, 'kustomize/components/coredns-multicluster/corefile.yaml'), 'utf8')) as {
        data: { Corefile: string };
      }
    ).data.Corefile;
    const [health, ready, metrics] = (await freePorts(3)) as [number, number, number];
    // As it runs on the host: free ports for DNS, health, ready and metrics, and a kubeconfig for the in-cluster account.
    const onHost = (port: number) =>
      shipped
        .replace('.:53 {', `.:${port} {`)
        .replace(/^(\s+)health \{/m, `$1health 127.0.0.1:${health} {`)
        .replace(/^(\s+)ready$/m, `$1ready 127.0.0.1:${ready}`)
        .replace(/^(\s+)prometheus :9153$/m, `$1prometheus 127.0.0.1:${metrics}`)
        .replace(/^(\s+)pods insecure$/m, `$1kubeconfig ${cluster.kubeconfigPath} ${cluster.context}\n$1pods insecure`);
    expect(onHost(53).match(/127\.0\.0\.1:|^\s+kubeconfig /gm), 'every rewrite applied').to.have.length(4);
    const kubeadm = await startCoreDns({
      kubeconfigPath: cluster.kubeconfigPath,
      context: cluster.context,
      dir: join(testbed().dir, 'coredns-dns-test-component'),
      corefile: onHost,
    });
    try {
      const r = new Resolver({ timeout: 1000, tries: 2 });
      r.setServers([kubeadm.address]);
      expect(await a(r, `web.${NS}.svc`)).to.deep.equal(['10.96.100.10']);
      expect(await r.resolve4('kubernetes.default.svc.cluster.local')).to.have.length(1);
      expect(await a(r, `missing.${NS}.svc`)).to.equal('ENOTFOUND');
      expect(
        (await fetch(`http://127.0.0.1:${ready}/ready`)).status,
        "the ready plugin, which the Deployment's readiness probe asks",
      ).to.equal(200);
    } finally {
      await kubeadm.stop();
    }
  });

  describe('A, AAAA and SRV with the additional section, through endpoint readiness and unexport (D1, D2)', () => {
    const svc = (name: string) => `${name}.${NS}.svc.${ZONE}`;
    const API = svc('api');
    const PEERS = svc('peers');
    const webPorts = (port: number) => [{ name: 'web', protocol: 'TCP', port }];
    const peersCls1 = (peer1Ready: boolean) =>
      mcsSlice(
        'peers',
        'cls1',
        [
          { ip: '10.244.1.20', hostname: 'peer-0', ready: true },
          { ip: '10.244.1.21', hostname: 'peer-1', ready: peer1Ready },
        ],
        { ports: webPorts(8080) },
      );
    const ask = async (name: string, type: 'A' | 'AAAA' | 'SRV') => summary(await query(dns!.address, name, type));
    /** Waits until name's reply to type is want; on timeout the last difference is in the error. */
    const settles = (name: string, type: 'A' | 'AAAA' | 'SRV', want: ReturnType<typeof summary>) =>
      eventually(`${type} ${name} to answer ${JSON.stringify(want)}`, async () => {
        expect(await ask(name, type)).to.deep.equal(want);
        return true;
      });
    const nxdomain = { rcode: 'NXDOMAIN', answer: [], additional: [] };

    before(async () => {
      kubectl(
        cluster,
        ['apply', '-f', '-'],
        [
          // A dual-stack ClusterSetIP import; DNS is on 53 over UDP and TCP, and 9090 has no name.
          serviceImport(
            'api',
            'ClusterSetIP',
            [
              { name: 'http', protocol: 'TCP', port: 80 },
              { name: 'dns', protocol: 'UDP', port: 53 },
              { name: 'dns-tcp', protocol: 'TCP', port: 53 },
              { protocol: 'TCP', port: 9090 },
            ],
            ['10.96.100.20', 'fd00:96::20'],
          ),
          // A Headless import: cls1 has peer-0 (dual-stack, in an IPv4 and an IPv6 slice) and peer-1; cls2 serves the
          // port on another target port, from an endpoint without hostname, and has an unready one.
          serviceImport('peers', 'Headless', webPorts(80)),
          peersCls1(true),
          mcsSlice('peers', 'cls1', [{ ip: 'fd00:244:1::20', hostname: 'peer-0', ready: true }], {
            addressType: 'IPv6',
            ports: webPorts(8080),
          }),
          mcsSlice(
            'peers',
            'cls2',
            [
              { ip: '10.245.2.20', ready: true },
              { ip: '10.245.2.21', hostname: 'peer-0', ready: false },
            ],
            { ports: webPorts(8081) },
          ),
        ],
      );
      await eventually(
        'api and peers to resolve',
        async () =>
          (await query(dns!.address, API, 'A')).rcode === 'NOERROR' &&
          (await query(dns!.address, PEERS, 'AAAA')).rcode === 'NOERROR',
      );
    });

    it("ClusterSetIP: A and AAAA are spec.ips; SRV of the service name is one record per port number, targets' addresses in the additional section", async () => {
      expect(await ask(API, 'A')).to.deep.equal({
        rcode: 'NOERROR',
        answer: [`${API} A 10.96.100.20`],
        additional: [],
      });
      expect(await ask(API, 'AAAA')).to.deep.equal({
        rcode: 'NOERROR',
        answer: [`${API} AAAA fd00:96::20`],
        additional: [],
      });
      const addresses = [`${API} A 10.96.100.20`, `${API} AAAA fd00:96::20`];
      expect(await ask(API, 'SRV')).to.deep.equal({
        rcode: 'NOERROR',
        answer: [`${API} SRV 0 53 ${API}`, `${API} SRV 0 80 ${API}`, `${API} SRV 0 9090 ${API}`],
        additional: addresses,
      });
      expect(await ask(`_http._tcp.${API}`, 'SRV')).to.deep.equal({
        rcode: 'NOERROR',
        answer: [`_http._tcp.${API} SRV 0 80 ${API}`],
        additional: addresses,
      });
      expect(await ask(`_dns._udp.${API}`, 'SRV')).to.deep.equal({
        rcode: 'NOERROR',
        answer: [`_dns._udp.${API} SRV 0 53 ${API}`],
        additional: addresses,
      });
      expect((await ask(`_dns._tcp.${API}`, 'SRV')).rcode, 'the port named dns is UDP').to.equal('NXDOMAIN');
    });

    it('Headless: A and AAAA are the ready endpoints; SRV of the service name is one record per ready endpoint and port, targeting <hostname>.<clusterid>', async () => {
      expect(await ask(PEERS, 'A')).to.deep.equal({
        rcode: 'NOERROR',
        answer: [`${PEERS} A 10.244.1.20`, `${PEERS} A 10.244.1.21`, `${PEERS} A 10.245.2.20`],
        additional: [],
      });
      expect(await ask(PEERS, 'AAAA')).to.deep.equal({
        rcode: 'NOERROR',
        answer: [`${PEERS} AAAA fd00:244:1::20`],
        additional: [],
      });
      const targets = [`peer-0.cls1.${PEERS}`, `peer-1.cls1.${PEERS}`, `10-245-2-20.cls2.${PEERS}`];
      const additional = [
        `10-245-2-20.cls2.${PEERS} A 10.245.2.20`,
        `peer-0.cls1.${PEERS} A 10.244.1.20`,
        `peer-0.cls1.${PEERS} AAAA fd00:244:1::20`,
        `peer-1.cls1.${PEERS} A 10.244.1.21`,
      ];
      const srv = (owner: string) => ({
        rcode: 'NOERROR',
        answer: [
          `${owner} SRV 0 8080 ${targets[0]}`,
          `${owner} SRV 0 8080 ${targets[1]}`,
          `${owner} SRV 0 8081 ${targets[2]}`,
        ],
        additional,
      });
      expect(await ask(PEERS, 'SRV')).to.deep.equal(srv(PEERS));
      expect(await ask(`_web._tcp.${PEERS}`, 'SRV')).to.deep.equal(srv(`_web._tcp.${PEERS}`));
      expect(await ask(targets[0]!, 'AAAA')).to.deep.equal({
        rcode: 'NOERROR',
        answer: [`${targets[0]} AAAA fd00:244:1::20`],
        additional: [],
      });
    });

    it('an endpoint that turns unready leaves A, SRV and the additional section, and its own name is NXDOMAIN', async () => {
      kubectl(cluster, ['apply', '-f', '-'], [peersCls1(false)]);
      await settles(PEERS, 'SRV', {
        rcode: 'NOERROR',
        answer: [`${PEERS} SRV 0 8080 peer-0.cls1.${PEERS}`, `${PEERS} SRV 0 8081 10-245-2-20.cls2.${PEERS}`],
        additional: [
          `10-245-2-20.cls2.${PEERS} A 10.245.2.20`,
          `peer-0.cls1.${PEERS} A 10.244.1.20`,
          `peer-0.cls1.${PEERS} AAAA fd00:244:1::20`,
        ],
      });
      expect((await ask(`_web._tcp.${PEERS}`, 'SRV')).answer).to.have.length(2);
      expect((await ask(PEERS, 'A')).answer).to.deep.equal([`${PEERS} A 10.244.1.20`, `${PEERS} A 10.245.2.20`]);
      expect(await ask(`peer-1.cls1.${PEERS}`, 'A')).to.deep.equal(nxdomain);
    });

    it("after one cluster unexports (its EndpointSlice goes), only the other cluster's endpoints remain", async () => {
      kubectl(cluster, ['apply', '-f', '-'], [peersCls1(false)]);
      kubectl(cluster, ['delete', 'endpointslice', 'peers-cls2', '-n', NS]);
      await settles(PEERS, 'SRV', {
        rcode: 'NOERROR',
        answer: [`${PEERS} SRV 0 8080 peer-0.cls1.${PEERS}`],
        additional: [`peer-0.cls1.${PEERS} A 10.244.1.20`, `peer-0.cls1.${PEERS} AAAA fd00:244:1::20`],
      });
      expect(await ask(`10-245-2-20.cls2.${PEERS}`, 'A')).to.deep.equal(nxdomain);
    });

    it("after unexport (the ServiceImports and their EndpointSlices go) every name is NXDOMAIN with the zone's SOA", async () => {
      kubectl(cluster, ['delete', 'serviceimport', 'api', 'peers', '-n', NS]);
      kubectl(cluster, ['delete', 'endpointslice', '-n', NS, '-l', 'multicluster.kubernetes.io/service-name=peers']);
      await settles(API, 'A', nxdomain);
      await settles(PEERS, 'A', nxdomain);
      for (const name of [API, PEERS, `_http._tcp.${API}`, `_web._tcp.${PEERS}`, `peer-0.cls1.${PEERS}`]) {
        for (const type of ['A', 'AAAA', 'SRV'] as const) {
          const reply = await query(dns!.address, name, type);
          expect(summary(reply), `${type} ${name}`).to.deep.equal(nxdomain);
          expect(
            reply.authorities.map((rr) => `${rr.name} ${rr.type}`),
            `${type} ${name}`,
          ).to.deep.equal([`${ZONE} SOA`]);
        }
      }
    });
  });

  describe('while the conversion webhook is down: CoreDNS reads ServiceImports as v1alpha1, through it (D1)', () => {
    const WEB = `web.${NS}.svc.${ZONE}`;
    const DURING = `during.${NS}.svc.${ZONE}`;
    let late: CoreDns | undefined;

    after(async () => {
      await late?.stop();
      await conversion?.resume().catch(() => undefined);
    });

    it('a running CoreDNS keeps answering what it listed before, and sees no change until the webhook is back', async function () {
      this.timeout(240_000);
      expect(summary(await query(dns!.address, WEB, 'A')).answer).to.deep.equal([`${WEB} A 10.96.100.10`]);
      await conversion!.pause();
      const down = Date.now();
      // Changes the apiserver stores without conversion (v1beta1 is the storage version) but cannot send as v1alpha1.
      kubectl(
        cluster,
        ['apply', '-f', '-'],
        [serviceImport('during', 'ClusterSetIP', [{ name: 'http', port: 80 }], ['10.96.100.12'])],
      );
      kubectl(
        cluster,
        ['apply', '-f', '-'],
        [mcsSlice('db', 'cls2', [{ ip: '10.245.2.7', hostname: 'db-0', ready: true }])],
      );
      // 30 s of outage: the watch breaks and every relist fails, while the cache keeps what it had.
      for (let i = 0; i < 30; i++) {
        expect(summary(await query(dns!.address, WEB, 'A')), `${i} s into the outage`).to.deep.equal({
          rcode: 'NOERROR',
          answer: [`${WEB} A 10.96.100.10`],
          additional: [],
        });
        expect((await query(dns!.address, DURING, 'A')).rcode, `${i} s into the outage`).to.equal('NXDOMAIN');
        await new Promise((r) => setTimeout(r, 1000));
      }
      // MCS EndpointSlices need no conversion: their change is seen during the outage.
      expect(
        await a(resolver, `10-245-2-8.cls2.db.${NS}.svc`),
        'an endpoint removed from an EndpointSlice during the outage',
      ).to.equal('ENOTFOUND');
      console.log(
        `      ${((Date.now() - down) / 1000).toFixed(0)} s of webhook outage: names listed before kept answering, a ServiceImport created meanwhile stayed NXDOMAIN`,
      );

      // A CoreDNS started now cannot list ServiceImports: after its 5 s startup timeout it serves, without them.
      const dir = join(testbed().dir, 'coredns-dns-test-outage');
      late = await startCoreDns({
        kubeconfigPath: cluster.kubeconfigPath,
        context: cluster.context,
        dir,
        probeName: 'kubernetes.default.svc.cluster.local',
      });
      const kubernetesService = await query(late.address, 'kubernetes.default.svc.cluster.local', 'A');
      const unknownLocal = await query(late.address, 'no-such-service.default.svc.cluster.local', 'A');
      const clusterset = await query(late.address, WEB, 'A');
      console.log(
        `      a CoreDNS started during the outage: kubernetes.default.svc.cluster.local ${kubernetesService.rcode}, an unknown cluster.local name ${unknownLocal.rcode}, ${WEB} ${clusterset.rcode}`,
      );
      expect(kubernetesService.rcode, 'an existing cluster.local name').to.equal('NOERROR');
      expect(
        unknownLocal.rcode,
        'an unknown cluster.local name: SERVFAIL, not NXDOMAIN, until ServiceImports are listed',
      ).to.equal('SERVFAIL');
      expect(clusterset.rcode, 'a clusterset.local name it could not list').to.equal('SERVFAIL');

      await conversion!.resume();
      const back = Date.now();
      const caughtUp = async (server: string) =>
        JSON.stringify(summary(await query(server, DURING, 'A')).answer) ===
        JSON.stringify([`${DURING} A 10.96.100.12`]);
      await eventually(
        'the running CoreDNS to see the import created during the outage',
        () => caughtUp(dns!.address),
        90_000,
      );
      const runningMs = Date.now() - back;
      await eventually(
        'the CoreDNS started during the outage to list ServiceImports',
        () => caughtUp(late!.address),
        90_000,
      );
      const lateMs = Date.now() - back;
      console.log(
        `      webhook back: the running CoreDNS resolved the new import after ${(runningMs / 1000).toFixed(1)} s, the one started during the outage after ${(lateMs / 1000).toFixed(1)} s`,
      );
      expect((await query(late.address, 'no-such-service.default.svc.cluster.local', 'A')).rcode).to.equal('NXDOMAIN');
    });
  });
});
