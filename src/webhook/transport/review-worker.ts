// The review worker thread: reads, parses and answers large bodies off the main thread's event loop (W6), with the
// same functions the main thread uses for bodies of ordinary size (review-answer.ts). Started by review-pool.ts.

import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { WriterIdentities } from '../admission/worker-only-writes.ts';
import { answerBody, type BodyJob } from './review-answer.ts';

/**
 * The thread's nice value. When the thread and the main thread want the same core, the main thread's ordinary reviews
 * should win it: a large body can wait some milliseconds, a review of a few KiB is held to a 5 ms p99 (W6). On Linux a
 * thread's nice value is its own (setpriority with who = 0 names the calling thread); elsewhere it would be the
 * whole process's, so it is left alone there.
 */
const REVIEW_THREAD_NICE = 10;

if (process.platform === 'linux') setPriority(0, REVIEW_THREAD_NICE);
const { writers } = workerData as { writers: WriterIdentities };
parentPort!.on('message', (job: BodyJob) => {
  const reply = answerBody(job, writers);
  // The answer's bytes move to the main thread; no copy, no object graph to deserialise there.
  parentPort!.postMessage(reply, 'bytes' in reply ? [reply.bytes.buffer as ArrayBuffer] : []);
});
