// SPEC §7 on the testbed: our CoreDNS build (dns/, the clusterset plugin) answers clusterset.local from ServiceImports
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

function mcsSlice(service: string, clusterId: string, endpoints: TestEndpoint[]): object {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: {
      name: `${service}-${clusterId}`, namespace: NS,
      labels: {
        'multicluster.kubernetes.io/service-name': service,
        'multicluster.kubernetes.io/source-cluster': clusterId,
        'endpointslice.kubernetes.io/managed-by': 'dns-test.mcs-cloudmap.local',
      },
    },
    addressType: 'IPv4',
    ports: [{ name: 'pg', protocol: 'TCP', port: 5432 }],
    endpoints: endpoints.map((e) => ({ addresses: [e.ip], conditions: { ready: e.ready }, ...(e.hostname ? { hostname: e.hostname } : {}) })),
  };
}

/** The addresses a name resolves to, sorted, or the resolver's error code (ENOTFOUND is NXDOMAIN, ENODATA is NODATA). */
async function a(resolver: Resolver, name: string): Promise<string[] | string> {
  return resolver.resolve4(`${name}.${ZONE}`).then((ips) => ips.sort(), (err: { code?: string }) => err.code ?? String(err));
}

describe('clusterset.local DNS from ServiceImports and EndpointSlices (SPEC §7, issue 2 item 4)', function () {
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
});
