// npm run testbed -- up|status|down: a local ClusterSet (real kube-apiservers with kwok nodes, moto as Cloud Map)
// that stays up between commands. See docs/testbed.md.
import {
  boolOption,
  ConfigError,
  enumOption,
  formatHelp,
  intOption,
  parseOptions,
  stringOption,
} from '../src/config/options.ts';
import type { ClusterSetState } from './testbed/clusterset.ts';
import { defaultTestbedDir, down, ownerLogPath, readState, runningOwner, serve, up } from './testbed/detached.ts';
import { clusterSetHealth } from './testbed/health.ts';
import { IP_FAMILY_FLAG_VALUES, MAX_CLUSTERS, type IpFamilyFlagValue } from './testbed/network.ts';
import { kubectlBinary } from './testbed/paths.ts';

const specs = {
  dir: stringOption(
    'dir',
    'MCS_CLOUDMAP_TESTBED_DIR',
    defaultTestbedDir(),
    'where the running testbed keeps kubeconfigs, certificates, data and logs',
  ),
  clusters: intOption('clusters', 'MCS_CLOUDMAP_TESTBED_CLUSTERS', 2, 'number of clusters (up)', 1, MAX_CLUSTERS),
  sharedPodCidr: boolOption(
    'shared-pod-cidr',
    'MCS_CLOUDMAP_TESTBED_SHARED_POD_CIDR',
    false,
    'give every cluster the same pod CIDR (up)',
  ),
  dataPath: boolOption(
    'data-path',
    'MCS_CLOUDMAP_TESTBED_DATA_PATH',
    false,
    'a real node per cluster (kubelet, containerd, kube-proxy, cluster DNS) with a flat pod network, so pods run and traffic crosses clusters (up; root)',
  ),
  ipFamilies: enumOption(
    'ip-families',
    'MCS_CLOUDMAP_TESTBED_IP_FAMILIES',
    'IPv4',
    IP_FAMILY_FLAG_VALUES,
    'IP families of every cluster (up): IPv4, IPv6, or dual (IPv4 primary, IPv6 secondary): Service and pod ranges, and with --data-path pod addresses, kube-proxy and DNS',
  ),
  ipFamiliesPerCluster: stringOption(
    'ip-families-per-cluster',
    'MCS_CLOUDMAP_TESTBED_IP_FAMILIES_PER_CLUSTER',
    '',
    'a mixed ClusterSet (up): comma-separated families per cluster by position, each IPv4, IPv6 or dual (e.g. IPv4,dual), replacing --ip-families for those clusters',
  ),
  cloudMapMode: enumOption(
    'cloudmap-mode',
    'MCS_CLOUDMAP_TESTBED_CLOUDMAP_MODE',
    'realistic',
    ['realistic', 'fast'] as const,
    'Cloud Map emulator (up): realistic = asynchronous operations and request quotas as documented; fast = everything at once',
  ),
};

const USAGE = `Usage: npm run testbed -- up|status|down [flags]
  up      start a ClusterSet in the background and print how to use it
  status  print each component's endpoint and health (exit code 1 if anything is unhealthy)
  down    stop every testbed process and remove the testbed's files`;

