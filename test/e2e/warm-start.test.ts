// Warm start (M9): a worker that starts takes what it read from Cloud Map from its checkpoints (ConfigMaps in its own
// namespace) and reads only what the change markers say changed since. Correctness first: whatever the checkpoint —
// current, stale, corrupted, or of a namespace deleted while the worker was down — every import ends up as Cloud Map
// says, none is dropped or emptied because a read was skipped, and a restart with nothing changed writes nothing.
import { ListNamespacesCommand, type ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { decodeCheckpoint, type NamespaceCheckpoint } from '../../src/core/checkpoint.ts';
import { SYSTEM_NAMESPACE } from '../../src/core/names.ts';
import { CHECKPOINT_KEY, checkpointName } from '../../src/worker/checkpoint-store.ts';
import { condition, withE2E, type E2E, type E2ECluster } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-warm';
const NS_GONE = 'e2e-warm-gone';
const SERVICES = 6;

/** Service `name` without selector, its EndpointSlice of `endpoints` ready addresses (10.252.<i>.<e>) and its export. */
function service(namespace: string, name: string, i: number, endpoints: number): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace },
      spec: { ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${name}-local`, namespace, labels: { 'kubernetes.io/service-name': name } },
      addressType: 'IPv4',
      ports: [{ name: '', port: 8080, protocol: 'TCP' }],
      endpoints: Array.from({ length: endpoints }, (_, e) => ({
        addresses: [`10.252.${i}.${e + 1}`],
        conditions: { ready: true },
      })),
    },
    serviceExport(namespace, name),
  ];
}

const svc = (i: number) => `warm-${i}`;

/** Addresses of the cluster's imported EndpointSlices of the service, sorted. */
async function imported(cluster: E2ECluster, namespace: string, name: string): Promise<string[]> {
  const slices = await cluster.endpointSlices(namespace, `multicluster.kubernetes.io/service-name=${name}`);
  return slices.flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses)).sort();
}

const addresses = (i: number, n: number) => Array.from({ length: n }, (_, e) => `10.252.${i}.${e + 1}`).sort();

/** The cluster's checkpoint of a Cloud Map namespace, decoded as the worker does; undefined when it has none. */
function checkpoint(e2e: E2E, cluster: E2ECluster, namespace: string): NamespaceCheckpoint | undefined {
  const name = checkpointName(e2e.cs.region, namespace);
  const out = cluster.kubectl(['get', 'configmap', '-n', SYSTEM_NAMESPACE, name, '--ignore-not-found', '-o', 'json']);
  if (out.trim() === '') return undefined;
  const data = (JSON.parse(out) as { binaryData?: Record<string, string> }).binaryData?.[CHECKPOINT_KEY];
  if (data === undefined) return undefined;
  const decoded = decodeCheckpoint(gunzipSync(Buffer.from(data, 'base64')).toString('utf8'), {
    clusterId: cluster.id,
    clustersetId: e2e.cs.clustersetId,
    region: e2e.cs.region,
  });
  return 'invalid' in decoded ? undefined : decoded;
}

/** The endpoints a checkpoint holds for a service (its instances' IPv4 addresses), sorted. */
function checkpointed(cp: NamespaceCheckpoint | undefined, name: string): string[] | undefined {
  const s = cp?.services.find((x) => x.name === name);
  return s?.instances
    .filter((i) => i.attributes.CLUSTER_ID === 'cls1')
    .flatMap((i) => i.attributes.AWS_INSTANCE_IPV4 ?? [])
    .sort();
}

/** resourceVersion of every ServiceImport and EndpointSlice of the namespaces, and of the worker's checkpoints. */
function versions(cluster: E2ECluster, namespaces: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const add = (json: string) => {
    for (const o of (
      JSON.parse(json) as {
        items: Array<{ kind: string; metadata: { namespace: string; name: string; resourceVersion: string } }>;
      }
    ).items) {
      out.set(`${o.kind} ${o.metadata.namespace}/${o.metadata.name}`, o.metadata.resourceVersion);
    }
  };
  for (const ns of namespaces)
    add(cluster.kubectl(['get', 'serviceimports.multicluster.x-k8s.io,endpointslices', '-n', ns, '-o', 'json']));
  add(
    cluster.kubectl([
      'get',
      'configmaps',
      '-n',
      SYSTEM_NAMESPACE,
      '-l',
      'mcs-cloudmap.multicluster.x-k8s.io/cloudmap-checkpoint',
      '-o',
      'json',
    ]),
  );
  return out;
}

interface StartLine {
  checkpoints: number;
  seeded: number;
  read: number;
  announced: number;
  untrusted: number;
}

/** What the current worker of the cluster said of its checkpoints at its start (undefined: nothing yet). */
function startLine(cluster: E2ECluster): StartLine | undefined {
  const lines = readFileSync(cluster.worker.proc.logPath, 'utf8')
    .split('\n')
    .filter((l) => l.includes('Cloud Map checkpoints compared with the change markers'));
  return lines.length === 0 ? undefined : (JSON.parse(lines.at(-1)!) as StartLine);
}

/** Log lines of the current worker that say a checkpoint was not used, as JSON. */
function ignored(cluster: E2ECluster): Array<{ msg: string; namespace?: string; why: string; configMap?: string }> {
  return readFileSync(cluster.worker.proc.logPath, 'utf8')
    .split('\n')
    .filter((l) => l.includes('checkpoint-ignored') || l.includes('checkpoint of the namespace not used'))
    .map((l) => JSON.parse(l) as { msg: string; why: string });
}

/** Ready, and every ServiceImport of ours reconciled once since its start (the start queues every one). */
async function started(cluster: E2ECluster): Promise<void> {
  await eventually(
    `${cluster.id}'s worker to be ready`,
    async () => (await fetch(`${cluster.worker.healthUrl}/readyz`)).ok,
    120_000,
  );
  const imports = (
    JSON.parse(
      cluster.kubectl([
        'get',
        'serviceimports.multicluster.x-k8s.io',
        '-A',
        '-l',
        'multicluster.x-k8s.io/created-by',
        '-o',
        'json',
      ]),
    ) as { items: unknown[] }
  ).items.length;
  await eventually(
    `${cluster.id}'s worker to reconcile its ${imports} imports`,
    async () => (await cluster.metric('mcs_cloudmap_reconcile_total', 'controller="import"')) >= imports,
    120_000,
  );
}

