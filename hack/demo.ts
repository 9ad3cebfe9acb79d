// `npm run demo`: the AWS Cloud Map MCS Controller's public two-cluster tutorial on this machine. Brings up the testbed
// ClusterSet and the Cloud Map emulator, with a real node per cluster (the testbed's data path: pods run, traffic
// crosses clusters), runs each cluster's webhook server and worker as host processes configured like the in-cluster
// Deployments, then replays the tutorial: the import appears in cls2, its clusterset.local name resolves, and a pod in
// cls2 curls nginx-hello, answered by an nginx pod in cls1. First of all it runs hack/install-testbed.sh, as `npm test`
// does, so a fresh clone needs nothing else. Stays up until Ctrl-C; `--once` exits after the replay (used by a test).
// `--image REF` runs both processes from the production image (`npm run image`) in containers instead of from source.
// `--no-data-path` replays without real nodes (pods are simulated, no curl), for a machine that cannot host them.
// `--beyond-kubernetes` goes on past the curl (hack/demo/beyond-kubernetes.ts, docs/non-kubernetes.md): a host outside
// every cluster resolves nginx-hello by Cloud Map's DNS records and curls it, and an ECS service's tasks are imported.
import { execFileSync, spawn } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, DiscoveryV1Api } from '@kubernetes/client-node';
import { LABEL_SERVICE_NAME, MCS_GROUP, SERVICE_IMPORT_PLURAL, STORAGE_VERSION } from '../src/core/names.ts';
import { BeyondKubernetes, WORKER_SETTINGS, zoneDirectory } from './demo/beyond-kubernetes.ts';
import { clusterProperties } from './demo/cluster-properties.ts';
import { deployLocally, type LocalDeployment } from './local/deploy.ts';
import {
  missingDataPathPrerequisites,
  startClusterSet,
  startCoreDns,
  type CoreDns,
  type TestCluster,
  type TestClusterSet,
} from './testbed/index.ts';
import { waitFor } from './testbed/wait.ts';
import { cacheDir, kubectlBinary } from './testbed/paths.ts';

const argv = process.argv.slice(2);
const once = argv.includes('--once');
const keepLogs = argv.includes('--keep-logs');
const dataPath = !argv.includes('--no-data-path');
const beyondKubernetes = argv.includes('--beyond-kubernetes');
const imageAt = argv.indexOf('--image');
const image = imageAt >= 0 ? argv[imageAt + 1] : undefined;
const unknown = argv.filter(
  (a, i) =>
    !['--once', '--keep-logs', '--no-data-path', '--beyond-kubernetes'].includes(a) &&
    !(imageAt >= 0 && (i === imageAt || i === imageAt + 1)),
);
if (unknown.length > 0 || (imageAt >= 0 && !image)) {
  process.stderr.write(
    `unknown argument(s) ${unknown.join(' ') || '--image without a reference'}; usage: npm run demo [-- --once] [--keep-logs] [--no-data-path] [--beyond-kubernetes] [--image REF]\n`,
  );
  process.exit(2);
}
if (beyondKubernetes && !dataPath) {
  process.stderr.write('--beyond-kubernetes needs the real nodes: leave out --no-data-path\n');
  process.exit(2);
}

const started = Date.now();
const clock = () => `[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s]`;
const say = (line: string) => process.stdout.write(`${clock()} ${line}\n`);

