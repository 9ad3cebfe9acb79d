// kubectl without blocking the benchmark's event loop: the proxies between the workers and Cloud Map run in this
// process, so a synchronous kubectl (a `rollout status` lasts the whole rollout) would freeze every worker's Cloud Map
// traffic while it waits.
import { execFile } from 'node:child_process';
import { kubectlBinary } from '../../hack/testbed/paths.ts';
import type { E2ECluster } from '../../test/support/e2e-harness.ts';

export function kubectl(c: E2ECluster, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      kubectlBinary(),
      ['--kubeconfig', c.cluster.kubeconfigPath, ...args],
      { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 },
      (err, stdout, stderr) => {
        if (err)
          reject(new Error(`kubectl ${args.join(' ')} on ${c.id}: ${stderr.trim() || err.message}`, { cause: err }));
        else resolve(stdout);
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

export function apply(c: E2ECluster, objects: readonly object[]): Promise<string> {
  return kubectl(c, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
}
