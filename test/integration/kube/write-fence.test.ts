// A leader that lost its Lease (or was paused past its renew deadline) sends no Kubernetes write: the client refuses
// it unsent, while reads, the Lease and Events go through (M4: the same fence as its Cloud Map calls).
import { expect } from 'chai';
import { KubeClient } from '../../../src/kube/client.ts';
import { loadKubeAccess } from '../../../src/kube/kube-access.ts';
import { withClusterSet } from '../../support/clusterset.ts';

describe('kube client: writes fenced by the leader election', function () {
  this.timeout(60_000);
  const testbed = withClusterSet();

  it('refuses writes unsent while fenced, lets reads, the Lease and Events through, and writes again once unfenced', async () => {
    const cluster = testbed().clusters[0]!;
    const client = new KubeClient(await loadKubeAccess(cluster.kubeconfigPath));
    const ns = 'default';
    const name = `fence-${Date.now()}`;
    const configMaps = `/api/v1/namespaces/${ns}/configmaps`;
    try {
      await client.request({ method: 'POST', path: configMaps, body: { metadata: { name }, data: { v: '1' } } });
      let reason: string | undefined = 'the Lease was last renewed 12 s ago, past the renew deadline of 10 s';
      client.fenceWrites(() => reason);

      const refused = await client
        .request({
          method: 'PATCH',
          path: `${configMaps}/${name}`,
          contentType: 'application/merge-patch+json',
          body: { data: { v: '2' } },
        })
        .then(
          () => undefined,
          (err: Error) => err,
        );
      expect(refused?.message).to.match(/not sent: the Lease was last renewed 12 s ago/);
      const read = await client.request<{ data: { v: string } }>({ method: 'GET', path: `${configMaps}/${name}` });
      expect(read.data.v).to.equal('1');
      await client.request({
        method: 'POST',
        path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
        body: { metadata: { name } },
      });
      await client.request({
        method: 'POST',
        path: `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
        body: {
          metadata: { name },
          eventTime: new Date().toISOString().replace('Z', '000Z'),
          reportingController: 'test',
          reportingInstance: 'test',
          action: 'Test',
          reason: 'Test',
          type: 'Normal',
          regarding: { kind: 'ConfigMap', namespace: ns, name },
        },
      });

      reason = undefined;
      await client.request({
        method: 'PATCH',
        path: `${configMaps}/${name}`,
        contentType: 'application/merge-patch+json',
        body: { data: { v: '2' } },
      });
      expect(
        (await client.request<{ data: { v: string } }>({ method: 'GET', path: `${configMaps}/${name}` })).data.v,
      ).to.equal('2');
    } finally {
      client.fenceWrites(() => undefined);
      for (const path of [
        `${configMaps}/${name}`,
        `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${name}`,
        `/apis/events.k8s.io/v1/namespaces/${ns}/events/${name}`,
      ]) {
        await client.request({ method: 'DELETE', path }).catch(() => undefined);
      }
      client.close();
    }
  });
});