function printUsage(state: ClusterSetState, dir: string): void {
  const out: string[] = [
    `ClusterSet ${state.clustersetId} (region ${state.region}) ready in ${(state.startupMs / 1000).toFixed(1)} s; files in ${dir}`,
    '',
  ];
  for (const c of state.clusters) {
    out.push(
      `  ${c.id}  ${c.server}  ${c.ipFamilies.join('+')}  pods ${c.podCidrs.join(',')}  services ${c.serviceCidrs.join(',')}  kubeconfig ${c.kubeconfigPath}`,
    );
    if (c.realNode)
      out.push(
        `        real node ${c.realNode.name} ${c.realNode.nodeIps.join(',')}, pods ${c.realNode.podCidrs.join(',')}, cluster DNS ${c.realNode.dnsServiceIps.join(',')}`,
      );
  }
  out.push(
    '',
    `Cloud Map emulator: ${state.cloudMapEndpoint}  (AWS SDK: endpoint, region ${state.region}, any credentials, disableHostPrefix: true)`,
    '',
  );
  out.push("# kubectl of the clusters' version, built by the installer:", `alias kubectl=${kubectlBinary()}`);
  for (const c of state.clusters)
    out.push(`# shell on cluster ${c.index} (${c.id}):`, `export KUBECONFIG=${c.kubeconfigPath}`);
  out.push(
    '# every cluster at once (contexts named after the cluster ids):',
    `export KUBECONFIG=${state.clusters.map((c) => c.kubeconfigPath).join(':')}`,
    '',
    'Health: npm run testbed -- status    Stop: npm run testbed -- down',
  );
  console.log(out.join('\n'));
}

async function status(dir: string): Promise<number> {
  const state = readState(dir);
  const owner = runningOwner(dir);
  if (!state) {
    console.log(
      owner === undefined
        ? `no testbed in ${dir}: start one with "npm run testbed -- up"`
        : `testbed in ${dir} is still starting (owner pid ${owner})`,
    );
    return 1;
  }
  const checks = await clusterSetHealth(state);
  console.log(`ClusterSet ${state.clustersetId} in ${dir}, owner pid ${owner ?? `${state.ownerPid} (not running)`}`);
  for (const c of checks)
    console.log(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${c.name.padEnd(34)} ${c.endpoint.padEnd(30)} ${c.detail}`);
  for (const c of state.clusters) console.log(`  export KUBECONFIG=${c.kubeconfigPath}   # ${c.id}`);
  const healthy = owner !== undefined && checks.every((c) => c.ok);
  if (!healthy) console.log(`unhealthy: see the component logs under ${dir}/<cluster>/logs and ${ownerLogPath(dir)}`);
  return healthy ? 0 : 1;
}

function perClusterFamilies(list: string): IpFamilyFlagValue[] {
  return list
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '')
    .map((v) => {
      const value = IP_FAMILY_FLAG_VALUES.find((x) => x.toLowerCase() === v.toLowerCase());
      if (value === undefined)
        throw new ConfigError(
          `--ip-families-per-cluster: expected each of ${IP_FAMILY_FLAG_VALUES.join(', ')}, got "${v}"`,
        );
      return value;
    });
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === 'help') {
    console.log(`${USAGE}\n\n${formatHelp('', specs).trimStart()}`);
    return command === undefined ? 1 : 0;
  }
  const opts = parseOptions(specs, rest);
  const upOptions = {
    clusters: opts.clusters,
    sharedPodCidr: opts.sharedPodCidr,
    cloudMapMode: opts.cloudMapMode,
    dataPath: opts.dataPath,
    ipFamilies: opts.ipFamilies,
    ipFamiliesPerCluster: perClusterFamilies(opts.ipFamiliesPerCluster),
  };
  switch (command) {
    case 'up': {
      const state = await up(process.argv[1]!, opts.dir, upOptions);
      printUsage(state, opts.dir);
      return 0;
    }
    case 'serve': // internal: the detached owner started by `up`
      await serve(opts.dir, upOptions);
      return -1;
    case 'status':
      return status(opts.dir);
    case 'down': {
      const result = await down(opts.dir);
      console.log(
        result.ownerStopped || result.leftoversKilled > 0
          ? `testbed stopped${result.leftoversKilled > 0 ? ` (${result.leftoversKilled} leftover processes killed)` : ''}; ${opts.dir} removed`
          : `no testbed was running; ${opts.dir} removed`,
      );
      return 0;
    }
    default:
      throw new ConfigError(`unknown command "${command}"\n${USAGE}`);
  }
}

try {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exitCode = code;
} catch (err) {
  console.error(err instanceof ConfigError ? `error: ${err.message}` : err);
  process.exitCode = 1;
}