async function allImported(
  cluster: E2ECluster,
  namespace: string,
  expected: ReadonlyMap<string, string[]>,
): Promise<boolean> {
  for (const [name, want] of expected) {
    if (condition(await cluster.serviceImport(namespace, name), 'Ready')?.status !== 'True') return false;
    if (JSON.stringify(await imported(cluster, namespace, name)) !== JSON.stringify(want)) return false;
  }
  return true;
}

/** Cloud Map writes by the current worker (heartbeats aside), from its metrics. */
async function writes(cluster: E2ECluster): Promise<Record<string, number>> {
  const calls = await cluster.cloudMapCalls();
  const heartbeats = await cluster.metric('mcs_cloudmap_heartbeats_total');
  const out: Record<string, number> = {};
  for (const [api, n] of Object.entries(calls))
    if (/^(Register|Deregister|Create|Delete|Update)/.test(api))
      out[api] = n - (api === 'RegisterInstance' ? heartbeats : 0);
  return Object.fromEntries(Object.entries(out).filter(([, n]) => n !== 0));
}

async function namespaceExists(cloudMap: ServiceDiscoveryClient, name: string): Promise<string | undefined> {
  let token: string | undefined;
  do {
    const page = await cloudMap.send(new ListNamespacesCommand({ ...(token ? { NextToken: token } : {}) }));
    const found = page.Namespaces?.find((n) => n.Name === name);
    if (found) return found.Id;
    token = page.NextToken;
  } while (token);
  return undefined;
}

