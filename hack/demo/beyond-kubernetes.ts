// `npm run demo -- --beyond-kubernetes`: after the tutorial's curl, the two directions of docs/non-kubernetes.md that no
// other MCS implementation has. Out: the namespace `demo` keeps its exports in the private DNS namespace
// demo.<DOMAIN>, so a host outside every cluster (no kubeconfig; its resolver answers from Cloud Map's records, as a
// VPC's Route 53 Resolver would) resolves nginx-hello.demo.<DOMAIN> and curls it. In: an "ECS service" of two tasks,
// each a process on the bridge registered as ECS service discovery registers a task, is imported into both clusters
// once its Cloud Map service carries the opt-in tag, and a pod of cls2 reaches it by its clusterset.local name.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListNamespacesCommand, ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';
import { IMPORT_TAG } from '../../src/worker/registrants.ts';
import { createEcsRegistry, EcsServiceRegistrant, startTaskServer } from '../testbed/ecs-tasks.ts';
import {
  addOutsideHost,
  createBridgeHost,
  type CoreDns,
  deleteBridgeHost,
  type OutsideHost,
  startNamespaceDns,
  type TestCluster,
  type TestClusterSet,
} from '../testbed/index.ts';
import { waitFor } from '../testbed/wait.ts';

export const DOMAIN = 'mcs.demo.internal';
const ECS_SERVICE = 'payments';
const TASK_PORT = 8080;
const TASKS = ['task-1', 'task-2'];

/** Where the emulator writes its DNS namespaces' zone files, for the ClusterSet to start with. */
export function zoneDirectory(): string {
  return mkdtempSync(join(tmpdir(), 'mcs-demo-zones-'));
}

/**
 * The workers' settings for it, the same in both clusters: `demo` in a DNS namespace, and opted-in Cloud Map services
 * looked for every 10 s and read every second (defaults: 5 min and 5 s), so the demo waits seconds.
 */
export const WORKER_SETTINGS: Record<string, string> = {
  MCS_DNS_NAMESPACES: 'demo',
  MCS_DNS_NAMESPACE_DOMAIN: DOMAIN,
  MCS_DNS_NAMESPACE_VPC: 'vpc-0demo',
  MCS_REGISTRANT_SCAN_INTERVAL: '10s',
  MCS_REGISTRANT_POLL_INTERVAL: '1s',
};

/** The demo's own ways to run a step, print a line and run kubectl. */
export interface DemoTools {
  step: <T>(title: string, run: () => Promise<T> | T) => Promise<T>;
  say: (line: string) => void;
  kubectl: (cluster: TestCluster, args: string[]) => string;
}

/** What the steps left running, for the demo to stop. */
export class BeyondKubernetes {
  #dns: CoreDns | undefined;
  #outside: OutsideHost | undefined;
  readonly #tasks: { index: number; server: ChildProcess }[] = [];
  #set: TestClusterSet | undefined;

