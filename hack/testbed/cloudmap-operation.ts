// Waiting for a Cloud Map write from outside the product: the tests, the demo and the ECS stand-ins (ecs-tasks.ts)
// wait for the operations their own writes started.
import { GetOperationCommand, type ServiceDiscoveryClient } from '@aws-sdk/client-servicediscovery';

/**
 * Resolves once a Cloud Map operation finished (the emulator, like Cloud Map, applies writes asynchronously); throws
 * when it failed. Returns the operation's targets (NAMESPACE, SERVICE, INSTANCE ids). `ownerAccount`: the namespace
 * owner's account, for an operation in a namespace shared with the client's account.
 */
export async function operationDone(
  client: ServiceDiscoveryClient,
  operationId: string | undefined,
  ownerAccount?: string,
): Promise<Record<string, string>> {
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    const { Operation } = await client.send(
      new GetOperationCommand({ OperationId: operationId, OwnerAccount: ownerAccount }),
    );
    if (Operation?.Status === 'SUCCESS') return Operation.Targets ?? {};
    if (Operation?.Status === 'FAIL')
      throw new Error(`Cloud Map operation ${operationId} failed: ${Operation.ErrorCode}: ${Operation.ErrorMessage}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}
