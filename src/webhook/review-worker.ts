// The review worker thread: reads, parses and answers large bodies off the main thread's event loop (W6), with the
// same functions the main thread uses for bodies of ordinary size (review-answer.ts). Started by review-pool.ts.

import { parentPort, workerData } from 'node:worker_threads';
import type { WriterIdentities } from './admission/worker-only-writes.ts';
import { answerBody, type BodyJob } from './review-answer.ts';

const { writers } = workerData as { writers: WriterIdentities };
parentPort!.on('message', (job: BodyJob) => {
  const reply = answerBody(job, writers);
  // The answer's bytes move to the main thread; no copy, no object graph to deserialise there.
  parentPort!.postMessage(reply, 'bytes' in reply ? [reply.bytes.buffer as ArrayBuffer] : []);
});