  async run(set: TestClusterSet, zoneDir: string, { step, say, kubectl }: DemoTools): Promise<void> {
    this.#set = set;
    const plan = set.dataPathPlan;
    if (plan === undefined)
      throw new Error('--beyond-kubernetes needs the real nodes (it cannot run with --no-data-path)');
    const cls2 = set.clusters[1] as TestCluster;
    const name = `nginx-hello.demo.${DOMAIN}`;

    await step(
      "Start a host outside every cluster (no kubeconfig; its resolver answers from Cloud Map's DNS records)",
      async () => {
        this.#dns = await startNamespaceDns(zoneDir, set.dir, plan.hostIp);
        this.#outside = await addOutsideHost(plan, plan.hostIp);
        say(
          `  outside host ${this.#outside.address} (network namespace ${this.#outside.netns}), resolver ${plan.hostIp}`,
        );
      },
    );
    await step(`Resolve ${name} from the outside host and curl it`, async () => {
      const outside = this.#outside!;
      let addresses: string[] = [];
      await waitFor(
        `${name} to resolve outside the clusters`,
        async () => {
          addresses = await outside.resolve4(name);
          return addresses.length === 3;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      say(`  ${name} → ${addresses.join(', ')} (the nginx pods of cls1, A records Cloud Map keeps)`);
      const page = await outside.exec('curl', ['-sS', '--max-time', '3', `http://${name}`]);
      const server = /^Server name: (.*)$/m.exec(page)?.[1]?.trim();
      if (server === undefined)
        throw new Error(`curl http://${name} from the outside host did not get nginx's page: ${page}`);
      say(`  answered by pod ${server} in cls1`);
    });

    const client = new ServiceDiscoveryClient({
      endpoint: set.cloudMapEndpoint,
      region: set.region,
      credentials: { accessKeyId: 'ecs', secretAccessKey: 'ecs' },
      disableHostPrefix: true,
    });
    try {
      await step(
        `Register an ECS service "${ECS_SERVICE}" of ${TASKS.length} tasks in Cloud Map, tagged ${IMPORT_TAG}=true`,
        async () => {
          const namespaces = await client.send(new ListNamespacesCommand({}));
          const namespaceId = namespaces.Namespaces?.find((n) => n.Name === `demo.${DOMAIN}`)?.Id;
          if (namespaceId === undefined) throw new Error(`Cloud Map has no namespace demo.${DOMAIN} after the export`);
          const registry = await createEcsRegistry(client, namespaceId, ECS_SERVICE, { [IMPORT_TAG]: 'true' }, 10);
          const ecs = new EcsServiceRegistrant(client, registry.id, {
            cluster: 'demo-ecs',
            service: ECS_SERVICE,
            region: set.region,
          });
          for (const [i, id] of TASKS.entries()) {
            const index = i + 1;
            const host = await createBridgeHost(plan, index);
            this.#tasks.push({ index, server: await startTaskServer(host.netns, host.ip, TASK_PORT, id) });
            await ecs.start({ id, ip: host.ip, port: TASK_PORT, zone: `${set.region}a` });
            say(`  ${id}: ${host.ip}:${TASK_PORT}, a process on the bridge outside every cluster`);
          }
        },
      );
    } finally {
      client.destroy();
    }
    await step(`Wait for the ServiceImport demo/${ECS_SERVICE} in cls2`, async () => {
      let clusters = '';
      await waitFor(
        `ServiceImport demo/${ECS_SERVICE} in cls2 listing the ECS cluster`,
        async () => {
          clusters = kubectl(cls2, [
            'get',
            'serviceimport',
            '-n',
            'demo',
            '--ignore-not-found',
            ECS_SERVICE,
            '-o',
            'jsonpath={.status.clusters[*].cluster}',
          ]);
          return clusters.includes('ecs.');
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      );
      say(`  status.clusters: ${clusters}`);
    });
    await step(`Reach ${ECS_SERVICE}.demo.svc.clusterset.local from the client pod in cls2`, async () => {
      const seen = new Set<string>();
      await waitFor(
        'both tasks to answer the client pod in cls2',
        async () => {
          const answer = kubectl(cls2, [
            'exec',
            '-n',
            'demo',
            'client',
            '--',
            'sh',
            '-c',
            `curl -s --max-time 3 telnet://${ECS_SERVICE}.demo.svc.clusterset.local:${TASK_PORT} </dev/null || true`,
          ]);
          const task = /task=(\S+)/.exec(answer)?.[1];
          if (task !== undefined) seen.add(task);
          return seen.size === TASKS.length;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      say(`  answered by ${[...seen].sort().join(' and ')}, the ECS tasks`);
    });
  }

  async stop(): Promise<void> {
    for (const task of this.#tasks) {
      task.server.kill();
      if (this.#set?.dataPathPlan) await deleteBridgeHost(this.#set.dataPathPlan, task.index);
    }
    await this.#outside?.remove();
    await this.#dns?.stop();
  }
}
