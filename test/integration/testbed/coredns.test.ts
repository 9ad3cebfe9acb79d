// The testbed's stock CoreDNS (the kubernetes plugin with its multicluster option), started against cluster 1, answers
// a clusterset.local query.
import { KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { expect } from 'chai';
import { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { startCoreDns, type CoreDns } from '../../../hack/testbed/index.ts';
import { withClusterSet } from '../../support/clusterset.ts';

describe('testbed CoreDNS serving clusterset.local (stock, multicluster option)', function () {
  this.timeout(60_000);
  const testbed = withClusterSet();
  let dns: CoreDns | undefined;

  before(async function () {
    const cls1 = testbed().clusters[0]!;
    // The multicluster option lists and watches ServiceImports: until their CRD exists it answers SERVFAIL, not NXDOMAIN.
    await createServiceImportCrd(cls1.kubeConfig());
    dns = await startCoreDns({
      kubeconfigPath: cls1.kubeconfigPath,
      context: cls1.context,
      dir: join(testbed().dir, 'coredns-cls1'),
    });
  });

  after(async () => {
    await dns?.stop();
  });

  it('answers NXDOMAIN for an unknown name in clusterset.local', async () => {
    const resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([dns!.address]);
    const answer = await resolver.resolve4('unknown.demo.svc.clusterset.local').then(
      () => 'answered',
      (err: { code?: string }) => err.code,
    );
    expect(answer).to.equal('ENOTFOUND');
  });
});

async function createServiceImportCrd(kc: KubeConfig): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const crdPath = join(import.meta.dirname, '../../../crds/serviceimports.yaml');
  for (const doc of parseAllDocuments(readFileSync(crdPath, 'utf8'))) {
    const obj = doc.toJS() as KubernetesObject;
    try {
      await api.create(obj);
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
    }
  }
}
