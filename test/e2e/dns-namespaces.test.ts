// Exports that resolve outside Kubernetes (docs/non-kubernetes.md): with --cloudmap-namespace-type=dns the
// ClusterSet's exports live in the private DNS namespace <ns>.<domain>, whose records the emulator keeps as Route 53
// would and the testbed's DNS server answers from. A host on the data path's bridge that belongs to no cluster (no
// kubeconfig, nothing of ours; its resolver is that server, as an EC2 instance's is the VPC's) resolves
// echo.<ns>.<domain> and reaches a pod of the exporting cluster; the records follow the pods.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import {
  addOutsideHost,
  coreDnsAvailability,
  missingDataPathPrerequisites,
  startNamespaceDns,
  type CoreDns,
  type OutsideHost,
} from '../../hack/testbed/index.ts';
import { echoDeployment, readyPods } from '../support/data-path-pods.ts';
import { withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { requirePrerequisite } from '../support/prerequisites.ts';
import { createNamespaces, service, serviceExport } from '../support/workloads.ts';

const NS = 'dns-namespace';
const DOMAIN = 'mcs.testbed.internal';
const NAME = `echo.${NS}.${DOMAIN}`;
const TTL_SECONDS = 5;

async function podIps(cluster: E2ECluster): Promise<string[]> {
  const pods = await cluster.kubeConfig
    .makeApiClient(CoreV1Api)
    .listNamespacedPod({ namespace: NS, labelSelector: 'app=echo' });
  return pods.items
    .filter((p) => !p.metadata?.deletionTimestamp && p.status?.podIP)
    .map((p) => p.status!.podIP!)
    .sort();
}

describe('e2e: exports that resolve outside Kubernetes (private DNS namespaces)', function () {
  this.timeout(240_000);
  const zoneDir = mkdtempSync(join(tmpdir(), 'mcs-e2e-zones-'));
  before(function () {
    const missing = missingDataPathPrerequisites();
    const coredns = coreDnsAvailability();
    if (!coredns.available) missing.push(coredns.reason);
    requirePrerequisite(
      this,
      "the testbed's data path and DNS server",
      missing.length === 0 ? undefined : missing.join('; '),
    );
  });
  const e2e = withE2E({
    clusterSet: { dataPath: true, cloudMap: { zoneDir } },
    namespaces: [NS],
    configEnv: {
      MCS_CLOUDMAP_NAMESPACE_TYPE: 'dns',
      MCS_DNS_NAMESPACE_DOMAIN: DOMAIN,
      MCS_DNS_NAMESPACE_VPC: 'vpc-0testbed',
      MCS_DNS_RECORD_TTL: String(TTL_SECONDS),
    },
  });
  let dns: CoreDns | undefined;
  let outside: OutsideHost | undefined;

  before(async function () {
    this.timeout(240_000);
    const { cs, cls1, clusters } = e2e();
    const plan = cs.dataPathPlan!;
    dns = await startNamespaceDns(zoneDir, cs.dir, plan.hostIp);
    outside = await addOutsideHost(plan, plan.hostIp);
    await createNamespaces(clusters, NS);
    cls1.apply([
      echoDeployment(NS, cls1.id, 'echo', 2, [{ name: 'tcp', port: 8080 }]),
      service(NS, 'echo', { ports: [{ name: 'tcp', port: 8080 }] }),
    ]);
    await readyPods(cls1, NS, 'echo', 2);
  });

  after(async () => {
    await outside?.remove();
    await dns?.stop();
  });

  it('a host outside every cluster resolves echo.<ns>.<domain> to the exporting pods and reaches one; the records follow a scale-down', async () => {
    const { cs, cls1, cls2 } = e2e();
    await cs.cloudMapControl.resetCalls();
    const exported = Date.now();
    cls1.apply([serviceExport(NS, 'echo')]);
    const pods = await podIps(cls1);
    await eventually(`${NAME} resolves to ${pods.join(', ')} outside the clusters`, async () => {
      const got = await outside!.resolve4(NAME);
      return JSON.stringify(got) === JSON.stringify(pods) || JSON.stringify(got);
    });
    const resolvable = Date.now();
    // Cloud Map's view: one DNS namespace, named for the domain, whose A records carry the configured TTL.
    const zones = await cs.cloudMapControl.dnsZones();
    expect(zones[`${NS}.${DOMAIN}`]!.map((r) => [r.name, r.type, r.ttl, r.value])).to.deep.equal(
      pods.map((ip) => [`${NAME}.`, 'A', TTL_SECONDS, ip]),
    );
    // By name, over the VPC's routes, with nothing but the resolver and curl.
    const answer = await outside!.exec('sh', ['-c', `curl -s --max-time 3 telnet://${NAME}:8080 </dev/null || true`]);
    expect(answer).to.match(/^cluster=cls1 pod=echo-\S+ port=8080/);
    // Importing clusters read the same namespace by the Kubernetes name: cls2 imports it as from an HTTP namespace.
    await eventually('cls2 imports echo', () =>
      cls2.kubectl(['get', 'serviceimport', '-n', NS, 'echo', '-o', 'name']).includes('echo'),
    );

    cls1.kubectl(['scale', '-n', NS, 'deployment/echo', '--replicas=1']);
    await readyPods(cls1, NS, 'echo', 1);
    const left = await podIps(cls1);
    await eventually(`${NAME} resolves to ${left.join(', ')} only`, async () => {
      const got = await outside!.resolve4(NAME);
      return JSON.stringify(got) === JSON.stringify(left) || JSON.stringify(got);
    });
    // The figures of docs/non-kubernetes.md "Costs": Cloud Map calls of both clusters' workers, counted at the emulator.
    const byApi = (await cs.cloudMapControl.calls()).byApi;
    const writes = [
      'CreatePrivateDnsNamespace',
      'CreateHttpNamespace',
      'CreateService',
      'RegisterInstance',
      'DeregisterInstance',
    ];
    console.log(
      `      export → resolvable outside: ${((resolvable - exported) / 1000).toFixed(1)} s; Cloud Map writes: ${writes
        .map((api) => `${api} ${Object.values(byApi[api] ?? {}).reduce((a, b) => a + b, 0)}`)
        .join(', ')}; all calls: ${Object.values(byApi)
        .flatMap((o) => Object.values(o))
        .reduce((a, b) => a + b, 0)}`,
    );
  });
});
