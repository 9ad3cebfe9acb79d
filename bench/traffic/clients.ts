// The traffic benchmark's clients at work: each stream is a bash loop of curl in a cluster's client pod
// (test/support/traffic-requests.ts), run through `kubectl exec` until the benchmark creates the stream's stop file;
// its output is parsed into requests when it ends.
import { spawn } from 'node:child_process';
import { kubectlBinary } from '../../hack/testbed/paths.ts';
import { kubectl } from './kubectl.ts';
import type { E2ECluster } from '../../test/support/e2e-harness.ts';
import { clientScript, parseClientOutput, type ConnectionMode } from '../../test/support/traffic-requests.ts';
import type { Side, Stream } from '../../test/support/traffic-result.ts';
import { NS } from './workload.ts';

export interface StreamSpec {
  side: Side;
  cluster: E2ECluster;
  via: string;
  url: string;
  mode: ConnectionMode;
}

export interface ClientRates {
  /** Pause between requests on new connections. */
  intervalMs: number;
  /** Requests a second over kept-alive connections. */
  perSecond: number;
  timeoutS: number;
}

export interface RunningStreams {
  /** Ends every stream (each finishes its current curl run, up to 10 s) and returns their requests. */
  stop(): Promise<Stream[]>;
}

let runs = 0;

export function startStreams(specs: readonly StreamSpec[], rates: ClientRates): RunningStreams {
  const stopFile = `/tmp/stop-${process.pid}-${++runs}`;
  const running = specs.map((spec) => {
    const script = clientScript({ url: spec.url, mode: spec.mode, stop: stopFile, ...rates });
    const child = spawn(
      kubectlBinary(),
      ['--kubeconfig', spec.cluster.cluster.kubeconfigPath, 'exec', '-n', NS, 'client', '--', 'bash', '-c', script],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // Settled only when awaited by stop(): a client that fails is reported there, once the others have ended.
    const done = new Promise<{ out: string; failure?: string }>((resolve) => {
      child.on('error', (e) => resolve({ out, failure: e.message }));
      child.on('exit', (code) =>
        resolve(code === 0 ? { out } : { out, failure: `exited ${code}: ${err.trim().slice(-500)}` }),
      );
    });
    return { spec, done };
  });
  return {
    async stop() {
      await Promise.all(
        [...new Set(specs.map((s) => s.cluster))].map((cluster) =>
          kubectl(cluster, ['exec', '-n', NS, 'client', '--', 'touch', stopFile]),
        ),
      );
      const ended = await Promise.all(running.map(async ({ spec, done }) => ({ spec, ...(await done) })));
      const failed = ended.filter((e) => e.failure !== undefined);
      if (failed.length > 0)
        throw new Error(
          failed.map((e) => `client ${e.spec.cluster.id} ${e.spec.via} ${e.spec.mode} ${e.failure}`).join('\n'),
        );
      return ended.map(({ spec, out }) => ({
        side: spec.side,
        cluster: spec.cluster.id,
        via: spec.via,
        mode: spec.mode,
        records: parseClientOutput(out, spec.mode === 'keep-alive' ? 1000 / rates.perSecond : rates.intervalMs),
      }));
    },
  };
}
