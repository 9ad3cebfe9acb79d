// Two clusters that share one pod CIDR, so their pods get the same IPs (a real case with separate VPCs): both export the
// same service and neither cluster's instances overwrite the other's (M3, M4).
import { DiscoverInstancesCommand } from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER } from '../../src/core/names.ts';
import { condition, withE2E } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, deployment, runningPodIps, service, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-overlap';
const NAME = 'twin';

describe('e2e: overlapping pod IPs in the two clusters (M3, M4)', function () {
  this.timeout(240_000);
  const e2e = withE2E({ clusterSet: { sharedPodCidr: true }, namespaces: [NS] });

  it('M3, M4: the same pod IPs exported from both clusters stay two sets of instances and two sets of slices', async () => {
    const { clusters, cloudMap } = e2e();
    await createNamespaces(clusters, NS);
    const ips: Record<string, string[]> = {};
    for (const cluster of clusters) {
      cluster.apply([deployment(NS, NAME, 2, undefined, cluster.cluster.nodeNames[0]), service(NS, NAME)]);
      await eventually(
        `2 running pods in ${cluster.id}`,
        async () => (ips[cluster.id] = await runningPodIps(cluster, NS, NAME)).length === 2,
      );
      expect(
        new Set(ips[cluster.id]).size,
        `${cluster.id}'s pod IPs are distinct within the cluster: ${ips[cluster.id]?.join(', ')}`,
      ).to.equal(2);
    }
    const shared = ips.cls1!.filter((ip) => ips.cls2!.includes(ip));
    expect(
      shared,
      `pod IPs in both clusters (cls1 ${ips.cls1?.join(', ')}, cls2 ${ips.cls2?.join(', ')})`,
    ).to.not.deep.equal([]);
    for (const cluster of clusters) cluster.apply([serviceExport(NS, NAME)]);

    for (const cluster of clusters) {
      await eventually(`${cluster.id}: both clusters' endpoints imported`, async () => {
        const bySource: Record<string, string[]> = {};
        for (const slice of await cluster.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${NAME}`)) {
          const source = slice.metadata!.labels![LABEL_SOURCE_CLUSTER]!;
          bySource[source] = [
            ...(bySource[source] ?? []),
            ...(slice.endpoints ?? []).map((e) => e.addresses[0]!),
          ].sort();
        }
        const want = JSON.stringify({ cls1: ips.cls1, cls2: ips.cls2 });
        if (JSON.stringify(bySource) !== want)
          throw new Error(`imported endpoints by source cluster ${JSON.stringify(bySource)}, want ${want}`);
        return true;
      });
      const si = await cluster.serviceImport(NS, NAME);
      expect(si?.status?.clusters).to.deep.equal([{ cluster: 'cls1' }, { cluster: 'cls2' }]);
      // Peers are told when the writes are submitted, so imports can show before the exporter's status is written.
      await eventually(
        `${cluster.id}: Conflict=False on its ServiceExport`,
        async () => condition(await cluster.serviceExport(NS, NAME), 'Conflict')?.status === 'False',
      );
    }
    const found = await cloudMap.send(
      new DiscoverInstancesCommand({ NamespaceName: NS, ServiceName: NAME, HealthStatus: 'ALL' }),
    );
    const instances = new Map((found.Instances ?? []).map((i) => [i.InstanceId!, i.Attributes ?? {}]));
    expect(instances.size, 'distinct instance ids').to.equal(4);
    expect([...instances.values()].map((a) => `${a.CLUSTER_ID}/${a.AWS_INSTANCE_IPV4}`).sort()).to.deep.equal(
      [...ips.cls1!.map((ip) => `cls1/${ip}`), ...ips.cls2!.map((ip) => `cls2/${ip}`)].sort(),
    );
  });
});
