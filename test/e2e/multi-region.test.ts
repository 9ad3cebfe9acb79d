// A ClusterSet across AWS accounts and Regions: cls1 (account A, owner of the namespaces) and cls2 (account B, using
// A's namespaces shared through the emulator's RAM-style shares) in us-east-1, cls3 (account A) in eu-west-1; every
// worker reads both Regions (--regions) and registers in its own. Exports in every direction; a namespace A has not
// shared with B (reported on cls2's ServiceExport until it is); then eu-west-1 is switched off (every request to it
// dropped by the emulator) and on again: only the imports with clusters from there degrade, keep their last
// endpoints, and recover; the status command shows each cluster id's Region and account.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ListNamespacesCommand, ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { expect } from 'chai';
import { DEFAULT_ACCOUNT } from '../../hack/testbed/cloudmap-emulator.ts';
import { markerNamespaceName } from '../../src/change-detection/change-marker.ts';
import { LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER } from '../../src/core/names.ts';
import { cloudMapClientConfig } from '../support/cloudmap.ts';
import { condition, withE2E, type E2ECluster, type WorkerCloudMap } from '../support/e2e-harness.ts';
import { eventually } from '../support/eventually.ts';
import { createNamespaces, exportReady, runApp, serviceExport } from '../support/workloads.ts';

const NS = 'e2e-regions';
/** A namespace account A does not share with B at first. */
const PRIVATE_NS = 'e2e-regions-private';
const EAST = 'us-east-1';
const WEST = 'eu-west-1';
const REPO = new URL('../../', import.meta.url).pathname;
/** Account A owns the namespaces (the testbed's default account); B is cls2's. */
const A = DEFAULT_ACCOUNT;
const B = '210987654321';

