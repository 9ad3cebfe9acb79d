// W6: large bodies are read and answered in the review worker thread. Their answers are the ones the main thread gives
// the same review at ordinary size (one code path), and a thread that hangs or dies costs its own review only: that
// review gets a 500 naming the failure (the apiserver's failurePolicy applies), one JSON log line says what happened,
// and a fresh thread answers the next large body.

import { readdirSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { expect } from 'chai';
import {
  createApp,
  LARGE_BODY_BYTES,
  LARGE_BODY_PACE,
  THREAD_BODY_BYTES,
  type WebhookApp,
} from '../../../src/webhook/transport/app.ts';
import { createWebhookMetrics } from '../../../src/webhook/transport/metrics.ts';
import { captureLogger } from '../kube/support.ts';
import { bodies } from '../../support/webhook-client.ts';
import { context, viewWith } from '../../support/webhook-fixtures.ts';

type Route = '/validate' | '/mutate' | '/convert';

/** The first benchmark body of `route`, its object annotated with `fault`, then padded with spaces past the large-body threshold if `large`. */
function body(route: Route, large: boolean, fault = 'none'): Buffer {
  const review = JSON.parse(bodies(route)[0]!.toString()) as {
    request: { object?: { metadata: Record<string, unknown> }; objects?: Array<{ metadata: Record<string, unknown> }> };
  };
  const object = review.request.object ?? review.request.objects![0]!;
  object.metadata.annotations = { fault };
  const text = JSON.stringify(review);
  return Buffer.from(large ? text.padEnd(THREAD_BODY_BYTES + 1024, ' ') : text);
}

async function post(
  port: number,
  route: Route,
  payload: Buffer,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        port,
        path: route,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': payload.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            json: JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Nice value of each of this process's threads, by thread id (Linux /proc; field 19 of a task's stat). */
function threadNice(): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    nice.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nice;
}

async function serve(reviewThread?: { entry: URL; deadlineMs: number }) {
  const { logger, lines } = captureLogger();
  const webhook: WebhookApp = createApp({
    validation: context(viewWith()),
    metrics: createWebhookMetrics(),
    logger,
    ready: () => true,
    maxRequestBytes: 7 * 2 ** 20,
    ...(reviewThread ? { reviewThread } : {}),
  });
  const server: Server = createServer(webhook.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    lines,
    async close() {
      await new Promise((r) => server.close(r));
      await webhook.close();
    },
  };
}

describe('W6: large bodies in the review worker thread', function () {
  this.timeout(30_000);

  it('are answered exactly as the same review of ordinary size is, on every route', async () => {
    const s = await serve();
    try {
      for (const route of ['/validate', '/mutate', '/convert'] as const) {
        const small = await post(s.port, route, body(route, false));
        expect(small.status, route).to.equal(200);
        expect(await post(s.port, route, body(route, true)), route).to.deep.equal(small);
        // At the large-body slot's size too.
        const slotted = Buffer.from(
          body(route, false)
            .toString()
            .padEnd(LARGE_BODY_BYTES + 1024, ' '),
        );
        expect(await post(s.port, route, slotted), route).to.deep.equal(small);
      }
      // Refusals too: a body that is not JSON, and one that is not a review.
      const broken = (b: Buffer) => Buffer.concat([b.subarray(0, b.length - 2), Buffer.from('!!')]);
      const [smallBroken, largeBroken] = [
        await post(s.port, '/mutate', broken(body('/mutate', false))),
        await post(s.port, '/mutate', broken(body('/mutate', true))),
      ];
      expect([smallBroken.status, largeBroken.status]).to.deep.equal([400, 400]);
      expect(largeBroken.json.message).to.match(/^request body is not valid JSON: /);
      const notReview = Buffer.from('{"kind":"Pod"}'.padEnd(THREAD_BODY_BYTES + 10, ' '));
      expect(await post(s.port, '/validate', notReview)).to.deep.equal(
        await post(s.port, '/validate', Buffer.from('{"kind":"Pod"}')),
      );
    } finally {
      await s.close();
    }
  });

  it('runs the thread at a lower CPU priority than the main thread, whose ordinary reviews win a shared core', async () => {
    const s = await serve();
    try {
      const before = threadNice();
      expect((await post(s.port, '/mutate', body('/mutate', true))).status).to.equal(200);
      const started = [...threadNice()].filter(([tid]) => !before.has(tid)).map(([, nice]) => nice);
      expect(started, 'nice values of the threads the large body started').to.include(10);
      expect(threadNice().get(process.pid), 'the main thread keeps its nice value').to.equal(before.get(process.pid));
    } finally {
      await s.close();
    }
  });

  it("reads a large body no faster than the pace's ceiling, while ordinary reviews are answered at once", async () => {
    // Unbounded, this 4 MiB body was answered in about 250 ms, the thread's start included.
    const s = await serve();
    try {
      const small = body('/mutate', false);
      const large = Buffer.from(small.toString().padEnd(4 * 2 ** 20, ' '));
      // Lower bounds only: the pace makes the large body slow, and a loaded machine can only make it slower. That the
      // ordinary review is not held behind it is shown by order, not by a time.
      const started = performance.now();
      let largeDone = false;
      const largeAnswered = post(s.port, '/mutate', large).then((answer) => {
        largeDone = true;
        return { answer, after: performance.now() - started };
      });
      await new Promise((r) => setTimeout(r, 100));
      const ordinary = await post(s.port, '/mutate', small);
      expect(
        largeDone,
        'the large body still being read when the ordinary review posted after it was answered',
      ).to.equal(false);
      const { answer, after } = await largeAnswered;
      expect(answer).to.deep.equal(ordinary);
      const floorMs = (large.length * 1000) / LARGE_BODY_PACE.maxBytesPerSecond;
      expect(after, 'ms until the large body was answered').to.be.at.least(floorMs * 0.9);
    } finally {
      await s.close();
    }
  });

  it("a client that trickles a large body loses the large-body slot after the pace's grace; the large review behind it is answered", async () => {
    // Before the pace, the trickle held the slot until the request deadline (30 s) and the review behind it waited.
    const s = await serve();
    const slow = connect(s.port, '127.0.0.1');
    let reply = '';
    let closedAt: number | undefined;
    const closed = new Promise<void>((resolve) =>
      slow.on('close', () => {
        closedAt = performance.now();
        resolve();
      }),
    );
    slow.on('data', (c: Buffer) => {
      reply += c.toString('latin1');
    });
    slow.on('error', () => {});
    const trickle = setInterval(() => slow.write(' '), 200);
    try {
      const started = performance.now();
      slow.write(
        `POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${LARGE_BODY_BYTES + 1024}\r\n\r\n{`,
      );
      await new Promise((r) => setTimeout(r, 300));
      const behind = Buffer.from(
        body('/validate', false)
          .toString()
          .padEnd(LARGE_BODY_BYTES + 1024, ' '),
      );
      const answered = await post(s.port, '/validate', behind);
      const answeredAt = performance.now();
      expect(answered.status).to.equal(200);
      // The trickle held the slot through the grace (a lower bound: load only lengthens it), then lost it to the pace
      // (the 408 below says which limit ended it): the review behind it got the slot once the trickle was cut.
      expect(answeredAt - started, 'ms until the review behind the trickle was answered').to.be.at.least(
        LARGE_BODY_PACE.graceMs,
      );
      await closed;
      expect(closedAt!, 'the trickling connection closed before the review behind it was answered').to.be.at.most(
        answeredAt,
      );
      expect(reply)
        .to.match(/^HTTP\/1\.1 408 /)
        .and.match(/request body arrived too slowly: \d+ of \d+ bytes arrived in/);
      expect(s.lines.filter((l) => l.event === 'large-body-too-slow')).to.have.length(1);
    } finally {
      clearInterval(trickle);
      slow.destroy();
      await s.close();
    }
  });

  for (const fault of ['hang', 'throw', 'exit'] as const) {
    it(`a thread that ${fault === 'hang' ? 'hangs past its deadline' : fault === 'throw' ? 'throws' : 'exits'}: a 500 for that review, one log line, a fresh thread for the next`, async () => {
      // The deadline also bounds a fresh thread's start, which a loaded machine stretches past a second: one that only a
      // hang reaches, and long enough for the next review's new thread. A throw or an exit ends the review by itself.
      const deadlineMs = fault === 'hang' ? 10_000 : 60_000;
      const s = await serve({ entry: new URL('../../support/review-worker-faults.ts', import.meta.url), deadlineMs });
      try {
        const started = performance.now();
        const failed = await post(s.port, '/mutate', body('/mutate', true, fault));
        const took = performance.now() - started;
        expect(failed.status).to.equal(500);
        expect(failed.json.message)
          .to.match(
            fault === 'hang'
              ? new RegExp(`no answer within ${deadlineMs} ms; the worker thread was stopped`)
              : /worker thread (failed|exited)/,
          )
          .and.match(/failurePolicy applies/);
        // The message above names the deadline that ended it; no sooner than that deadline (load only makes it later).
        if (fault === 'hang') expect(took, 'answered at its deadline').to.be.at.least(deadlineMs - 100);
        const logged = s.lines.filter((l) => l.event === 'review-thread-failed');
        expect(logged).to.have.length(1);
        expect(logged[0]).to.include({
          level: 'error',
          webhook: 'mutate',
          reason: fault === 'hang' ? 'deadline' : 'crash',
        });
        const next = await post(s.port, '/mutate', body('/mutate', true));
        expect(next).to.deep.equal(await post(s.port, '/mutate', body('/mutate', false)));
      } finally {
        await s.close();
      }
    });
  }
});
