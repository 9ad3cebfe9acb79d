// Traffic that crosses clusters: both processes of mcs-cloudmap on a ClusterSet whose clusters each have a real node
// (startClusterSet({ dataPath: true }), docs/testbed.md "Data path"). Every assertion is about what a request from
// inside a pod gets: which cluster's pod answered, which names resolve. The servers answer
// `cluster=<id> pod=<name> port=<port>` on each of their ports. The export-to-first-answer figures are a benchmark:
// `npm run bench:data-path` (docs/benchmarks.md).
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { expect } from 'chai';
import { localImageRef, podman } from '../../hack/local/container.ts';
import { importIntoRealNode, missingDataPathPrerequisites } from '../../hack/testbed/index.ts';
import { packageVersion } from '../../src/config/version.ts';
import { requirePrerequisite } from '../support/prerequisites.ts';
import { condition, withE2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, service, serviceExport, type PortSpec } from '../support/workloads.ts';
import {
  answeringClusters,
  clientPod,
  firstAnswer,
  dig as digIn,
  echoDeployment as echoDeploymentIn,
  echoStatefulSet as echoStatefulSetIn,
  podNames as podNamesIn,
  readyPods as readyPodsIn,
  requests as requestsIn,
} from '../support/data-path-pods.ts';

const NS = 'data-path';
const CLIENT_POD = clientPod(NS);
const echoDeployment = (clusterId: string, name: string, replicas: number, ports: readonly PortSpec[]) =>
  echoDeploymentIn(NS, clusterId, name, replicas, ports);
const echoStatefulSet = (clusterId: string, name: string, replicas: number, port: number) =>
  echoStatefulSetIn(NS, clusterId, name, replicas, port);
const requests = (cluster: E2ECluster, host: string, port: number, count: number) =>
  requestsIn(cluster, NS, host, port, count);
const dig = (cluster: E2ECluster, name: string, type = 'A') => digIn(cluster, NS, name, type);
const podNames = (cluster: E2ECluster, app: string) => podNamesIn(cluster, NS, app);
const readyPods = (cluster: E2ECluster, app: string, count: number) => readyPodsIn(cluster, NS, app, count);

