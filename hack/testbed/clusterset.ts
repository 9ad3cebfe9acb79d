// A ClusterSet on this machine: N clusters started in parallel plus one Cloud Map emulator, all supervised together.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster, type TestCluster } from './cluster.ts';
import { prepareDataPath, type DataPath, type DataPathPlan } from './data-path/index.ts';
import {
  clusterIpFamilies,
  clusterNetwork,
  DEFAULT_IP_FAMILIES,
  MAX_CLUSTERS,
  type ClusterIpFamilies,
} from './network.ts';
import type { CloudMapEmulatorControl, CloudMapEmulatorOptions } from './cloudmap-emulator.ts';
import { startMoto } from './moto.ts';
import { freePorts } from './ports.ts';
import { Supervisor } from './supervisor.ts';

export type { TestCluster } from './cluster.ts';

export const CLUSTERSET_ID = 'clusterset1';
export const REGION = 'us-east-1';
/** How long one component may take to become ready before the start fails (the whole start targets 30 s). */
const COMPONENT_TIMEOUT_MS = 90_000;

export interface TestClusterSet {
  clusters: TestCluster[];
  clustersetId: string;
  /** The Cloud Map emulator's URL: give it to the AWS SDK as `endpoint`, with `disableHostPrefix: true` and any credentials. */
  cloudMapEndpoint: string;
  /** The emulator's control endpoint: mode, faults, call counts (docs/testbed.md). */
  cloudMapControl: CloudMapEmulatorControl;
  region: string;
  /** Holds every cluster's kubeconfig, certificates, data and logs; removed by stop() unless logs are kept. */
  dir: string;
  /** Wall-clock time from startClusterSet() being called to every cluster being ready. */
  startupMs: number;
  /** With `dataPath`: the bridge, the real nodes and their addresses (hosts outside every cluster join the bridge). */
  dataPath?: DataPathPlan;
  stop(opts?: { keepLogs?: boolean }): Promise<void>;
}

export interface ClusterSetOptions {
  /** Number of clusters, default 2. */
  clusters?: number;
  /** Every cluster gets cluster 1's pod CIDR (overlapping pod IPs, a real case). */
  sharedPodCidr?: boolean;
  /** Where to put everything; must be absent or empty. Default: a new directory under the system temp dir. */
  dir?: string;
  /** Progress and problem lines; default: stderr with a [testbed] prefix. */
  log?: (line: string) => void;
  /** How the Cloud Map emulator behaves; default: the realistic mode. */
  cloudMap?: CloudMapEmulatorOptions;
  /** Region of each cluster's nodes (their region and zone labels), by position; default: the ClusterSet's Region. */
  regions?: readonly string[];
  /**
   * A real node per cluster (kubelet, containerd, CNI, kube-proxy, CoreDNS as cluster DNS) on a flat pod network, so
   * pods run and traffic crosses clusters (docs/testbed.md "Data path"). Needs root and the installer's data-path
   * packages; fails at once, naming what is missing, where the machine cannot host it.
   */
  dataPath?: boolean;
  /**
   * IP families of every cluster, the primary first: ['IPv4'] (default), ['IPv6'], or dual-stack ['IPv4', 'IPv6'] /
   * ['IPv6', 'IPv4']. Apiservers get a Service range per family, nodes a pod range per family; with `dataPath`, pods get
   * an address per family, kube-proxy programs iptables and ip6tables, and cluster DNS answers A and AAAA.
   */
  ipFamilies?: readonly string[];
  /**
   * Per cluster, by position, IP families that replace `ipFamilies` for that cluster (a mixed ClusterSet: e.g.
   * `[['IPv4'], ['IPv4', 'IPv6']]` for an IPv4-only cls1 and a dual-stack cls2); positions left out take `ipFamilies`.
   */
  ipFamiliesPerCluster?: readonly (readonly string[] | undefined)[];
}

/** Each cluster's IP families, by position. */
export function familiesOfClusters(
  opts: Pick<ClusterSetOptions, 'ipFamilies' | 'ipFamiliesPerCluster'>,
  count: number,
): ClusterIpFamilies[] {
  if ((opts.ipFamiliesPerCluster?.length ?? 0) > count) {
    throw new RangeError(
      `ipFamiliesPerCluster names ${opts.ipFamiliesPerCluster!.length} clusters, the ClusterSet has ${count}`,
    );
  }
  const all = clusterIpFamilies(opts.ipFamilies ?? DEFAULT_IP_FAMILIES);
  return Array.from({ length: count }, (_, i) => {
    const own = opts.ipFamiliesPerCluster?.[i];
    return own === undefined ? all : clusterIpFamilies(own);
  });
}

