// A cluster of the testbed behaves like a real one for Deployments, Services and EndpointSlices.
import {
  AppsV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  makeInformer,
  type Informer,
  type KubeConfig,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import { expect } from 'chai';
import { ipInCidr, type TestCluster } from '../../../hack/testbed/index.ts';
import { eventually } from '../../support/eventually.ts';
import { withClusterSet } from '../../support/clusterset.ts';
import { createNamespace, deleteNamespace } from '../../support/kube.ts';

const NS = 'demo';
const APP = 'nginx-hello';

/** EndpointSlices of one Service as seen through a watch (informer), with every event counted. */
class SliceWatch {
  readonly slices = new Map<string, V1EndpointSlice>();
  readonly events: { type: 'add' | 'update' | 'delete'; name: string }[] = [];
  readonly informer: Informer<V1EndpointSlice>;

  constructor(kc: KubeConfig, namespace: string, service: string) {
    const api = kc.makeApiClient(DiscoveryV1Api);
    const selector = `kubernetes.io/service-name=${service}`;
    this.informer = makeInformer(
      kc,
      `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
      () => api.listNamespacedEndpointSlice({ namespace, labelSelector: selector }),
      selector,
    );
    for (const type of ['add', 'update'] as const) {
      this.informer.on(type, (s) => {
        this.events.push({ type, name: s.metadata?.name ?? '' });
        this.slices.set(s.metadata?.name ?? '', s);
      });
    }
    this.informer.on('delete', (s) => {
      this.events.push({ type: 'delete', name: s.metadata?.name ?? '' });
      this.slices.delete(s.metadata?.name ?? '');
    });
  }

  /** Addresses of ready endpoints over every slice of the Service. */
  readyAddresses(): string[] {
    return [...this.slices.values()]
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => e.conditions?.ready === true)
      .flatMap((e) => e.addresses)
      .sort();
  }
}

async function runningPodIps(core: CoreV1Api): Promise<string[]> {
  const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: `app=${APP}` });
  return pods.items
    .filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp)
    .map((p) => p.status?.podIP ?? '')
    .sort();
}

describe('testbed cluster (Deployment, ClusterIP Service, EndpointSlices, watch)', function () {
  this.timeout(120_000);
  const testbed = withClusterSet();
  let cls1: TestCluster;
  let kc: KubeConfig;
  let watch: SliceWatch;

  before(async () => {
    cls1 = testbed().clusters[0]!;
    kc = cls1.kubeConfig();
    await createNamespace(kc, NS);
    watch = new SliceWatch(kc, NS, APP);
    await watch.informer.start();
  });

  after(async () => {
    await watch?.informer.stop();
    if (kc) await deleteNamespace(kc, NS);
  });

  it("runs nginx-hello with 3 Running pods whose IPs are in cls1's pod CIDR, and an EndpointSlice lists them ready", async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const labels = { app: APP };
    await apps.createNamespacedDeployment({
      namespace: NS,
      body: {
        metadata: { name: APP, labels },
        spec: {
          replicas: 3,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [{ name: 'hello', image: 'nginxdemos/hello', ports: [{ containerPort: 80, name: 'http' }] }],
            },
          },
        },
      },
    });
    const service = await core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: APP },
        spec: { type: 'ClusterIP', selector: labels, ports: [{ name: 'http', port: 80, targetPort: 80 }] },
      },
    });

    expect(service.spec?.clusterIP, 'ClusterIP').to.be.a('string');
    expect(
      ipInCidr(service.spec!.clusterIP!, cls1.serviceCidr),
      `${service.spec?.clusterIP} in ${cls1.serviceCidr}`,
    ).to.equal(true);

    await eventually(
      '3 ready endpoints in the watched EndpointSlices',
      async () => watch.readyAddresses().length === 3,
      60_000,
    );
    const podIps = await runningPodIps(core);
    expect(podIps).to.have.length(3);
    for (const ip of podIps) expect(ipInCidr(ip, cls1.podCidr), `${ip} in ${cls1.podCidr}`).to.equal(true);
    expect(new Set(podIps).size, 'distinct pod IPs').to.equal(3);
    expect(watch.readyAddresses()).to.deep.equal(podIps);
  });

  it('updates the EndpointSlice, seen by the watch, when the Deployment is scaled to 4', async () => {
    const apps = kc.makeApiClient(AppsV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const eventsBefore = watch.events.length;
    await apps.patchNamespacedDeploymentScale({
      name: APP,
      namespace: NS,
      body: [{ op: 'replace', path: '/spec/replicas', value: 4 }],
    });

    await eventually(
      '4 ready endpoints in the watched EndpointSlices',
      async () => watch.readyAddresses().length === 4,
      60_000,
    );
    const podIps = await runningPodIps(core);
    expect(podIps).to.have.length(4);
    expect(watch.readyAddresses()).to.deep.equal(podIps);
    for (const ip of podIps) expect(ipInCidr(ip, cls1.podCidr), `${ip} in ${cls1.podCidr}`).to.equal(true);
    expect(
      watch.events.slice(eventsBefore).some((e) => e.type === 'update' || e.type === 'add'),
      'a watch event after scaling',
    ).to.equal(true);
  });
});
