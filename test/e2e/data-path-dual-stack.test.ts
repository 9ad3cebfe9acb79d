// A mixed ClusterSet on the data path: cls1 and cls2 dual-stack (IPv4 primary), cls3 IPv4-only
// (startClusterSet({ dataPath: true, clusters: 3, ipFamilies: ['IPv4', 'IPv6'], ipFamiliesPerCluster: [, , ['IPv4']] })).
// Exports of RequireDualStack, SingleStack IPv6, PreferDualStack and dual-stack Headless Services from cls1: what a pod
// of cls2 gets over each family (ClusterSet IPs per family, one EndpointSlice per address type, A and AAAA records,
// per-pod names, SRV targets, connections with nc -4 / nc -6), and what the IPv4-only cls3 reports (IPFamilyNotSupported,
// IPFamilyConflict) as docs/troubleshooting.md says.
import { isIP } from 'node:net';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import { ipInCidr, missingDataPathPrerequisites } from '../../hack/testbed/index.ts';
import { LABEL_SERVICE_NAME } from '../../src/core/names.ts';
import type { IPFamily } from '../../src/core/types.ts';
import { requirePrerequisite } from '../support/prerequisites.ts';
import { condition, withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, service, serviceExport } from '../support/workloads.ts';
import {
  answeringClusters,
  clientPod,
  dig,
  echoDeployment,
  echoStatefulSet,
  readyPods,
  requests,
} from '../support/data-path-pods.ts';

const NS = 'data-path-dual';
const PORTS = [{ name: 'tcp', port: 8080 }];

/** A Service of the echo pods with these families. */
function familyService(
  name: string,
  policy: 'SingleStack' | 'PreferDualStack' | 'RequireDualStack',
  families: IPFamily[] | undefined,
  opts: { headless?: boolean; app?: string } = {},
): object {
  const base = service(NS, name, {
    ports: PORTS,
    selector: { app: opts.app ?? 'echo' },
    ...(opts.headless ? { headless: true } : {}),
  }) as { spec: object };
  return { ...base, spec: { ...base.spec, ipFamilyPolicy: policy, ...(families ? { ipFamilies: families } : {}) } };
}

/** Each pod's address of `family`, by pod name. */
async function podIps(cluster: E2ECluster, app: string, family: IPFamily): Promise<Record<string, string>> {
  const pods = await cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace: NS, labelSelector: `app=${app}` });
  const of = (p: V1Pod) =>
    (p.status?.podIPs ?? []).map((x) => x.ip).find((ip) => isIP(ip) === (family === 'IPv4' ? 4 : 6));
  return Object.fromEntries(pods.items.map((p) => [p.metadata!.name!, of(p)!]));
}

