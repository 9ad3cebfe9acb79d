// A review worker thread that misbehaves on request, for the tests of what the webhook server does when its worker
// thread hangs or dies (W6): a body containing "hang" spins forever, "throw" throws, "exit" ends the thread; any other
// body is answered as src/webhook/transport/review-worker.ts answers it.

import { parentPort, workerData } from 'node:worker_threads';
import { answerBody, type BodyJob } from '../../src/webhook/transport/review-answer.ts';

parentPort!.on('message', (job: BodyJob) => {
  const text = Buffer.from(job.body).toString('utf8');
  if (text.includes('"hang"')) for (;;);
  if (text.includes('"throw"')) throw new Error('fixture thread threw');
  if (text.includes('"exit"')) process.exit(3);
  const reply = answerBody(job, (workerData as { writers: Parameters<typeof answerBody>[1] }).writers);
  parentPort!.postMessage(reply, 'bytes' in reply ? [reply.bytes.buffer as ArrayBuffer] : []);
});
