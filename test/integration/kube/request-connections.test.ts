// A burst of requests (a start, when every reconciler asks at once) opens at most MAX_REQUEST_CONNECTIONS connections
// to the apiserver and the rest wait for one (M9: an idle connection holds its TLS state); watches and the Lease have
// connections of their own, so a renewal never waits behind the burst. Through a proxy that counts connections
// and slows every answer, in front of a real apiserver.
import { expect } from 'chai';
import { KubeClient, MAX_REQUEST_CONNECTIONS } from '../../../src/kube/client.ts';
import { startCuttableProxy, type CuttableProxy } from '../../support/proxy.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { kubeConfigVia } from './support.ts';

describe('kube client: connections of a burst are bounded; watches and the Lease are not queued behind it', function () {
  this.timeout(60_000);
  const testbed = withClusterSet();
  let proxy: CuttableProxy;
  let client: KubeClient;

  beforeEach(async () => {
    const cluster = testbed().clusters[0]!;
    proxy = await startCuttableProxy(cluster.server);
    client = new KubeClient(kubeConfigVia(cluster.kubeConfig(), proxy.url));
  });
  afterEach(async () => {
    client.close();
    await proxy.close();
  });

  it(`answers ${6 * MAX_REQUEST_CONNECTIONS} requests over ${MAX_REQUEST_CONNECTIONS} connections, and a Lease request at once`, async () => {
    const answerMs = 400;
    proxy.delay(answerMs);
    const stop = new AbortController();
    let watchOpen = false;
    const watching = client.watch(
      '/api/v1/namespaces/default/configmaps',
      {},
      () => {},
      stop.signal,
      60_000,
      () => (watchOpen = true),
    );
    try {
      const started = performance.now();
      const burst = Array.from({ length: 6 * MAX_REQUEST_CONNECTIONS }, () =>
        client
          .request<{ metadata: { name: string } }>({ method: 'GET', path: '/api/v1/namespaces/default' })
          .then((ns) => ({ name: ns.metadata.name, ms: performance.now() - started })),
      );
      // A Lease read that does not exist: the apiserver's 404 is its answer.
      const lease = client
        .request({ method: 'GET', path: '/apis/coordination.k8s.io/v1/namespaces/default/leases/none', reserved: true })
        .then(
          () => 'found',
          (err: Error) => err.message,
        )
        .then((answer) => ({ answer, ms: performance.now() - started }));
      const answers = await Promise.all(burst);
      const leaseAnswer = await lease;

      expect(answers.every((a) => a.name === 'default')).to.equal(true);
      expect(leaseAnswer.answer).to.match(/404/);
      // The burst's requests went out MAX_REQUEST_CONNECTIONS at a time, each answer `answerMs` late: six rounds.
      const last = Math.max(...answers.map((a) => a.ms));
      expect(last).to.be.at.least(6 * answerMs);
      // The Lease read took its own connection: a TLS handshake and one answer, not a place at the end of the queue.
      expect(leaseAnswer.ms).to.be.below(last - 2 * answerMs);
      expect(watchOpen).to.equal(true);
      // The burst's connections, the watch's and the Lease's.
      expect(proxy.mostConnections).to.be.within(MAX_REQUEST_CONNECTIONS, MAX_REQUEST_CONNECTIONS + 2);
    } finally {
      stop.abort();
      await watching;
    }
  });
});
