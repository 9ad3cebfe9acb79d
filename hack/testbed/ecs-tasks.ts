// Registers "tasks" in Cloud Map as ECS service discovery does (ECS developer guide, "Use service discovery to connect
// Amazon ECS services with DNS names"), through the real AWS SDK: one instance per task, named by its task id, with
// the attributes ECS writes, in a service with a custom health check whose status ECS keeps as the task's health.
// The platform team creates the Cloud Map service (ECS serviceRegistries names its ARN) and tags it to opt it in.
import {
  CreateServiceCommand,
  DeregisterInstanceCommand,
  RegisterInstanceCommand,
  type ServiceDiscoveryClient,
  UpdateInstanceCustomHealthStatusCommand,
} from '@aws-sdk/client-servicediscovery';
import { type ChildProcess, spawn } from 'node:child_process';
import { operationDone } from './cloudmap-operation.ts';

export interface EcsServiceSettings {
  /** ECS_CLUSTER_NAME. */
  cluster: string;
  /** ECS_SERVICE_NAME and ECS_TASK_DEFINITION_FAMILY. */
  service: string;
  region: string;
}

export interface EcsTask {
  /** The task id, which ECS uses as the instance id. */
  id: string;
  ip: string;
  port: number;
  zone: string;
  /** The initial status of its custom health check (AWS_INIT_HEALTH_STATUS). */
  healthy?: boolean;
}

/**
 * A Cloud Map service as the platform team creates one for ECS: a custom health check (ECS reports task health), and
 * `tags` (e.g. the opt-in tag). In a private DNS namespace, `dnsTtlSeconds` gives it A records (MULTIVALUE), as ECS
 * service discovery's services have, so the tasks resolve in the VPC too. Returns its id and ARN.
 */
export async function createEcsRegistry(
  client: ServiceDiscoveryClient,
  namespaceId: string,
  name: string,
  tags: Record<string, string> = {},
  dnsTtlSeconds?: number,
): Promise<{ id: string; arn: string }> {
  const { Service } = await client.send(
    new CreateServiceCommand({
      Name: name,
      NamespaceId: namespaceId,
      HealthCheckCustomConfig: {},
      Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })),
      ...(dnsTtlSeconds === undefined
        ? {}
        : { DnsConfig: { RoutingPolicy: 'MULTIVALUE', DnsRecords: [{ Type: 'A', TTL: dnsTtlSeconds }] } }),
    }),
  );
  return { id: Service!.Id!, arn: Service!.Arn! };
}

/** What ECS does to the Cloud Map service of one ECS service as its tasks start, stop and change health. */
export class EcsServiceRegistrant {
  readonly #client: ServiceDiscoveryClient;
  readonly #serviceId: string;
  readonly #settings: EcsServiceSettings;

  constructor(client: ServiceDiscoveryClient, serviceId: string, settings: EcsServiceSettings) {
    this.#client = client;
    this.#serviceId = serviceId;
    this.#settings = settings;
  }

  /** The attributes ECS writes for a task in awsvpc networking (no EC2_INSTANCE_ID: Fargate). */
  attributes(task: EcsTask): Record<string, string> {
    const { cluster, service, region } = this.#settings;
    return {
      AWS_INSTANCE_IPV4: task.ip,
      AWS_INSTANCE_PORT: String(task.port),
      AVAILABILITY_ZONE: task.zone,
      REGION: region,
      ECS_CLUSTER_NAME: cluster,
      ECS_SERVICE_NAME: service,
      ECS_TASK_DEFINITION_FAMILY: service,
      AWS_INIT_HEALTH_STATUS: task.healthy === false ? 'UNHEALTHY' : 'HEALTHY',
    };
  }

  /** A task started: its instance is registered; resolves once Cloud Map applied it. */
  async start(task: EcsTask): Promise<void> {
    const { OperationId } = await this.#client.send(
      new RegisterInstanceCommand({
        ServiceId: this.#serviceId,
        InstanceId: task.id,
        Attributes: this.attributes(task),
      }),
    );
    await operationDone(this.#client, OperationId);
  }

  /** A task stopped: its instance is deregistered. */
  async stop(taskId: string): Promise<void> {
    const { OperationId } = await this.#client.send(
      new DeregisterInstanceCommand({ ServiceId: this.#serviceId, InstanceId: taskId }),
    );
    await operationDone(this.#client, OperationId);
  }

  /** The task's health check changed: ECS updates the custom health status. */
  async setHealth(taskId: string, healthy: boolean): Promise<void> {
    await this.#client.send(
      new UpdateInstanceCustomHealthStatusCommand({
        ServiceId: this.#serviceId,
        InstanceId: taskId,
        Status: healthy ? 'HEALTHY' : 'UNHEALTHY',
      }),
    );
  }
}

/**
 * A task's server in network namespace `netns` (a bridge host, hack/testbed/data-path/host-network.ts): it answers
 * every TCP connection on ip:port with `task=<id>` and closes it, as the data-path echo pods answer `cluster=<id>`.
 * Resolves once it listens; kill() the process to stop it.
 */
export async function startTaskServer(netns: string, ip: string, port: number, taskId: string): Promise<ChildProcess> {
  const script =
    `require('node:net').createServer((s) => s.end('task=${taskId}\\n'))` +
    `.listen(${port}, '${ip}', () => console.log('listening'));`;
  const child = spawn('ip', ['netns', 'exec', netns, process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // A rejection after the resolve (the server killed at the end) is ignored by the settled promise.
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) =>
      reject(
        new Error(`task server ${taskId} in ${netns} exited (${String(code)}) before listening: ${stderr.trim()}`),
      ),
    );
  });
  return child;
}
