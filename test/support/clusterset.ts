// One 2-cluster ClusterSet shared by every integration and e2e suite of a mocha run: started on first use, stopped by
// the root hooks in hooks.ts (logs kept, and their path printed, when a test failed).
import type { ClusterSetOptions, TestClusterSet } from '../../hack/testbed/index.ts';

let shared: Promise<TestClusterSet> | undefined;

/** The run's ClusterSet (clusters cls1 and cls2, Cloud Map emulator), started on the first call. */
export function sharedClusterSet(): Promise<TestClusterSet> {
  // Imported lazily so unit-test runs, which load the root hooks too, do not load the Kubernetes client.
  shared ??= import('../../hack/testbed/index.ts').then((t) => t.startClusterSet());
  return shared;
}

/** Stops the shared ClusterSet if one was started; a failed start already kept its logs. */
export async function stopSharedClusterSet(keepLogs: boolean): Promise<void> {
  if (!shared) return;
  const pending = shared;
  shared = undefined;
  let cs: TestClusterSet;
  try {
    cs = await pending;
  } catch {
    return;
  }
  await cs.stop({ keepLogs });
}

/** How long a suite's before hook may wait for the ClusterSet: a cold start plus a generous margin. */
export const CLUSTERSET_START_TIMEOUT_MS = 180_000;

/**
 * Call inside describe(): starts or reuses the shared ClusterSet before the suite's tests; the returned function gives
 * it to the tests.
 */
export function withClusterSet(): () => TestClusterSet {
  let cs: TestClusterSet | undefined;
  before(async function () {
    this.timeout(CLUSTERSET_START_TIMEOUT_MS);
    cs = await sharedClusterSet();
  });
  return () => {
    if (!cs)
      throw new Error(
        'the shared ClusterSet is not started: call withClusterSet() inside describe(), not inside a test',
      );
    return cs;
  };
}

/**
 * Call inside describe() for a suite that needs a ClusterSet of its own (another size, shared pod CIDR): started before
 * the suite's tests, stopped after them, logs kept (and their path printed) when one of them failed.
 */
export function withOwnClusterSet(opts: ClusterSetOptions): () => TestClusterSet {
  let cs: TestClusterSet | undefined;
  let failed = false;
  before(async function () {
    this.timeout(CLUSTERSET_START_TIMEOUT_MS);
    const { startClusterSet } = await import('../../hack/testbed/index.ts');
    cs = await startClusterSet(opts);
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });
  after(async function () {
    this.timeout(30_000);
    await cs?.stop({ keepLogs: failed });
  });
  return () => {
    if (!cs)
      throw new Error(
        "this suite's ClusterSet is not started: call withOwnClusterSet() inside describe(), not inside a test",
      );
    return cs;
  };
}
