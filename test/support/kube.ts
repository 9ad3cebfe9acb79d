// Small Kubernetes helpers for tests on the testbed.
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { eventually } from './eventually.ts';

function statusCode(err: unknown): number | undefined {
  return (err as { code?: number }).code;
}

/**
 * Creates a namespace and waits for its `default` ServiceAccount: until the ServiceAccount controller made it, the API
 * refuses pods there and Deployments stall in back-off. An existing namespace is fine; one still terminating (left by
 * an earlier suite) is waited out first.
 */
export async function createNamespace(kc: KubeConfig, name: string, timeoutMs = 60_000): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  await eventually(
    `namespace ${name} to exist and not be terminating`,
    async () => {
      try {
        const ns = await api.readNamespace({ name });
        return ns.status?.phase !== 'Terminating';
      } catch (err) {
        if (statusCode(err) !== 404) throw err;
      }
      try {
        await api.createNamespace({ body: { metadata: { name } } });
      } catch (err) {
        if (statusCode(err) !== 409)
          throw new Error(`creating namespace ${name}: ${(err as Error).message}`, { cause: err });
      }
      return false;
    },
    timeoutMs,
  );
  await eventually(
    `ServiceAccount ${name}/default`,
    async () => {
      await api.readNamespacedServiceAccount({ name: 'default', namespace: name });
      return true;
    },
    timeoutMs,
  );
}

/** Deletes a namespace and waits until it is gone, so a later suite can create it afresh. */
export async function deleteNamespace(kc: KubeConfig, name: string, timeoutMs = 60_000): Promise<void> {
  const api = kc.makeApiClient(CoreV1Api);
  try {
    await api.deleteNamespace({ name });
  } catch (err) {
    if (statusCode(err) === 404) return;
    throw new Error(`deleting namespace ${name}: ${(err as Error).message}`, { cause: err });
  }
  await eventually(
    `namespace ${name} to be deleted`,
    async () => {
      try {
        await api.readNamespace({ name });
        return false;
      } catch (err) {
        if (statusCode(err) === 404) return true;
        throw err;
      }
    },
    timeoutMs,
  );
}
