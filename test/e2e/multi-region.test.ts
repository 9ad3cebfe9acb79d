// A ClusterSet across two Regions: cls1 and cls2 in us-east-1, cls3 in eu-west-1, every worker reading both Regions
// (--regions) and registering in its own. Exports in every direction; then eu-west-1 is switched off (its requests
// reset at a proxy in front of the emulator) and on again: only the imports with clusters from there degrade, keep
// their last endpoints, and recover.
import { expect } from 'chai';
import { LABEL_SERVICE_NAME, LABEL_SOURCE_CLUSTER } from '../../src/core/names.ts';
import { startRegionSwitch, type RegionSwitch } from '../support/region-switch.ts';
import { condition, eventually, withE2E, type E2ECluster } from './harness.ts';
import { createNamespaces, deployment, runningPodIps, service, serviceExport } from './workloads.ts';

const NS = 'e2e-regions';
const EAST = 'us-east-1';
const WEST = 'eu-west-1';

/** Imported endpoints of `name` by source cluster: cluster id → sorted addresses. */
async function importedBySource(cluster: E2ECluster, name: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const slice of await cluster.endpointSlices(NS, `${LABEL_SERVICE_NAME}=${name}`)) {
    const source = slice.metadata!.labels![LABEL_SOURCE_CLUSTER]!;
    out[source] = [...(out[source] ?? []), ...(slice.endpoints ?? []).map((e) => e.addresses[0]!)].sort();
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

async function run(cluster: E2ECluster, name: string, replicas: number): Promise<string[]> {
  cluster.apply([deployment(NS, name, replicas), service(NS, name)]);
  let ips: string[] = [];
  await eventually(`${replicas} running ${name} pods in ${cluster.id}`, async () => (ips = await runningPodIps(cluster, NS, name)).length === replicas);
  return ips;
}

async function exportFrom(cluster: E2ECluster, name: string): Promise<void> {
  cluster.apply([serviceExport(NS, name)]);
  await eventually(`${cluster.id}: ServiceExport ${name} Ready`, async () => condition(await cluster.serviceExport(NS, name), 'Ready')?.status === 'True');
}

async function regionsReachable(cluster: E2ECluster, name: string) {
  return condition(await cluster.serviceImport(NS, name), 'RegionsReachable');
}

describe('e2e: a ClusterSet across two Regions (us-east-1: cls1, cls2; eu-west-1: cls3)', function () {
  this.timeout(240_000);
  const e2e = withE2E({ clusterSet: { clusters: 3 }, namespaces: [NS] });
  let regions: RegionSwitch | undefined;
  /** Endpoints each service is exported with, by cluster. */
  const exported: Record<string, Record<string, string[]>> = {};

  before(async function () {
    this.timeout(180_000);
    const { cs, clusters, stopWorker, startWorker } = e2e();
    regions = await startRegionSwitch(cs.cloudMapEndpoint);
    await createNamespaces(clusters, NS);
    // Every worker reads both Regions through the switch; cls3 registers in eu-west-1.
    for (const [i, cluster] of clusters.entries()) {
      await stopWorker(cluster);
      await startWorker(cluster, { MCS_REGIONS: `${EAST},${WEST}` }, { region: i === 2 ? WEST : EAST, endpoint: regions.endpoint });
    }
  });

  after(async () => {
    await regions?.close();
  });

  it('each cluster registers in its own Region and imports from both, in every direction (E2, I1, I3)', async () => {
    const { cls1, cls2, clusters } = e2e();
    const cls3 = clusters[2]!;
    exported.east = { cls1: await run(cls1, 'east', 1) };
    exported.west = { cls3: await run(cls3, 'west', 2) };
    exported.both = { cls2: await run(cls2, 'both', 1), cls3: await run(cls3, 'both', 1) };
    await exportFrom(cls1, 'east');
    await exportFrom(cls3, 'west');
    await exportFrom(cls2, 'both');
    await exportFrom(cls3, 'both');
    for (const cluster of clusters) {
      for (const name of ['east', 'west', 'both']) {
        await eventually(`${cluster.id}: endpoints of ${name} from ${Object.keys(exported[name]!).join(', ')}`, async () =>
          JSON.stringify(await importedBySource(cluster, name)) === JSON.stringify(exported[name]));
        await eventually(`${cluster.id}: ${name} RegionsReachable=True`, async () => (await regionsReachable(cluster, name))?.status === 'True');
        expect(condition(await cluster.serviceImport(NS, name), 'Ready')?.status).to.equal('True');
      }
      expect((await cluster.serviceImport(NS, 'both'))?.status?.clusters).to.deep.equal([{ cluster: 'cls2' }, { cluster: 'cls3' }]);
      expect(await cluster.metric('mcs_cloudmap_region_reachable', `region="${WEST}"`)).to.equal(1);
    }
  });

  it('eu-west-1 switched off: only imports with clusters from there degrade, keep their endpoints, and us-east-1 goes on', async () => {
    const { cls1, cls2 } = e2e();
    regions!.off(WEST);
    for (const cluster of [cls1, cls2]) {
      await eventually(`${cluster.id}: west RegionsReachable=False naming eu-west-1 and cls3`, async () => {
        const c = await regionsReachable(cluster, 'west');
        return c?.status === 'False' && c.reason === 'RegionUnreachable' && c.message.includes(`Region ${WEST}`) && c.message.includes('cls3');
      }, 90_000);
      expect((await regionsReachable(cluster, 'both'))?.status).to.equal('False');
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
    await eventually('cls2: endpoints of during', async () => JSON.stringify(await importedBySource(cls2, 'during')) === JSON.stringify(exported.during));
    await eventually('cls2: during RegionsReachable=True', async () => (await regionsReachable(cls2, 'during'))?.status === 'True');
    expect(regions!.refused.get(WEST) ?? 0).to.be.greaterThan(0);
  });

  it('eu-west-1 switched on again: the imports recover, and what was exported meanwhile reaches cls3', async () => {
    const { clusters } = e2e();
    regions!.on(WEST);
    for (const cluster of clusters) {
      for (const name of ['east', 'west', 'both', 'during']) {
        await eventually(`${cluster.id}: ${name} RegionsReachable=True again`, async () => (await regionsReachable(cluster, name))?.status === 'True', 90_000);
        await eventually(`${cluster.id}: endpoints of ${name}`, async () => JSON.stringify(await importedBySource(cluster, name)) === JSON.stringify(exported[name]));
      }
      expect(await cluster.metric('mcs_cloudmap_region_reachable', `region="${WEST}"`)).to.equal(1);
    }
  });
});