/** Imported endpoints of `name` by source cluster: cluster id → sorted addresses. */
async function importedBySource(cluster: E2ECluster, name: string, namespace = NS): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const slice of await cluster.endpointSlices(namespace, `${LABEL_SERVICE_NAME}=${name}`)) {
    const source = slice.metadata!.labels![LABEL_SOURCE_CLUSTER]!;
    out[source] = [...(out[source] ?? []), ...(slice.endpoints ?? []).map((e) => e.addresses[0]!)].sort();
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function run(cluster: E2ECluster, name: string, replicas: number, namespace = NS): Promise<string[]> {
  return runApp(cluster, namespace, name, replicas);
}

function exportFrom(cluster: E2ECluster, name: string, namespace = NS): Promise<void> {
  return exportReady(cluster, namespace, name);
}

async function regionsReachable(cluster: E2ECluster, name: string) {
  return condition(await cluster.serviceImport(NS, name), 'RegionsReachable');
}

/** The id of account A's namespace `name` in `region`, as its owner sees it. */
async function namespaceId(client: ServiceDiscoveryClient, name: string): Promise<string> {
  let id: string | undefined;
  await eventually(`namespace ${name} of account ${A}`, async () => {
    id = (await client.send(new ListNamespacesCommand({}))).Namespaces?.find((n) => n.Name === name)?.Id;
    return id !== undefined;
  });
  return id!;
}

describe('e2e: a ClusterSet across accounts and Regions (us-east-1: cls1 in A, cls2 in B; eu-west-1: cls3 in A)', function () {
  this.timeout(240_000);
  /** Account A's clients per Region (the testbed's default credentials). */
  const owner: Record<string, ServiceDiscoveryClient> = {};
  // Registered first so it runs before the harness's clean-up, which needs every Region answering.
  after(async () => {
    await e2e().cs.cloudMapControl.clearFaults();
    for (const client of Object.values(owner)) client.destroy();
  });
  const e2e = withE2E({ clusterSet: { clusters: 3, regions: [EAST, EAST, WEST] }, namespaces: [NS, PRIVATE_NS] });
  /** Endpoints each service is exported with, by cluster. */
  const exported: Record<string, Record<string, string[]>> = {};
  /** How cls2's worker is started (account B), to restart it. */
  let cls2Env: Record<string, string> = {};
  let cls2CloudMap: WorkerCloudMap = {};

  /** Shares account A's namespace `name` in `region` with account B, as a RAM resource share would. */
  async function share(name: string, region: string): Promise<void> {
    await e2e().cs.cloudMapControl.shareNamespace({
      ownerAccount: A,
      region,
      namespaceId: await namespaceId(owner[region]!, name),
      withAccounts: [B],
    });
  }

  before(async function () {
    this.timeout(180_000);
    const { cs, clusters, stopWorker, startWorker } = e2e();
    for (const region of [EAST, WEST])
      owner[region] = new ServiceDiscoveryClient({ ...cloudMapClientConfig(cs), region });
    await createNamespaces(clusters, NS);
    await createNamespaces(clusters, PRIVATE_NS);
    // Every worker reads both Regions; cls3 registers in eu-west-1; cls2 acts as account B on account A's namespaces.
    const regions = { MCS_REGIONS: `${EAST},${WEST}` };
    const accountB = { MCS_NAMESPACE_OWNER_ACCOUNT: A, MCS_AWS_ACCOUNT_ID: B };
    for (const cluster of clusters) await stopWorker(cluster);
    await startWorker(clusters[0]!, { ...regions, MCS_AWS_ACCOUNT_ID: A }, { region: EAST });
    await startWorker(
      clusters[1]!,
      (cls2Env = { ...regions, ...accountB }),
      (cls2CloudMap = { region: EAST, credentials: cs.cloudMapControl.credentialsFor(B) }),
    );
    await startWorker(clusters[2]!, { ...regions, MCS_AWS_ACCOUNT_ID: A }, { region: WEST });
  });

  it("accounts and Regions: each cluster registers in its own Region (B in A's shared namespaces) and imports from all, in every direction (E2, I1, I3)", async () => {
    const { cls1, cls2, clusters } = e2e();
    const cls3 = clusters[2]!;
    exported.east = { cls1: await run(cls1, 'east', 1) };
    exported.west = { cls3: await run(cls3, 'west', 2) };
    exported.both = { cls2: await run(cls2, 'both', 1), cls3: await run(cls3, 'both', 1) };
    // The owner's clusters create the namespace (and the change marker's) in each Region; A shares them with B.
    await exportFrom(cls1, 'east');
    await exportFrom(cls3, 'west');
    for (const region of [EAST, WEST])
      for (const name of [NS, markerNamespaceName(e2e().cs.clustersetId)]) await share(name, region);
    await exportFrom(cls2, 'both');
    await exportFrom(cls3, 'both');
    for (const cluster of clusters) {
      for (const name of ['east', 'west', 'both']) {
        await eventually(
          `${cluster.id}: endpoints of ${name} from ${Object.keys(exported[name]!).join(', ')}`,
          async () => JSON.stringify(await importedBySource(cluster, name)) === JSON.stringify(exported[name]),
        );
        await eventually(
          `${cluster.id}: ${name} RegionsReachable=True`,
          async () => (await regionsReachable(cluster, name))?.status === 'True',
        );
        expect(condition(await cluster.serviceImport(NS, name), 'Ready')?.status).to.equal('True');
      }
      expect((await cluster.serviceImport(NS, 'both'))?.status?.clusters).to.deep.equal([
        { cluster: 'cls2' },
        { cluster: 'cls3' },
      ]);
      // Zones: every imported endpoint carries the zone of the exporting cluster's node (cls3's nodes are in
      // eu-west-1); no zone hint, since the export does not ask for trafficDistribution PreferClose.
      const endpoints = (await cluster.endpointSlices(NS, `${LABEL_SERVICE_NAME}=west`)).flatMap(
        (slice) => slice.endpoints ?? [],
      );
      expect(endpoints).to.have.length(2);
      for (const e of endpoints) {
        expect(e.zone, `zone of ${e.addresses[0]}`).to.match(new RegExp(`^${WEST}[a-c]$`));
        expect(e.hints, `hints of ${e.addresses[0]}`).to.equal(undefined);
      }
      expect(await cluster.metric('mcs_cloudmap_region_reachable', `region="${WEST}"`)).to.equal(1);
    }
  });

  it("a namespace of A not shared with B: cls2's export says so and what to do, and goes through once it is shared", async () => {
    const { cls1, cls2 } = e2e();
    const mine = { cls1: await run(cls1, 'private', 1, PRIVATE_NS) };
    await exportFrom(cls1, 'private', PRIVATE_NS);
    const theirs = { cls2: await run(cls2, 'private', 1, PRIVATE_NS) };
    cls2.apply([serviceExport(PRIVATE_NS, 'private')]);
    await eventually('cls2: Ready=False naming the namespace, account A and the RAM share', async () => {
      const ready = condition(await cls2.serviceExport(PRIVATE_NS, 'private'), 'Ready');
      return (
        ready?.status === 'False' &&
        ready.message.includes(`"${PRIVATE_NS}" of account ${A} is not shared`) &&
        ready.message.includes('AWS RAM')
      );
    });
    await eventually(
      'cls1: private imported from cls1 alone',
      async () =>
        JSON.stringify((await cls1.serviceImport(PRIVATE_NS, 'private'))?.status?.clusters) ===
        JSON.stringify([{ cluster: 'cls1' }]),
    );
    await share(PRIVATE_NS, EAST);
    await eventually(
      'cls2: Ready=True once shared',
      async () => condition(await cls2.serviceExport(PRIVATE_NS, 'private'), 'Ready')?.status === 'True',
      90_000,
    );
    for (const cluster of [cls1, cls2]) {
      await eventually(
        `${cluster.id}: private imported from cls1 and cls2`,
        async () =>
          JSON.stringify(await importedBySource(cluster, 'private', PRIVATE_NS)) ===
          JSON.stringify({ ...mine, ...theirs }),
      );
    }
  });

  it('eu-west-1 switched off: only imports with clusters from there degrade, keep their endpoints, and us-east-1 goes on', async () => {
    const { cs, cls1, cls2 } = e2e();
    await cs.cloudMapControl.setFaults({ regions: [WEST], disconnectRate: 1 });
    for (const cluster of [cls1, cls2]) {
      await eventually(
        `${cluster.id}: west RegionsReachable=False naming eu-west-1 and cls3`,
        async () => {
          const c = await regionsReachable(cluster, 'west');
          return (
            c?.status === 'False' &&
            c.reason === 'RegionUnreachable' &&
            c.message.includes(`Region ${WEST}`) &&
            c.message.includes('cls3')
          );
        },
        90_000,
      );
      // Every import is queued again when a Region stops answering; 'both' may be reconciled after 'west'.
      await eventually(
        `${cluster.id}: both RegionsReachable=False`,
        async () => (await regionsReachable(cluster, 'both'))?.status === 'False',
        30_000,
      );
      expect((await regionsReachable(cluster, 'east'))?.status).to.equal('True');
      // Never drop an import because a call failed: the last endpoints read stay.
      expect(await importedBySource(cluster, 'west')).to.deep.equal(exported.west);
      expect(await importedBySource(cluster, 'both')).to.deep.equal(exported.both);
      expect(await cluster.metric('mcs_cloudmap_region_reachable', `region="${WEST}"`)).to.equal(0);
      expect(await cluster.metric('mcs_cloudmap_region_reachable', `region="${EAST}"`)).to.equal(1);
    }
    // us-east-1 still works end to end: a new export from cls1 reaches cls2, not degraded.
    exported.during = { cls1: await run(cls1, 'during', 1) };
    await exportFrom(cls1, 'during');
    await eventually(
      'cls2: endpoints of during',
      async () => JSON.stringify(await importedBySource(cls2, 'during')) === JSON.stringify(exported.during),
    );
    await eventually(
      'cls2: during RegionsReachable=True',
      async () => (await regionsReachable(cls2, 'during'))?.status === 'True',
    );
  });

  it('a worker restarted while eu-west-1 is off keeps every import from there and says the Region was not read (never drop an import because a call failed)', async () => {
    const { cls2, stopWorker, startWorker } = e2e();
    await stopWorker(cls2);
    await startWorker(cls2, cls2Env, cls2CloudMap);
    await eventually(
      'cls2 (restarted): west RegionsReachable=False, eu-west-1 not read',
      async () => (await regionsReachable(cls2, 'west'))?.message.includes(`Region ${WEST} has not been read`) === true,
      90_000,
    );
    expect((await regionsReachable(cls2, 'west'))?.status).to.equal('False');
    expect(await importedBySource(cls2, 'west')).to.deep.equal(exported.west);
    expect(await importedBySource(cls2, 'both')).to.deep.equal(exported.both);
    await eventually(
      'cls2 (restarted): region_reachable{eu-west-1} = 0',
      async () => (await cls2.metric('mcs_cloudmap_region_reachable', `region="${WEST}"`)) === 0,
    );
  });

  it('eu-west-1 switched on again: the imports recover, and what was exported meanwhile reaches cls3', async () => {
    const { cs, clusters } = e2e();
    await cs.cloudMapControl.clearFaults();
    for (const cluster of clusters) {
      for (const name of ['east', 'west', 'both', 'during']) {
        await eventually(
          `${cluster.id}: ${name} RegionsReachable=True again`,
          async () => (await regionsReachable(cluster, name))?.status === 'True',
          90_000,
        );
        await eventually(
          `${cluster.id}: endpoints of ${name}`,
          async () => JSON.stringify(await importedBySource(cluster, name)) === JSON.stringify(exported[name]),
        );
      }
      expect(await cluster.metric('mcs_cloudmap_region_reachable', `region="${WEST}"`)).to.equal(1);
    }
  });

  it('the status command shows each cluster id with its Region and account', () => {
    const { cs, clusters } = e2e();
    const kubeconfig = clusters.map((c) => c.cluster.kubeconfigPath).join(':');
    const out = execFileSync(
      join(REPO, 'node_modules', '.bin', 'node'),
      [join(REPO, 'src/cli/main.ts'), 'status', '--kubeconfig', kubeconfig, '--region', EAST, '--regions', WEST],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          MCS_CLOUDMAP_ENDPOINT: cs.cloudMapEndpoint,
          AWS_ACCESS_KEY_ID: 'testing',
          AWS_SECRET_ACCESS_KEY: 'testing',
        },
      },
    );
    expect(out).to.match(/CLUSTER ID\s+REGIONS\s+ACCOUNTS/);
    expect(out).to.match(new RegExp(`cls1\\s+${EAST}\\s+${A}`));
    expect(out).to.match(new RegExp(`cls2\\s+${EAST}\\s+${B}`));
    expect(out).to.match(new RegExp(`cls3\\s+${WEST}\\s+${A}`));
  });
});