async function step<T>(title: string, run: () => Promise<T> | T): Promise<T> {
  say(`▶ ${title}`);
  const t0 = Date.now();
  const result = await run();
  say(`✓ ${title} (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
  return result;
}

/** Runs the installer with its progress lines on this terminal; it prints what a cold install builds and how long that takes. */
function installTestbed(): Promise<void> {
  return new Promise((resolve, reject) => {
    const installer = spawn('bash', [join(import.meta.dirname, 'install-testbed.sh')], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    installer.on('error', (err) =>
      reject(new Error(`could not run hack/install-testbed.sh: ${err.message}`, { cause: err })),
    );
    installer.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `hack/install-testbed.sh failed (${signal ?? `exit code ${code}`}); its message is above, build logs in ${join(cacheDir(), 'install-logs')}`,
          ),
        );
    });
  });
}

function kubectl(cluster: TestCluster, args: string[], input?: string): string {
  return execFileSync(kubectlBinary(), ['--kubeconfig', cluster.kubeconfigPath, ...args], {
    encoding: 'utf8',
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** kubectl apply, returning kubectl's refusal text instead of throwing when the apiserver says no. */
function tryApply(cluster: TestCluster, yaml: string): { ok: true; out: string } | { ok: false; error: string } {
  try {
    return { ok: true, out: kubectl(cluster, ['apply', '-f', '-'], yaml) };
  } catch (err) {
    return { ok: false, error: ((err as { stderr?: string }).stderr ?? String(err)).trim() };
  }
}

const manifest = (name: string) => readFileSync(join(import.meta.dirname, 'demo', name), 'utf8');

interface ImportView {
  type: string;
  ips: string[];
  ports: string;
  clusters: string[];
  ready?: string;
}

async function readImport(cluster: TestCluster): Promise<ImportView | undefined> {
  const api = cluster.kubeConfig().makeApiClient(CustomObjectsApi);
  try {
    const si = (await api.getNamespacedCustomObject({
      group: MCS_GROUP,
      version: STORAGE_VERSION,
      namespace: 'demo',
      plural: SERVICE_IMPORT_PLURAL,
      name: 'nginx-hello',
    })) as {
      spec: { type: string; ips?: string[]; ports: { port: number; protocol?: string }[] };
      status?: { clusters?: { cluster: string }[]; conditions?: { type: string; status: string; reason: string }[] };
    };
    const ready = si.status?.conditions?.find((c) => c.type === 'Ready');
    return {
      type: si.spec.type,
      ips: si.spec.ips ?? [],
      ports: si.spec.ports.map((p) => `${p.port}/${p.protocol ?? 'TCP'}`).join(','),
      clusters: (si.status?.clusters ?? []).map((c) => c.cluster),
      ready: ready && `${ready.status} (${ready.reason})`,
    };
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

/** Replays the tutorial up to the name resolving; returns cls2's CoreDNS, left running for the user, and the import. */
async function replay(set: TestClusterSet): Promise<{ dns: CoreDns; imported: ImportView }> {
  const [cls1, cls2] = set.clusters as [TestCluster, TestCluster];

  await step('Create namespace demo in cls1 and cls2', () => {
    for (const c of set.clusters) kubectl(c, ['create', 'namespace', 'demo']);
  });
  await step('Deploy nginx-demo (3 replicas) and Service nginx-hello in cls1', async () => {
    kubectl(cls1, ['apply', '-f', '-'], manifest('nginx-hello.yaml'));
    const discovery = cls1.kubeConfig().makeApiClient(DiscoveryV1Api);
    await waitFor(
      '3 ready endpoints of nginx-hello in cls1',
      async () => {
        const slices = await discovery.listNamespacedEndpointSlice({
          namespace: 'demo',
          labelSelector: 'kubernetes.io/service-name=nginx-hello',
        });
        return slices.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready !== false).length === 3;
      },
      { timeoutMs: 60_000 },
    );
    say(
      `  pods: ${kubectl(cls1, ['get', 'pods', '-n', 'demo', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.podIP} {end}']).trim()}`,
    );
  });
  await step('Export nginx-hello from cls1 before the ClusterProperties exist (expected: refused)', () => {
    const res = tryApply(cls1, manifest('nginx-hello-export.yaml'));
    if (res.ok)
      throw new Error(
        'the ServiceExport was admitted although cls1 has no ClusterProperties: the validating webhook is not working',
      );
    say(`  refused: ${res.error.split('\n')[0]}`);
  });
  await step('Create the ClusterProperties (cluster id, ClusterSet id) in cls1 and cls2', () => {
    for (const c of set.clusters) kubectl(c, ['apply', '-f', '-'], clusterProperties(c.id, set.clustersetId));
  });
  await step('Export nginx-hello from cls1', () => {
    const res = tryApply(cls1, manifest('nginx-hello-export.yaml'));
    if (!res.ok) throw new Error(`the ServiceExport was refused: ${res.error}`);
    const finalizers = kubectl(cls1, [
      'get',
      'serviceexport',
      'nginx-hello',
      '-n',
      'demo',
      '-o',
      'jsonpath={.metadata.finalizers}',
    ]);
    say(`  admitted; finalizers: ${finalizers}`);
  });
  const exportedAt = Date.now();

  const imported = await step('Wait for the ServiceImport in cls2', async () => {
    let view: ImportView | undefined;
    // spec and status are separate writes: wait for both (an IP, cls1 listed, Ready).
    await waitFor(
      'ServiceImport demo/nginx-hello in cls2 with an IP, cls1 in status.clusters and Ready=True',
      async () => {
        view = await readImport(cls2);
        return (
          view !== undefined &&
          view.ips.length > 0 &&
          view.clusters.includes(cls1.id) &&
          view.ready?.startsWith('True') === true
        );
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    say(
      `  ServiceImport demo/nginx-hello in cls2: type ${view!.type}, ips ${view!.ips.join(',')}, ports ${view!.ports}, clusters ${view!.clusters.join(',')}, Ready ${view!.ready ?? '-'}`,
    );
    say(`  export-to-import latency: ${Date.now() - exportedAt} ms`);
    return view!;
  });
  await step('Check the derived Service and EndpointSlices in cls2', async () => {
    const core = cls2.kubeConfig().makeApiClient(CoreV1Api);
    const discovery = cls2.kubeConfig().makeApiClient(DiscoveryV1Api);
    await waitFor(
      '3 endpoints of cls1 in cls2',
      async () => {
        const slices = await discovery.listNamespacedEndpointSlice({
          namespace: 'demo',
          labelSelector: `${LABEL_SERVICE_NAME}=nginx-hello`,
        });
        return slices.items.flatMap((s) => s.endpoints ?? []).length === 3;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    const services = await core.listNamespacedService({
      namespace: 'demo',
      labelSelector: `${LABEL_SERVICE_NAME}=nginx-hello`,
    });
    for (const s of services.items)
      say(
        `  derived Service ${s.metadata?.name}: clusterIP ${s.spec?.clusterIP}, ports ${(s.spec?.ports ?? []).map((p) => p.port).join(',')}`,
      );
    const slices = await discovery.listNamespacedEndpointSlice({
      namespace: 'demo',
      labelSelector: `${LABEL_SERVICE_NAME}=nginx-hello`,
    });
    for (const s of slices.items) {
      say(
        `  EndpointSlice ${s.metadata?.name} (source ${s.metadata?.labels?.['multicluster.kubernetes.io/source-cluster']}): ${(s.endpoints ?? []).map((e) => `${e.addresses[0]}${e.conditions?.ready === false ? ' (not ready)' : ''}`).join(', ')}`,
      );
    }
  });
  const dns = await step('Resolve nginx-hello.demo.svc.clusterset.local in cls2', async () => {
    const dns = await startCoreDns({
      kubeconfigPath: cls2.kubeconfigPath,
      context: cls2.context,
      dir: join(set.dir, 'coredns-cls2'),
    });
    try {
      const resolver = new Resolver({ timeout: 500, tries: 1 });
      resolver.setServers([dns.address]);
      let answer: string[] = [];
      await waitFor(
        'an A record for nginx-hello.demo.svc.clusterset.local',
        async () => {
          answer = await resolver.resolve4('nginx-hello.demo.svc.clusterset.local');
          return answer.length > 0;
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      say(
        `  nginx-hello.demo.svc.clusterset.local → ${answer.join(', ')} (CoreDNS at ${dns.address}; ServiceImport IP ${imported.ips.join(',')})`,
      );
      return dns;
    } catch (err) {
      await dns.stop();
      throw err;
    }
  });
  return { dns, imported };
}

/** A line of nginx's hello page (nginxdemos/hello:plain-text), e.g. "Server name". */
function helloField(page: string, field: string): string | undefined {
  return new RegExp(`^${field}: (.*)$`, 'm').exec(page)?.[1]?.trim();
}

/** The tutorial's last step: curl from a pod in cls2, by the clusterset name and by the ClusterSet IP. */
async function curlFromCls2(set: TestClusterSet, imported: ImportView): Promise<void> {
  const [cls1, cls2] = set.clusters as [TestCluster, TestCluster];
  await step('Start a client pod in cls2 (image nicolaka/netshoot:v0.15, a local stand-in with curl)', () => {
    kubectl(cls2, [
      'run',
      'client',
      '-n',
      'demo',
      '--image=docker.io/nicolaka/netshoot:v0.15',
      '--image-pull-policy=IfNotPresent',
      '--restart=Never',
      '--command',
      '--',
      'sleep',
      'infinity',
    ]);
    kubectl(cls2, ['wait', '-n', 'demo', '--for=condition=Ready', 'pod/client', '--timeout=90s']);
    say(
      `  client pod in cls2: ${kubectl(cls2, ['get', 'pod', 'client', '-n', 'demo', '-o', 'jsonpath={.status.podIP} on {.spec.nodeName}'])}`,
    );
  });
  const cls1Pods = new Map(
    kubectl(cls1, [
      'get',
      'pods',
      '-n',
      'demo',
      '-l',
      'app=nginx',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name}={.status.podIP} {end}',
    ])
      .trim()
      .split(' ')
      .map((p) => p.split('=') as [string, string]),
  );
  for (const url of ['http://nginx-hello.demo.svc.clusterset.local', `http://${imported.ips[0]}`]) {
    await step(`curl ${url} from the client pod in cls2`, async () => {
      let page = '';
      // kube-proxy in cls2 programs the derived Service within a second or so of the worker writing it.
      await waitFor(
        `an answer to curl ${url} in cls2`,
        async () => {
          page = kubectl(cls2, ['exec', '-n', 'demo', 'client', '--', 'curl', '-sS', '--max-time', '3', url]);
          return page.includes('Server name:');
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      );
      for (const line of page.trim().split('\n')) say(`  | ${line}`);
      const name = helloField(page, 'Server name') ?? '';
      const address = helloField(page, 'Server address') ?? '';
      if (!cls1Pods.has(name))
        throw new Error(
          `the answer came from "${name}", not from one of cls1's nginx pods (${[...cls1Pods.keys()].join(', ')})`,
        );
      say(`  answered by pod ${name} (${cls1Pods.get(name)}) in cls1, server address ${address}`);
    });
  }
}

function usage(set: TestClusterSet, dns: CoreDns): string {
  return [
    '',
    'The ClusterSet is up. In another shell:',
    `  alias kubectl=${kubectlBinary()}   # the testbed's kubectl, same version as the clusters`,
    ...set.clusters.map((c) => `  export KUBECONFIG=${c.kubeconfigPath}   # ${c.id}`),
    '  kubectl get serviceexports,serviceimports,endpointslices -n demo',
    `  AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing npm run cli -- status --kubeconfig ${set.clusters.map((c) => c.kubeconfigPath).join(':')} --cloudmap-endpoint ${set.cloudMapEndpoint} --region ${set.region}`,
    `  dig @${dns.address.split(':')[0]} -p ${dns.address.split(':')[1]} nginx-hello.demo.svc.clusterset.local   # CoreDNS serving cls2's clusterset.local`,
    ...(dataPath
      ? [
          `  KUBECONFIG=${set.clusters[1]!.kubeconfigPath} kubectl exec -n demo client -- curl -s http://nginx-hello.demo.svc.clusterset.local   # from a pod in cls2`,
        ]
      : []),
    `Cloud Map emulator: ${set.cloudMapEndpoint} (region ${set.region}); logs: ${set.dir}`,
    'Press Ctrl-C to stop everything.',
  ].join('\n');
}

let set: TestClusterSet | undefined;
const zoneDir = beyondKubernetes ? zoneDirectory() : '';
let deployment: LocalDeployment | undefined;
let dns: CoreDns | undefined;
const beyond = new BeyondKubernetes();
let failed = false;
try {
  await step(`Install the testbed binaries into ${cacheDir()} (hack/install-testbed.sh)`, installTestbed);
  const missing = dataPath ? missingDataPathPrerequisites() : [];
  if (missing.length > 0) {
    throw new Error(
      `this machine cannot run the demo's real nodes (its last step curls nginx from a pod); missing:\n  - ${missing.join('\n  - ')}\n` +
        'Fix that, or run "npm run demo -- --no-data-path" to replay the tutorial without the curl.',
    );
  }
  set = await step(
    `Start a 2-cluster ClusterSet (cls1, cls2) and the Cloud Map emulator${dataPath ? ', each cluster with a real node' : ''}`,
    () =>
      startClusterSet({
        log: (l) => say(`  ${l}`),
        dataPath,
        ...(beyondKubernetes && { cloudMap: { zoneDir } }),
      }),
  );
  say(`  ClusterSet ready in ${(set.startupMs / 1000).toFixed(1)}s`);
  const s = set;
  const where = image ? `in containers of ${image}` : 'on the host';
  deployment = await step(`Install mcs-cloudmap in both clusters (webhook server and worker ${where})`, () =>
    deployLocally(s, { log: (l) => say(`  ${l}`), image, ...(beyondKubernetes && { configEnv: WORKER_SETTINGS }) }),
  );
  const replayed = await replay(set);
  dns = replayed.dns;
  if (dataPath) await curlFromCls2(set, replayed.imported);
  if (beyondKubernetes) await beyond.run(set, zoneDir, { step, say, kubectl });
  say('Tutorial replay complete.');
  if (!once) {
    process.stdout.write(`${usage(set, dns)}\n`);
    // The host processes are unreferenced children: without a timer of its own Node would exit here.
    const keepAlive = setInterval(() => {}, 1 << 30);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    clearInterval(keepAlive);
  }
} catch (err) {
  failed = true;
  process.stderr.write(`demo failed: ${(err as Error).stack ?? String(err)}\n`);
} finally {
  await beyond.stop();
  await dns?.stop();
  await deployment?.stop();
  await set?.stop({ keepLogs: keepLogs || failed });
  if (failed && set) process.stderr.write(`logs kept in ${set.dir}\n`);
}
process.exit(failed ? 1 : 0);
