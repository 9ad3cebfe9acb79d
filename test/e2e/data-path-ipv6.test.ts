// An IPv6-only ClusterSet on the data path (startClusterSet({ dataPath: true, ipFamilies: ['IPv6'] })): pods, Services,
// kube-proxy (ip6tables) and cluster DNS of both clusters are IPv6 only. What a pod of cls2 gets for a service exported
// from cls1: an IPv6 ClusterSet IP, IPv6 EndpointSlices, AAAA records and no A record, headless per-pod names and SRV
// targets, connections over IPv6; and what Cloud Map holds for it: AWS_INSTANCE_IPV6 instances.
import { DiscoverInstancesCommand } from '@aws-sdk/client-servicediscovery';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { ipInCidr, missingDataPathPrerequisites } from '../../hack/testbed/index.ts';
import { LABEL_SERVICE_NAME } from '../../src/core/names.ts';
import { requirePrerequisite } from '../support/prerequisites.ts';
import { withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, service, serviceExport } from '../support/workloads.ts';
import {
  answeringClusters,
  clientPod,
  dig,
  echoDeployment,
  echoStatefulSet,
  podNames,
  readyPods,
  requests,
} from '../support/data-path-pods.ts';

const NS = 'data-path-ipv6';

describe('e2e: an IPv6-only ClusterSet on the data path, requests from pods across clusters (E1, I1, I4, D1, D2)', function () {
  this.timeout(240_000);
  before(function () {
    const missing = missingDataPathPrerequisites();
    requirePrerequisite(this, "the testbed's data path", missing.length === 0 ? undefined : missing.join('; '));
  });
  const e2e = withE2E({ clusterSet: { dataPath: true, ipFamilies: ['IPv6'] }, namespaces: [NS] });

  before(async function () {
    this.timeout(240_000);
    const { clusters, cls1 } = e2e();
    await createNamespaces(clusters, NS);
    for (const c of clusters) c.apply([clientPod(NS)]);
    cls1.apply([
      echoDeployment(NS, 'cls1', 'echo', 2, [{ name: 'tcp', port: 8080 }]),
      service(NS, 'echo', { ports: [{ name: 'tcp', port: 8080 }] }),
      echoStatefulSet(NS, 'cls1', 'web', 2, 8080),
      service(NS, 'web', { ports: [{ name: 'tcp', port: 8080 }], headless: true }),
    ]);
    await readyPods(cls1, NS, 'echo', 2);
    await readyPods(cls1, NS, 'web', 2);
    for (const c of clusters) c.kubectl(['wait', '-n', NS, '--for=condition=Ready', 'pod/client', '--timeout=120s']);
  });

  it("the clusters are IPv6 only: pods and Services get IPv6 addresses from their cluster's ranges", async () => {
    for (const c of e2e().clusters) {
      expect(c.cluster.ipFamilies).to.deep.equal(['IPv6']);
      const pods = await c.kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS });
      for (const p of pods.items) {
        expect(p.status?.podIPs?.map((x) => x.ip)).to.have.length(1);
        expect(
          ipInCidr(p.status!.podIP!, c.cluster.realNode!.podCidr),
          `${p.status?.podIP} in ${c.cluster.realNode!.podCidr}`,
        ).to.equal(true);
      }
    }
    const svc = await e2e()
      .cls1.kubeConfig.makeApiClient(CoreV1Api)
      .readNamespacedService({ name: 'echo', namespace: NS });
    expect(svc.spec?.ipFamilies).to.deep.equal(['IPv6']);
    expect(ipInCidr(svc.spec!.clusterIP!, e2e().cls1.cluster.serviceCidr)).to.equal(true);
  });

  it('E1, I1, I4: a ClusterSetIP export gets an IPv6 ClusterSet IP, IPv6 slices, an AAAA record and no A record, and is reached over IPv6 from a cls2 pod', async () => {
    const { cls1, cls2, cloudMap } = e2e();
    cls1.apply([serviceExport(NS, 'echo')]);
    const name = `echo.${NS}.svc.clusterset.local`;
    await eventually(
      "a cls2 pod reaches cls1's echo by its clusterset name",
      () => answeringClusters(requests(cls2, NS, name, 8080, 1))[0] === 'cls1',
      90_000,
    );

    const si = await cls2.serviceImport(NS, 'echo');
    expect(si!.spec.ips).to.have.length(1);
    const ip = si!.spec.ips![0]!;
    expect(ipInCidr(ip, cls2.cluster.serviceCidr), `${ip} in ${cls2.cluster.serviceCidr}`).to.equal(true);
    expect(si!.spec.ipFamilies).to.deep.equal(['IPv6']);
    const podIps = (
      await cls1.kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: 'app=echo' })
    ).items
      .map((p) => p.status!.podIP!)
      .sort();
    const slices = await cls2.endpointSlices(NS, `${LABEL_SERVICE_NAME}=echo`);
    expect(slices.map((s) => s.addressType)).to.deep.equal(['IPv6']);
    expect(slices.flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses)).sort()).to.deep.equal(podIps);

    expect(dig(cls2, NS, name, 'AAAA')).to.deep.equal([ip]);
    expect(dig(cls2, NS, name, 'A')).to.deep.equal([]);
    expect(answeringClusters(requests(cls2, NS, name, 8080, 10, 'IPv6'))).to.deep.equal(Array(10).fill('cls1'));
    const pods = new Set(requests(cls2, NS, ip, 8080, 20, 'IPv6').map((a) => /pod=(\S+)/.exec(a)?.[1]));
    expect([...pods].sort()).to.deep.equal(await podNames(cls1, NS, 'echo'));

    // M2: Cloud Map holds each endpoint under AWS_INSTANCE_IPV6, never AWS_INSTANCE_IPV4.
    const instances =
      (
        await cloudMap.send(
          new DiscoverInstancesCommand({ NamespaceName: NS, ServiceName: 'echo', HealthStatus: 'ALL' }),
        )
      ).Instances ?? [];
    const endpoints = instances.filter((i) => i.Attributes?.AWS_INSTANCE_IPV6 !== undefined);
    expect([...new Set(endpoints.map((i) => i.Attributes!.AWS_INSTANCE_IPV6))].sort()).to.deep.equal(podIps);
    expect(instances.filter((i) => i.Attributes?.AWS_INSTANCE_IPV4 !== undefined)).to.deep.equal([]);
  });

  it("D2: a Headless export resolves to every pod's IPv6 address (AAAA), per pod by <hostname>.<clusterid> names that connect, and as SRV", async () => {
    const { cls1, cls2 } = e2e();
    cls1.apply([serviceExport(NS, 'web')]);
    const pods = await cls1.kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: NS, labelSelector: 'app=web' });
    const ipOf = Object.fromEntries(pods.items.map((p) => [p.metadata!.name!, p.status!.podIP!]));
    const name = `web.${NS}.svc.clusterset.local`;
    await eventually(
      'AAAA records of both web pods in cls2',
      () => JSON.stringify(dig(cls2, NS, name, 'AAAA').sort()) === JSON.stringify(Object.values(ipOf).sort()),
      90_000,
    );
    expect(dig(cls2, NS, name, 'A')).to.deep.equal([]);
    for (const pod of ['web-0', 'web-1']) {
      expect(dig(cls2, NS, `${pod}.cls1.${name}`, 'AAAA')).to.deep.equal([ipOf[pod]]);
      expect(requests(cls2, NS, `${pod}.cls1.${name}`, 8080, 1, 'IPv6')[0]).to.equal(
        `cluster=cls1 pod=${pod} port=8080`,
      );
    }
    // priority weight port target
    const srv = dig(cls2, NS, name, 'SRV')
      .map((r) => r.split(' ').slice(2).join(' '))
      .sort();
    expect(srv).to.deep.equal([`8080 web-0.cls1.${name}.`, `8080 web-1.cls1.${name}.`]);
  });
});
