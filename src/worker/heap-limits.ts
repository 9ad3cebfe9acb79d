// V8 sizes its heap for the machine, not for the worker: during a burst (the first sync of 1,000 services) it lets the
// young generation grow to tens of MiB and garbage pile up in the old one, and keeps those pages for minutes. The
// worker's live heap is about 60 MiB at 1,000 services, so capping both generations keeps RSS near what it needs
// (docs/benchmarks.md: peak RSS 402 MiB uncapped, 205 MiB capped, same latencies).

/** Young-generation semi-space cap; larger only makes scavenges rarer, not the worker faster. */
const SEMI_SPACE_MIB = 4;

const HEAP_FLAG = '--max-old-space-size';

/**
 * The Node.js arguments to re-execute with so that the heap is capped at `maxHeapMiB` (0: leave Node's defaults), or
 * undefined when nothing needs to change: no cap wanted, or one already given on the command line or in NODE_OPTIONS
 * (an operator's explicit choice wins).
 */
export function heapLimitedArgs(maxHeapMiB: number, execArgv: readonly string[], nodeOptions: string | undefined): string[] | undefined {
  if (maxHeapMiB <= 0) return undefined;
  if ([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((a) => a.startsWith(HEAP_FLAG) || a.startsWith('--max_old_space_size'))) return undefined;
  return [...execArgv, `${HEAP_FLAG}=${maxHeapMiB}`, `--max-semi-space-size=${SEMI_SPACE_MIB}`];
}