/** Addresses of the cluster's imported EndpointSlices of `name`, by address type. */
async function importedByFamily(cluster: E2ECluster, name: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const s of await cluster.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${name}`)) {
    out[s.addressType] = [...(out[s.addressType] ?? []), ...(s.endpoints ?? []).flatMap((e) => e.addresses)].sort();
  }
  return out;
}

async function importReady(
  cluster: E2ECluster,
  name: string,
): Promise<{ status?: string; reason?: string; message?: string } | undefined> {
  return condition(await cluster.serviceImport(NS, name), 'Ready');
}

describe('e2e: a mixed dual-stack / IPv4-only ClusterSet on the data path, each family from pods across clusters (E1, I1, I4, I5, D1, D2, X3)', function () {
  this.timeout(240_000);
  before(function () {
    const missing = missingDataPathPrerequisites();
    requirePrerequisite(this, "the testbed's data path", missing.length === 0 ? undefined : missing.join('; '));
  });
  const e2e = withE2E({
    clusterSet: {
      dataPath: true,
      clusters: 3,
      ipFamilies: ['IPv4', 'IPv6'],
      ipFamiliesPerCluster: [undefined, undefined, ['IPv4']],
    },
    namespaces: [NS],
  });
  const cls3 = () => e2e().clusters[2]!;

  before(async function () {
    this.timeout(240_000);
    const { clusters, cls1, cls2 } = e2e();
    await createNamespaces(clusters, NS);
    cls2.apply([clientPod(NS)]);
    cls1.apply([
      echoDeployment(NS, 'cls1', 'echo', 2, PORTS),
      familyService('dual', 'RequireDualStack', ['IPv4', 'IPv6']),
      familyService('v6', 'SingleStack', ['IPv6']),
      familyService('prefer', 'PreferDualStack', undefined),
      echoStatefulSet(NS, 'cls1', 'web', 2, 8080),
      familyService('web', 'RequireDualStack', ['IPv4', 'IPv6'], { headless: true, app: 'web' }),
    ]);
    cls3().apply([echoDeployment(NS, 'cls3', 'echo', 1, PORTS), familyService('prefer', 'PreferDualStack', undefined)]);
    await readyPods(cls1, NS, 'echo', 2);
    await readyPods(cls1, NS, 'web', 2);
    await readyPods(cls3(), NS, 'echo', 1);
    cls2.kubectl(['wait', '-n', NS, '--for=condition=Ready', 'pod/client', '--timeout=120s']);
  });

  it("cls1 and cls2 are dual-stack, cls3 IPv4-only: pods get an address of each of their cluster's families", async () => {
    const { cls1, cls2 } = e2e();
    expect([cls1, cls2, cls3()].map((c) => c.cluster.ipFamilies)).to.deep.equal([
      ['IPv4', 'IPv6'],
      ['IPv4', 'IPv6'],
      ['IPv4'],
    ]);
    for (const [i, family] of (['IPv4', 'IPv6'] as const).entries()) {
      for (const ip of Object.values(await podIps(cls1, 'echo', family)))
        expect(ipInCidr(ip, cls1.cluster.realNode!.podCidrs[i]!), `${ip}`).to.equal(true);
    }
    expect(Object.values(await podIps(cls3(), 'echo', 'IPv6'))).to.deep.equal([undefined]);
  });

  it('E1, I1, I4: RequireDualStack gets a ClusterSet IP per family, an EndpointSlice per address type, A and AAAA records, and is reached over each family; the IPv4-only cluster reports IPFamilyNotSupported', async () => {
    const { cls1, cls2 } = e2e();
    cls1.apply([serviceExport(NS, 'dual')]);
    const name = `dual.${NS}.svc.clusterset.local`;
    await eventually(
      'a cls2 pod reaches cls1 over IPv4 and IPv6 by the clusterset name',
      () =>
        answeringClusters(requests(cls2, NS, name, 8080, 1, 'IPv4'))[0] === 'cls1' &&
        answeringClusters(requests(cls2, NS, name, 8080, 1, 'IPv6'))[0] === 'cls1',
      90_000,
    );

    const si = await cls2.serviceImport(NS, 'dual');
    expect(si!.spec.ipFamilies).to.deep.equal(['IPv4', 'IPv6']);
    const [ip4, ip6] = si!.spec.ips as [string, string];
    expect(
      ipInCidr(ip4, cls2.cluster.serviceCidrs[0]!) && ipInCidr(ip6, cls2.cluster.serviceCidrs[1]!),
      `${(si!.spec.ips ?? []).join(', ')} in ${cls2.cluster.serviceCidrs.join(', ')}`,
    ).to.equal(true);
    expect(await importedByFamily(cls2, 'dual')).to.deep.equal({
      IPv4: Object.values(await podIps(cls1, 'echo', 'IPv4')).sort(),
      IPv6: Object.values(await podIps(cls1, 'echo', 'IPv6')).sort(),
    });
    expect(dig(cls2, NS, name, 'A')).to.deep.equal([ip4]);
    expect(dig(cls2, NS, name, 'AAAA')).to.deep.equal([ip6]);
    for (const [family, ip] of [
      ['IPv4', ip4],
      ['IPv6', ip6],
    ] as const) {
      expect(answeringClusters(requests(cls2, NS, name, 8080, 5, family)), `${family} by name`).to.deep.equal(
        Array(5).fill('cls1'),
      );
      expect(
        answeringClusters(requests(cls2, NS, ip, 8080, 5, family)),
        `${family} by ClusterSet IP ${ip}`,
      ).to.deep.equal(Array(5).fill('cls1'));
    }

    await eventually(
      'cls3: ServiceImport dual is not Ready: IPFamilyNotSupported',
      async () => (await importReady(cls3(), 'dual'))?.reason === 'IPFamilyNotSupported',
      60_000,
    );
    expect((await importReady(cls3(), 'dual'))?.status).to.equal('False');
  });

  it('I4, I5: SingleStack IPv6 gets one IPv6 ClusterSet IP, an AAAA record and no A record in cls2, and IPFamilyNotSupported in the IPv4-only cls3', async () => {
    const { cls1, cls2 } = e2e();
    cls1.apply([serviceExport(NS, 'v6')]);
    const name = `v6.${NS}.svc.clusterset.local`;
    await eventually(
      'a cls2 pod reaches cls1 over IPv6',
      () => answeringClusters(requests(cls2, NS, name, 8080, 1, 'IPv6'))[0] === 'cls1',
      90_000,
    );
    const si = await cls2.serviceImport(NS, 'v6');
    expect(si!.spec.ipFamilies).to.deep.equal(['IPv6']);
    expect(si!.spec.ips).to.have.length(1);
    expect(ipInCidr(si!.spec.ips![0]!, cls2.cluster.serviceCidrs[1]!)).to.equal(true);
    expect(Object.keys(await importedByFamily(cls2, 'v6'))).to.deep.equal(['IPv6']);
    expect(dig(cls2, NS, name, 'AAAA')).to.deep.equal(si!.spec.ips);
    expect(dig(cls2, NS, name, 'A')).to.deep.equal([]);
    await eventually(
      'cls3: ServiceImport v6 is not Ready: IPFamilyNotSupported',
      async () => (await importReady(cls3(), 'v6'))?.reason === 'IPFamilyNotSupported',
      60_000,
    );
  });

  it("X3: PreferDualStack exported from a dual-stack and an IPv4-only cluster is an IPFamilyConflict; the older export's families win, IPv4 reaches both clusters and IPv6 only cls1", async () => {
    const { cls1, cls2 } = e2e();
    cls1.apply([serviceExport(NS, 'prefer')]);
    await eventually(
      'cls2: ServiceImport prefer from cls1',
      async () => ((await cls2.serviceImport(NS, 'prefer'))?.status?.clusters ?? []).length === 1,
      60_000,
    );
    cls3().apply([serviceExport(NS, 'prefer')]);
    await eventually(
      'cls3: ServiceExport prefer has Conflict IPFamilyConflict',
      async () => {
        const c = condition(await cls3().serviceExport(NS, 'prefer'), 'Conflict');
        return c?.status === 'True' && (c.reason ?? '').split(',').includes('IPFamilyConflict');
      },
      60_000,
    );
    const si = await cls2.serviceImport(NS, 'prefer');
    expect(si!.spec.ipFamilies).to.deep.equal(['IPv4', 'IPv6']);
    const name = `prefer.${NS}.svc.clusterset.local`;
    await eventually(
      'a cls2 pod gets answers from cls1 and cls3 over IPv4',
      () => {
        const seen = new Set(answeringClusters(requests(cls2, NS, name, 8080, 15, 'IPv4')));
        return seen.has('cls1') && seen.has('cls3') && !seen.has('none');
      },
      60_000,
    );
    expect(new Set(answeringClusters(requests(cls2, NS, name, 8080, 10, 'IPv6')))).to.deep.equal(new Set(['cls1']));
  });

  it("D2: a dual-stack Headless export resolves to every pod's address of each family (A, AAAA), per pod by <hostname>.<clusterid> names that connect over each, and as SRV", async () => {
    const { cls1, cls2 } = e2e();
    cls1.apply([serviceExport(NS, 'web')]);
    const name = `web.${NS}.svc.clusterset.local`;
    const ips = { IPv4: await podIps(cls1, 'web', 'IPv4'), IPv6: await podIps(cls1, 'web', 'IPv6') };
    await eventually(
      'A and AAAA records of both web pods in cls2',
      () =>
        JSON.stringify(dig(cls2, NS, name, 'A').sort()) === JSON.stringify(Object.values(ips.IPv4).sort()) &&
        JSON.stringify(dig(cls2, NS, name, 'AAAA').sort()) === JSON.stringify(Object.values(ips.IPv6).sort()),
      90_000,
    );
    for (const pod of ['web-0', 'web-1']) {
      expect(dig(cls2, NS, `${pod}.cls1.${name}`, 'A')).to.deep.equal([ips.IPv4[pod]]);
      expect(dig(cls2, NS, `${pod}.cls1.${name}`, 'AAAA')).to.deep.equal([ips.IPv6[pod]]);
      for (const family of ['IPv4', 'IPv6'] as const) {
        expect(requests(cls2, NS, `${pod}.cls1.${name}`, 8080, 1, family)[0], family).to.equal(
          `cluster=cls1 pod=${pod} port=8080`,
        );
      }
    }
    // priority weight port target: one target per pod, whatever its number of families
    const srv = dig(cls2, NS, name, 'SRV')
      .map((r) => r.split(' ').slice(2).join(' '))
      .sort();
    expect(srv).to.deep.equal([`8080 web-0.cls1.${name}.`, `8080 web-1.cls1.${name}.`]);
  });
});