describe('e2e: warm start from checkpoints (M9)', function () {
  this.timeout(600_000);
  const e2e = withE2E({ namespaces: [NS, NS_GONE] });
  /** Endpoints cls2 must import per service of NS. */
  const expected = new Map<string, string[]>();

  it('a restart with nothing changed takes Cloud Map from the checkpoints: no Cloud Map write, no object rewritten, nothing of them read', async () => {
    const env = e2e();
    const { cls1, cls2, clusters, stopWorker, startWorker } = env;
    await createNamespaces(clusters, NS);
    await createNamespaces(clusters, NS_GONE);
    cls1.apply([
      ...Array.from({ length: SERVICES }, (_, i) => service(NS, svc(i), i, 2)).flat(),
      ...service(NS_GONE, 'gone-0', 50, 1),
      ...service(NS_GONE, 'gone-1', 51, 1),
    ]);
    for (let i = 0; i < SERVICES; i++) expected.set(svc(i), addresses(i, 2));
    await eventually(`cls2 to import ${SERVICES} services`, () => allImported(cls2, NS, expected), 120_000);
    await eventually(
      'cls2 to import the services of the namespace deleted later',
      () =>
        allImported(
          cls2,
          NS_GONE,
          new Map([
            ['gone-0', addresses(50, 1)],
            ['gone-1', addresses(51, 1)],
          ]),
        ),
      120_000,
    );
    // The checkpoints follow once every marker-driven read has been checked again (seconds).
    for (const c of [cls1, cls2]) {
      await eventually(
        `${c.id}'s checkpoints to hold every service`,
        () => {
          const cp = checkpoint(env, c, NS);
          return (
            [...expected].every(([name, want]) => JSON.stringify(checkpointed(cp, name)) === JSON.stringify(want)) &&
            checkpointed(checkpoint(env, c, NS_GONE), 'gone-1')?.length === 1
          );
        },
        60_000,
      );
    }
    const before = [versions(cls1, [NS, NS_GONE]), versions(cls2, [NS, NS_GONE])];

    await stopWorker(cls1);
    await stopWorker(cls2);
    await startWorker(cls1);
    await startWorker(cls2);
    await started(cls1);
    await started(cls2);
    // Let the paced resync and the background listing run a little: they must not write either.
    await new Promise((resolve) => setTimeout(resolve, 5_000));

    for (const c of [cls1, cls2]) {
      const line = startLine(c);
      console.log(
        `      ${c.id} started from checkpoints: ${JSON.stringify(line)}; Cloud Map calls ${JSON.stringify(await c.cloudMapCalls())}`,
      );
      expect(line, `${c.id}'s start`).to.not.equal(undefined);
      expect(line!.seeded, `${c.id}: services taken from checkpoints`).to.be.at.least(
        c === cls2 ? SERVICES + 2 : SERVICES + 2,
      );
      expect(
        ignored(c).filter((l) => l.namespace === NS || l.namespace === NS_GONE),
        `${c.id}: checkpoints not used`,
      ).to.deep.equal([]);
      expect(await writes(c), `${c.id}'s Cloud Map writes`).to.deep.equal({});
    }
    const after = [versions(cls1, [NS, NS_GONE]), versions(cls2, [NS, NS_GONE])];
    for (const [c, b, a] of [
      [cls1, before[0]!, after[0]!],
      [cls2, before[1]!, after[1]!],
    ] as const) {
      const rewritten = [...a].filter(([k, rv]) => b.get(k) !== rv).map(([k]) => k);
      expect(rewritten, `${c.id}: objects rewritten by the restart (imports, slices, checkpoints)`).to.deep.equal([]);
      expect(
        [...b.keys()].filter((k) => !a.has(k)),
        `${c.id}: objects gone`,
      ).to.deep.equal([]);
    }
    expect(await allImported(cls2, NS, expected)).to.equal(true);
  });

  it('Cloud Map changed while the worker was down: what changed is read, the rest taken from the checkpoint', async () => {
    const env = e2e();
    const { cls1, cls2, stopWorker, startWorker } = env;
    const unchanged = versions(cls2, [NS]);
    await stopWorker(cls2);
    // While cls2's worker is down: warm-0 scales to 3 endpoints, warm-1 is unexported, warm-6 is exported.
    cls1.apply([...service(NS, svc(0), 0, 3), ...service(NS, svc(SERVICES), SERVICES, 2)]);
    cls1.kubectl(['delete', 'serviceexport', '-n', NS, svc(1)]);
    await eventually(
      'cls1 to have exported the changes',
      async () => {
        const exported = condition(await cls1.serviceExport(NS, svc(SERVICES)), 'Ready')?.reason === 'Exported';
        return exported && (await cls1.serviceExport(NS, svc(1))) === undefined;
      },
      120_000,
    );
    // Both writes announced and landed (cls1's own import shows them).
    await eventually(
      'cls1 to import the changes itself',
      () =>
        allImported(
          cls1,
          NS,
          new Map([
            [svc(0), addresses(0, 3)],
            [svc(SERVICES), addresses(SERVICES, 2)],
          ]),
        ),
      60_000,
    );
    expected.set(svc(0), addresses(0, 3));
    expected.delete(svc(1));
    expected.set(svc(SERVICES), addresses(SERVICES, 2));

    await startWorker(cls2);
    await started(cls2);
    await eventually(
      'cls2 to import what changed while its worker was down',
      async () => (await allImported(cls2, NS, expected)) && (await cls2.serviceImport(NS, svc(1))) === undefined,
      60_000,
    );
    const line = startLine(cls2)!;
    console.log(`      cls2 started: ${JSON.stringify(line)}`);
    expect(line.seeded, 'services taken from the checkpoints').to.be.at.least(SERVICES - 2);
    expect(line.announced, 'services the markers named since the checkpoint').to.be.at.least(3);
    // The services that did not change were neither read nor rewritten.
    const now = versions(cls2, [NS]);
    const untouched = [...unchanged].filter(([k]) => /warm-[2-5]\b/.test(k));
    expect(
      untouched.filter(([k, rv]) => now.get(k) !== rv).map(([k]) => k),
      'unchanged imports rewritten',
    ).to.deep.equal([]);
  });

  it('a stale checkpoint (older than changes since announced) costs reads of what changed, never an import', async () => {
    const env = e2e();
    const { cls1, cls2, stopWorker, startWorker } = env;
    const name = checkpointName(env.cs.region, NS);
    const old = JSON.parse(cls2.kubectl(['get', 'configmap', '-n', SYSTEM_NAMESPACE, name, '-o', 'json'])) as {
      binaryData: Record<string, string>;
    };
    // A change while cls2 runs: its checkpoint moves on past the copy kept above.
    cls1.apply(service(NS, svc(2), 2, 4));
    expected.set(svc(2), addresses(2, 4));
    await eventually('cls2 to import warm-2 with 4 endpoints', () => allImported(cls2, NS, expected), 60_000);
    await eventually(
      "cls2's checkpoint to hold warm-2's 4 endpoints",
      () => checkpointed(checkpoint(env, cls2, NS), svc(2))?.length === 4,
      60_000,
    );
    await stopWorker(cls2);
    // The older checkpoint put back (a restore from backup, a slow writer): it holds warm-2 with 2 endpoints.
    cls2.kubectl([
      'patch',
      'configmap',
      '-n',
      SYSTEM_NAMESPACE,
      name,
      '--type=merge',
      '-p',
      JSON.stringify({ binaryData: old.binaryData }),
    ]);
    expect(checkpointed(checkpoint(env, cls2, NS), svc(2))).to.have.length(2);
    // And a change while it is down.
    cls1.apply(service(NS, svc(3), 3, 1));
    expected.set(svc(3), addresses(3, 1));
    await eventually(
      'cls1 to import warm-3 with 1 endpoint itself',
      () => allImported(cls1, NS, new Map([[svc(3), addresses(3, 1)]])),
      60_000,
    );

    await startWorker(cls2);
    await started(cls2);
    await eventually(
      'cls2 to import warm-2 and warm-3 as Cloud Map has them',
      () => allImported(cls2, NS, expected),
      60_000,
    );
    console.log(`      cls2 started from a stale checkpoint: ${JSON.stringify(startLine(cls2))}`);
    expect(await imported(cls2, NS, svc(2)), 'warm-2 as Cloud Map has it, not as the stale checkpoint').to.deep.equal(
      addresses(2, 4),
    );
    expect(await writes(cls2)).to.deep.equal({});
  });

  it('a corrupted checkpoint is ignored: its namespace is read in full, no import dropped or rewritten, and the checkpoint written again', async () => {
    const env = e2e();
    const { cls2, stopWorker, startWorker } = env;
    const name = checkpointName(env.cs.region, NS);
    await stopWorker(cls2);
    cls2.kubectl([
      'patch',
      'configmap',
      '-n',
      SYSTEM_NAMESPACE,
      name,
      '--type=merge',
      '-p',
      JSON.stringify({ binaryData: { [CHECKPOINT_KEY]: Buffer.from('not a checkpoint').toString('base64') } }),
    ]);
    const before = versions(cls2, [NS]);

    await startWorker(cls2);
    await started(cls2);
    await eventually('cls2 to import every service', () => allImported(cls2, NS, expected), 60_000);
    const line = startLine(cls2)!;
    console.log(
      `      cls2 started with a corrupted checkpoint: ${JSON.stringify(line)}; ignored: ${JSON.stringify(ignored(cls2).map((l) => l.why))}`,
    );
    expect(
      ignored(cls2).map((l) => l.configMap),
      'the corrupted checkpoint is said to be ignored',
    ).to.include(name);
    expect(line.read, 'services of the namespace read in full').to.be.at.least(expected.size);
    expect(
      (await cls2.cloudMapCalls()).DiscoverInstances ?? 0,
      'DiscoverInstances of the restarted worker',
    ).to.be.at.least(expected.size);
    const after = versions(cls2, [NS]);
    const rewritten = [...after]
      .filter(([k, rv]) => !k.startsWith('ConfigMap') && before.get(k) !== rv)
      .map(([k]) => k);
    expect(rewritten, 'imports rewritten').to.deep.equal([]);
    await eventually(
      'cls2 to write its checkpoint again',
      () => checkpoint(env, cls2, NS)?.services.length === expected.size,
      60_000,
    );
    expect(await writes(cls2)).to.deep.equal({});
  });

  it('a Cloud Map namespace deleted while the worker was down: its checkpoint is not used and its imports go (I2)', async () => {
    const env = e2e();
    const { cls1, cls2, cloudMap, stopWorker, startWorker } = env;
    await stopWorker(cls2);
    // cls1 unexports both services, with namespace clean-up on, so that it deletes the Cloud Map namespace it created.
    await stopWorker(cls1);
    await startWorker(cls1, { MCS_NAMESPACE_CLEANUP: 'true' });
    cls1.kubectl(['delete', 'serviceexports', '-n', NS_GONE, 'gone-0', 'gone-1']);
    await eventually(
      `Cloud Map namespace ${NS_GONE} to be deleted`,
      async () => (await namespaceExists(cloudMap, NS_GONE)) === undefined,
      120_000,
    );
    expect(checkpoint(env, cls2, NS_GONE)?.services.length, "cls2's checkpoint still holds the namespace").to.equal(2);
    expect(await cls2.serviceImport(NS_GONE, 'gone-0'), "cls2's import before its restart").to.not.equal(undefined);

    await startWorker(cls2);
    await started(cls2);
    await eventually(
      'cls2 to remove the imports of the deleted namespace',
      async () =>
        (await cls2.serviceImport(NS_GONE, 'gone-0')) === undefined &&
        (await cls2.serviceImport(NS_GONE, 'gone-1')) === undefined,
      60_000,
    );
    const why = ignored(cls2)
      .filter((l) => l.namespace === NS_GONE)
      .map((l) => l.why);
    console.log(
      `      cls2 started after ${NS_GONE} was deleted: ${JSON.stringify(startLine(cls2))}; ${JSON.stringify(why)}`,
    );
    expect(why, 'the checkpoint of the deleted namespace not used').to.deep.equal(['namespace no longer in Cloud Map']);
    expect(await allImported(cls2, NS, expected), "the other namespace's imports").to.equal(true);
    // Back to the suite's settings for what follows.
    await stopWorker(cls1);
    await startWorker(cls1);
  });

  it('the first read of Cloud Map does not wait for the EndpointSlices, Services and Namespaces to be listed; reconciling does', async () => {
    const { cls2, stopWorker, startWorker } = e2e();
    const role = JSON.parse(cls2.kubectl(['get', 'clusterrole', 'mcs-cloudmap-worker', '-o', 'json'])) as {
      rules: Array<{ resources: string[]; verbs: string[] }>;
    };
    const rule = role.rules.findIndex((r) => r.resources.includes('endpointslices'));
    const verbs = role.rules[rule]!.verbs;
    const setVerbs = (value: string[]) =>
      cls2.kubectl([
        'patch',
        'clusterrole',
        'mcs-cloudmap-worker',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'replace', path: `/rules/${rule}/verbs`, value }]),
      ]);
    await stopWorker(cls2);
    // The worker's EndpointSlice informer cannot list (403, retried) until the rule is back: a list that takes long.
    setVerbs(verbs.filter((v) => v !== 'list'));
    try {
      await startWorker(cls2);
      const read = () =>
        readFileSync(cls2.worker.proc.logPath, 'utf8')
          .split('\n')
          .some((l) => l.includes('"msg":"Cloud Map read'));
      await eventually("cls2's worker to read Cloud Map while it cannot list EndpointSlices", read, 60_000);
      const readyz = await fetch(`${cls2.worker.healthUrl}/readyz`);
      expect(readyz.status, '/readyz while EndpointSlices are not listed').to.equal(503);
      expect(await readyz.text()).to.include('waiting for the first list of every watched kind');
      expect(
        await cls2.metric('mcs_cloudmap_reconcile_total', 'controller="import"'),
        'imports reconciled before every kind is listed',
      ).to.equal(0);
    } finally {
      setVerbs(verbs);
    }
    await started(cls2);
    expect(await allImported(cls2, NS, expected)).to.equal(true);
    expect(await writes(cls2)).to.deep.equal({});
  });
});