/** What `testbed.json` in the ClusterSet's directory records, for `npm run testbed -- status` and for humans. */
export interface ClusterSetState {
  clustersetId: string;
  region: string;
  cloudMapEndpoint: string;
  startupMs: number;
  /** The process that owns (supervises) the ClusterSet. */
  ownerPid: number;
  pids: Record<string, number>;
  clusters: Omit<TestCluster, 'kubeConfig'>[];
}

export const STATE_FILE = 'testbed.json';

function prepareDir(dir: string | undefined): string {
  if (dir === undefined) return mkdtempSync(join(tmpdir(), 'mcs-cloudmap-testbed-'));
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).length > 0) {
    throw new Error(
      `testbed directory ${dir} is not empty: is a testbed already running there? Stop it (npm run testbed -- down) or remove the directory`,
    );
  }
  return dir;
}

export async function startClusterSet(opts: ClusterSetOptions = {}): Promise<TestClusterSet> {
  const started = Date.now();
  const count = opts.clusters ?? 2;
  if (!Number.isInteger(count) || count < 1 || count > MAX_CLUSTERS) {
    throw new RangeError(`clusters must be a whole number from 1 to ${MAX_CLUSTERS}, got ${count}`);
  }
  const log = opts.log ?? ((line: string) => process.stderr.write(`[testbed] ${line}\n`));
  const families = familiesOfClusters(opts, count);
  const dir = prepareDir(opts.dir);
  const networks = Array.from({ length: count }, (_, i) =>
    clusterNetwork(i + 1, opts.sharedPodCidr ?? false, opts.regions?.[i] ?? REGION, families[i]),
  );
  const dataPath: DataPath | undefined = opts.dataPath ? await prepareDataPath(networks, dir, log) : undefined;
  const sup = new Supervisor(dir, {
    onUnexpectedExit: (p, s) =>
      log(`${p.name} exited unexpectedly (${s.signal ?? `code ${s.code}`}); log: ${p.logPath}`),
    onInterrupted: (signal) => log(`${signal}: killed every testbed process; logs kept in ${dir}`),
  });
  log(`starting ${count} cluster(s) and the Cloud Map emulator in ${dir}`);

  let clusters: TestCluster[];
  let cloudMapControl: CloudMapEmulatorControl;
  const failed = new AbortController();
  try {
    const [motoPort] = (await freePorts(1)) as [number];
    const motoLogs = join(dir, 'moto');
    mkdirSync(motoLogs);
    const [moto, all] = await Promise.all([
      startMoto(sup, motoLogs, motoPort, COMPONENT_TIMEOUT_MS, opts.cloudMap),
      Promise.all(
        Array.from({ length: count }, (_, i) =>
          startCluster(sup, {
            index: i + 1,
            dir,
            sharedPodCidr: opts.sharedPodCidr ?? false,
            region: opts.regions?.[i] ?? REGION,
            ipFamilies: families[i]!,
            timeoutMs: COMPONENT_TIMEOUT_MS,
            signal: failed.signal,
            ...(dataPath && { realNode: { plan: dataPath.plan.nodes[i]!, hostIp: dataPath.plan.hostIp } }),
          }),
        ),
      ),
    ]);
    cloudMapControl = moto.control;
    clusters = all;
  } catch (err) {
    failed.abort(err);
    await sup.stopAll(1000);
    await dataPath?.cleanup();
    throw new Error(`the testbed did not start (logs kept in ${dir}): ${(err as Error).message}`, { cause: err });
  }

  const cloudMapEndpoint = cloudMapControl.endpoint;
  const startupMs = Date.now() - started;
  const state: ClusterSetState = {
    clustersetId: CLUSTERSET_ID,
    region: REGION,
    cloudMapEndpoint,
    startupMs,
    ownerPid: process.pid,
    pids: Object.fromEntries(sup.processes.map((p) => [p.name, p.pid])),
    clusters: clusters.map(({ kubeConfig: _, ...rest }) => rest),
  };
  writeFileSync(join(dir, STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
  log(
    `ready in ${(startupMs / 1000).toFixed(1)} s: ${clusters.map((c) => `${c.id} ${c.server}`).join(', ')}; Cloud Map ${cloudMapEndpoint}`,
  );

  let stopped: Promise<void> | undefined;
  return {
    clusters,
    clustersetId: CLUSTERSET_ID,
    cloudMapEndpoint,
    cloudMapControl,
    region: REGION,
    dir,
    startupMs,
    ...(dataPath && { dataPath: dataPath.plan }),
    stop(stopOpts = {}) {
      stopped ??= (async () => {
        const stopping = Date.now();
        await sup.stopAll();
        await dataPath?.cleanup();
        const took = `stopped in ${((Date.now() - stopping) / 1000).toFixed(1)} s`;
        if (stopOpts.keepLogs) {
          log(`${took}; logs kept in ${dir}`);
        } else {
          rmSync(dir, { recursive: true, force: true });
          log(took);
        }
      })();
      return stopped;
    },
  };
}