describe('e2e: the data path, requests from pods across clusters (E1, I1, D1, D2)', function () {
  this.timeout(240_000);
  // Registered before withE2E's hooks, so a machine that cannot host real nodes says what it lacks before any start.
  before(function () {
    const missing = missingDataPathPrerequisites();
    requirePrerequisite(this, "the testbed's data path", missing.length === 0 ? undefined : missing.join('; '));
  });
  const e2e = withE2E({ clusterSet: { dataPath: true }, namespaces: [NS] });

  before(async function () {
    this.timeout(240_000);
    const { clusters } = e2e();
    await createNamespaces(clusters, NS);
    for (const c of clusters) {
      c.apply([
        CLIENT_POD,
        echoDeployment(c.id, 'echo', 2, [{ name: 'tcp', port: 8080 }]),
        service(NS, 'echo', { ports: [{ name: 'tcp', port: 8080 }] }),
      ]);
    }
    // Only in cls1, never exported.
    e2e().cls1.apply([service(NS, 'hidden', { ports: [{ name: 'tcp', port: 8080 }], selector: { app: 'echo' } })]);
    for (const c of clusters) {
      await readyPods(c, 'echo', 2);
      c.kubectl(['wait', '-n', NS, '--for=condition=Ready', 'pod/client', '--timeout=120s']);
    }
  });

  it('every pod runs on the real node and the kwok nodes keep only their simulated pods', async () => {
    for (const c of e2e().clusters) {
      const pods = await c.kubeConfig.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS });
      expect(pods.items.map((p) => p.spec?.nodeName)).to.satisfy((nodes: string[]) =>
        nodes.every((n) => n === c.cluster.realNode!.name),
      );
    }
  });

  it('E1, I1: a ClusterSetIP service exported from cls1 is reached from a cls2 pod by its clusterset name and by its ClusterSet IP, answered only by cls1 though cls2 has a Service of the same name', async () => {
    const { cls1, cls2 } = e2e();
    const answered = firstAnswer(cls2, NS, `echo.${NS}.svc.clusterset.local`, 8080, 'cluster=cls1', 60);
    cls1.apply([serviceExport(NS, 'echo')]);
    await answered;

    expect(answeringClusters(requests(cls2, `echo.${NS}.svc.clusterset.local`, 8080, 20))).to.deep.equal(
      Array(20).fill('cls1'),
    );
    const si = await cls2.serviceImport(NS, 'echo');
    const clusterSetIp = si!.spec.ips![0]!;
    expect(answeringClusters(requests(cls2, clusterSetIp, 8080, 20))).to.deep.equal(Array(20).fill('cls1'));
    // Both cls1 pods take requests.
    const pods = new Set(requests(cls2, clusterSetIp, 8080, 30).map((a) => /pod=(\S+)/.exec(a)?.[1]));
    expect([...pods].sort()).to.deep.equal(await podNames(cls1, 'echo'));
  });

  it('D1: a Service that is not exported has no clusterset name and cannot be reached by one', () => {
    const { cls2 } = e2e();
    expect(dig(cls2, `hidden.${NS}.svc.clusterset.local`)).to.deep.equal([]);
    expect(answeringClusters(requests(cls2, `hidden.${NS}.svc.clusterset.local`, 8080, 3))).to.deep.equal([
      'none',
      'none',
      'none',
    ]);
  });

  it("D1: cluster.local names stay local: cls2's echo is answered by cls2 only, cls1's hidden does not resolve in cls2", () => {
    const { cls2 } = e2e();
    expect(answeringClusters(requests(cls2, `echo.${NS}.svc.cluster.local`, 8080, 10))).to.deep.equal(
      Array(10).fill('cls2'),
    );
    expect(dig(cls2, `hidden.${NS}.svc.cluster.local`)).to.deep.equal([]);
  });

  it('E1: exported from both clusters, the clusterset name is answered by the pods of both', async () => {
    const { cls1, cls2 } = e2e();
    cls2.apply([serviceExport(NS, 'echo')]);
    await eventually('cls1: ServiceImport echo lists cls1 and cls2', async () => {
      const si = await cls1.serviceImport(NS, 'echo');
      return JSON.stringify((si?.status?.clusters ?? []).map((c) => c.cluster).sort()) === '["cls1","cls2"]';
    });
    await eventually(
      'a cls1 pod gets answers from both clusters',
      () => {
        const seen = new Set(answeringClusters(requests(cls1, `echo.${NS}.svc.clusterset.local`, 8080, 20)));
        return seen.has('cls1') && seen.has('cls2') && !seen.has('none');
      },
      60_000,
    );
  });

  it('E8: endpoints that turn unready stop receiving new connections, and a cluster scaled to zero sends everything to the other', async () => {
    const { cls1, cls2 } = e2e();
    const only = (cluster: E2ECluster, expected: string) => async () =>
      answeringClusters(requests(cluster, `echo.${NS}.svc.clusterset.local`, 8080, 15)).every((c) => c === expected);
    for (const pod of await podNames(cls1, 'echo'))
      cls1.kubectl(['exec', '-n', NS, pod, '--', 'touch', '/tmp/unready']);
    await eventually("a cls2 pod reaches only cls2 while cls1's endpoints are unready", only(cls2, 'cls2'), 60_000);
    for (const pod of await podNames(cls1, 'echo'))
      cls1.kubectl(['exec', '-n', NS, pod, '--', 'rm', '-f', '/tmp/unready']);
    await eventually(
      'cls1 answers again once ready',
      () => new Set(answeringClusters(requests(cls2, `echo.${NS}.svc.clusterset.local`, 8080, 20))).has('cls1'),
      60_000,
    );

    cls2.kubectl(['scale', '-n', NS, 'deployment/echo', '--replicas=0']);
    await eventually('a cls2 pod reaches only cls1 with cls2 scaled to zero', only(cls2, 'cls1'), 60_000);
    cls2.kubectl(['scale', '-n', NS, 'deployment/echo', '--replicas=2']);
    await readyPods(cls2, 'echo', 2);
  });

  it('E1, X2: ports exported by one cluster each are routed only to the cluster that exposes them', async () => {
    const { cls1, cls2 } = e2e();
    cls1.apply([
      echoDeployment('cls1', 'ports', 1, [{ name: 'a', port: 8081 }]),
      service(NS, 'ports', { ports: [{ name: 'a', port: 8081 }] }),
      serviceExport(NS, 'ports'),
    ]);
    cls2.apply([
      echoDeployment('cls2', 'ports', 1, [{ name: 'b', port: 8082 }]),
      service(NS, 'ports', { ports: [{ name: 'b', port: 8082 }] }),
      serviceExport(NS, 'ports'),
    ]);
    await eventually(
      'cls2: ServiceImport ports has ports 8081 and 8082',
      async () => {
        const si = await cls2.serviceImport(NS, 'ports');
        return JSON.stringify((si?.spec.ports ?? []).map((p) => p.port).sort()) === '[8081,8082]';
      },
      60_000,
    );
    const name = `ports.${NS}.svc.clusterset.local`;
    await eventually(
      'port 8081 answered by cls1 only, 8082 by cls2 only',
      () =>
        answeringClusters(requests(cls2, name, 8081, 10)).every((c) => c === 'cls1') &&
        answeringClusters(requests(cls2, name, 8082, 10)).every((c) => c === 'cls2'),
      60_000,
    );
  });

  it('D2: a Headless export resolves from a cls2 pod to every ready pod (A), per pod by <hostname>.<clusterid> names that connect, and as SRV', async () => {
    const { cls1, cls2 } = e2e();
    cls1.apply([
      echoStatefulSet('cls1', 'web', 2, 8080),
      service(NS, 'web', { ports: [{ name: 'tcp', port: 8080 }], headless: true }),
      serviceExport(NS, 'web'),
    ]);
    await readyPods(cls1, 'web', 2);
    const pods = await cls1.kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedPod({ namespace: NS, labelSelector: 'app=web' });
    const ipOf = Object.fromEntries(pods.items.map((p) => [p.metadata!.name!, p.status!.podIP!]));
    const name = `web.${NS}.svc.clusterset.local`;
    await eventually(
      'A records of both web pods in cls2',
      () => JSON.stringify(dig(cls2, name).sort()) === JSON.stringify(Object.values(ipOf).sort()),
      60_000,
    );
    for (const pod of ['web-0', 'web-1']) {
      expect(dig(cls2, `${pod}.cls1.${name}`)).to.deep.equal([ipOf[pod]]);
      expect(requests(cls2, `${pod}.cls1.${name}`, 8080, 1)[0]).to.equal(`cluster=cls1 pod=${pod} port=8080`);
    }
    // priority weight port target
    const srv = dig(cls2, name, 'SRV')
      .map((r) => r.split(' ').slice(2).join(' '))
      .sort();
    expect(srv).to.deep.equal([`8080 web-0.cls1.${name}.`, `8080 web-1.cls1.${name}.`]);
  });

  it('the production image (npm run image) runs as a pod on a real node, as its Deployments run it: non-root, read-only root filesystem, no capabilities', async () => {
    const { cs, cls1 } = e2e();
    const image = localImageRef();
    const archive = join(cs.dir, 'mcs-cloudmap-image.tar');
    // Built by hack/test.sh before the suite (npm run image); a missing image fails here with podman's message.
    podman(['save', '--quiet', '--format', 'docker-archive', '-o', archive, image]);
    await importIntoRealNode(cls1.cluster.realNode!, archive);
    cls1.apply([
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'mcs-cloudmap-version', namespace: NS },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'cli',
              image,
              imagePullPolicy: 'Never',
              command: ['node', 'dist/src/cli/main.js', '--version'],
              securityContext: {
                runAsNonRoot: true,
                readOnlyRootFilesystem: true,
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
        },
      },
    ]);
    await eventually(
      'the pod ran to completion',
      () =>
        cls1.kubectl(['get', 'pod', '-n', NS, 'mcs-cloudmap-version', '-o', 'jsonpath={.status.phase}']) ===
        'Succeeded',
      90_000,
    );
    expect(cls1.kubectl(['logs', '-n', NS, 'mcs-cloudmap-version']).trim()).to.include(packageVersion());
  });

  it('E1: fresh services exported into a namespace already exported are answered in the other cluster by their clusterset names', async () => {
    const { cls1, cls2 } = e2e();
    for (const name of ['fresh-0', 'fresh-1']) {
      cls1.apply([service(NS, name, { ports: [{ name: 'tcp', port: 8080 }], selector: { app: 'echo' } })]);
      const answered = firstAnswer(cls2, NS, `${name}.${NS}.svc.clusterset.local`, 8080, 'cluster=cls1', 60);
      cls1.apply([serviceExport(NS, name)]);
      await answered;
      await eventually(
        `cls1: ServiceExport ${name} Ready`,
        async () => condition(await cls1.serviceExport(NS, name), 'Ready')?.status === 'True',
      );
    }
  });
});
