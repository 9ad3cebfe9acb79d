// With sharedPodCidr two clusters use the same pod range, so pod IPs really overlap between clusters
// (what M3's per-cluster instance ids must cope with).
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { ipInCidr } from '../../../hack/testbed/index.ts';
import { eventually } from '../../support/eventually.ts';
import { withOwnClusterSet } from '../../support/clusterset.ts';

async function runPinnedPod(kc: KubeConfig, nodeName: string, name = 'overlap'): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedPod({
    namespace: 'default',
    body: {
      metadata: { name },
      spec: { nodeName, containers: [{ name: 'hello', image: 'nginxdemos/hello' }] },
    },
  });
  let ip = '';
  await eventually(
    `pod default/${name} Running on ${nodeName}`,
    async () => {
      const pod = await core.readNamespacedPod({ name, namespace: 'default' });
      ip = pod.status?.podIP ?? '';
      return pod.status?.phase === 'Running' && ip !== '';
    },
    30_000,
  );
  return ip;
}

describe('testbed with sharedPodCidr (overlapping pod CIDRs)', function () {
  this.timeout(60_000);
  const testbed = withOwnClusterSet({ clusters: 2, sharedPodCidr: true });

  it('gives both clusters the same pod CIDR and node ranges', async () => {
    const [cls1, cls2] = testbed().clusters;
    expect(cls1!.podCidr).to.equal(cls2!.podCidr);
    const nodeCidrs = async (kc: KubeConfig) =>
      (await kc.makeApiClient(CoreV1Api).listNode()).items.map((n) => n.spec?.podCIDR).sort();
    expect(await nodeCidrs(cls1!.kubeConfig())).to.deep.equal(await nodeCidrs(cls2!.kubeConfig()));
    expect(cls1!.serviceCidr, 'service CIDRs stay distinct').to.not.equal(cls2!.serviceCidr);
  });

  it('hands out the same pod IP in both clusters', async () => {
    const [cls1, cls2] = testbed().clusters;
    const ip1 = await runPinnedPod(cls1!.kubeConfig(), cls1!.nodeNames[0]!);
    const ip2 = await runPinnedPod(cls2!.kubeConfig(), cls2!.nodeNames[0]!);
    expect(ipInCidr(ip1, cls1!.podCidr), `${ip1} in ${cls1!.podCidr}`).to.equal(true);
    expect(ip2).to.equal(ip1);
  });

  // kwok 0.7 creates a node's IP pool on its first pod without a lock, so parallel pod workers could give the first
  // pods of a fresh node the same IP (hack/testbed/kwok-configuration.yaml runs one at a time).
  it('gives pods started at once on a fresh node distinct IPs', async () => {
    const [cls1] = testbed().clusters;
    const node = cls1!.nodeNames[cls1!.nodeNames.length - 1]!;
    const ips = await Promise.all(
      Array.from({ length: 12 }, (_, i) => runPinnedPod(cls1!.kubeConfig(), node, `at-once-${i}`)),
    );
    expect(new Set(ips).size, `pod IPs: ${ips.join(' ')}`).to.equal(ips.length);
  });
});
