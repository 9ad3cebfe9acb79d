// `npm run bench:data-path [-- --services=10]`: how long a newly exported service takes to answer a pod of the other
// cluster, on a 2-cluster testbed ClusterSet whose clusters each have a real node (docs/testbed.md "Data path"), with
// both processes of mcs-cloudmap deployed as test/e2e runs them. A namespace is exported first (its echo service
// answered from cls2), then, one at a time, each fresh Service of cls1 is created and exported while cls2's client
// pod asks for it by its clusterset name every 100 ms: the figure is from `kubectl apply` of the ServiceExport to the
// first answer from cls1. Prints the samples, and writes bench/results/data-path-<N>-services.json, the row of
// docs/benchmarks.md ("Data path: export to first request"); `--results=` for a trial, which must not replace it.
import { deployLocally } from '../hack/local/deploy.ts';
import { missingDataPathPrerequisites, startClusterSet } from '../hack/testbed/index.ts';
import { loadNow, resultOfThisRun, resultsOption, writeResult } from '../hack/results/result-file.ts';
import { formatHelp, intOption, parseOptions } from '../src/config/options.ts';
import { clientPod, echoDeployment, firstAnswer, readyPods } from '../test/support/data-path-pods.ts';
import { applyClusterProperties, condition, E2ECluster } from '../test/support/e2e-harness.ts';
import { eventually } from '../test/support/eventually.ts';
import { createNamespaces, service, serviceExport } from '../test/support/workloads.ts';
import { percentile } from './load.ts';

const NS = 'bench-data-path';
const PORTS = [{ name: 'tcp', port: 8080 }];
/** The goal of docs/benchmarks.md: a fresh service answers in the other cluster within 3 s. */
const GOAL_MS = 3000;

const specs = {
  services: intOption(
    'services',
    'BENCH_SERVICES',
    10,
    'Fresh services exported one after the other, each timed to its first answer.',
    1,
    100,
  ),
  results: resultsOption,
};

/** Exports `name` from cls1; ms from the export's apply to the first answer from cls1 in cls2's client pod. */
async function exportToFirstAnswer(cls1: E2ECluster, cls2: E2ECluster, name: string): Promise<number> {
  const answered = firstAnswer(cls2, NS, `${name}.${NS}.svc.clusterset.local`, 8080, 'cluster=cls1', 60);
  const exportedAt = Date.now();
  cls1.apply([serviceExport(NS, name)]);
  return (await answered) - exportedAt;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    console.log(
      formatHelp(
        'npm run bench:data-path -- [flags]: export of a fresh service → first answer to a pod of the other cluster, on real nodes',
        specs,
      ),
    );
    return 0;
  }
  const o = parseOptions(specs, argv);
  const missing = missingDataPathPrerequisites();
  if (missing.length > 0) throw new Error(`this machine cannot run the testbed's data path: ${missing.join('; ')}`);
  const loadBefore = loadNow();
  const cs = await startClusterSet({ dataPath: true, log: (line) => console.error(`[testbed] ${line}`) });
  let failed = true;
  try {
    const deployment = await deployLocally(cs);
    try {
      const clusters = cs.clusters.map((c, i) => new E2ECluster(c, deployment.installs[i]!));
      for (const c of clusters) applyClusterProperties(c, cs.clustersetId);
      const [cls1, cls2] = clusters as [E2ECluster, E2ECluster];
      await createNamespaces(clusters, NS);
      cls1.apply([echoDeployment(NS, 'cls1', 'echo', 2, PORTS), service(NS, 'echo', { ports: PORTS })]);
      cls2.apply([clientPod(NS)]);
      await readyPods(cls1, NS, 'echo', 2);
      cls2.kubectl(['wait', '-n', NS, '--for=condition=Ready', 'pod/client', '--timeout=120s']);
      // The namespace's first export creates it in Cloud Map; what is timed below is a service added to it.
      const first = await exportToFirstAnswer(cls1, cls2, 'echo');
      console.log(`namespace exported: echo answered in cls2 ${first.toLocaleString('en-US')} ms after its export`);

      const samples: number[] = [];
      for (let i = 0; i < o.services; i++) {
        const name = `fresh-${i}`;
        cls1.apply([service(NS, name, { ports: PORTS, selector: { app: 'echo' } })]);
        samples.push(await exportToFirstAnswer(cls1, cls2, name));
        await eventually(
          `cls1: ServiceExport ${name} Ready`,
          async () => condition(await cls1.serviceExport(NS, name), 'Ready')?.status === 'True',
        );
      }
      const sorted = [...samples].sort((a, b) => a - b);
      const p50 = percentile(sorted, 50);
      const p99 = percentile(sorted, 99);
      console.log(
        `export → first answer from a cls2 pod, ${samples.length} fresh services: ${samples.join(', ')} ms (p50 ${p50}, p99 ${p99}; goal ≤ ${GOAL_MS})`,
      );
      const saved = writeResult(
        resultOfThisRun({
          benchmark: 'data-path',
          scenario: `${samples.length}-services`,
          size: `${samples.length} fresh services in a namespace already exported, 2 clusters with a real node each`,
          command: `npm run bench:data-path -- --services=${o.services}`,
          load: `${loadBefore} at the start, ${loadNow()} at the end`,
          note: `The namespace's first export answered after ${first.toLocaleString('en-US')} ms in the same run`,
          figures: [
            {
              name: 'kubectl apply in cls1 → first answer to a cls2 pod, p99 (= max)',
              value: p99,
              unit: 'ms',
              atMost: GOAL_MS,
              detail: `p50 ${p50.toLocaleString('en-US')} ms`,
            },
          ],
        }),
        o.results,
      );
      if (saved) console.log(`result written to ${saved}`);
      failed = false;
    } finally {
      await deployment.stop();
    }
  } finally {
    await cs.stop({ keepLogs: failed });
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `bench:data-path failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
