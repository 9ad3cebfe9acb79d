// Reads a large body of known length into a buffer allocated up front, copying each chunk as it arrives (W6):
// concatenating 7 MiB of chunks at the end held the event loop about 2.4 ms per body, and the buffer goes to the review
// worker thread without a copy (shared, or its own ArrayBuffer transferred). A body that holds the one large-body slot
// must also keep a pace: otherwise a client that announces a large body and trickles it holds the slot, and every
// large review behind it, until the request deadline (30 s). It is also read no faster than a ceiling, so clients that
// send large bodies back to back cannot take the main thread from ordinary reviews.

import type { IncomingMessage } from 'node:http';

const bodyError = (type: string, message: string) => Object.assign(new Error(message), { status: 400, type });

/**
 * The slowest a body may arrive: on average `bytesPerSecond` since its read began, judged from `graceMs` on; and the
 * fastest it is read: `maxBytesPerSecond` on average, the socket paused while it is ahead.
 */
export interface Pace {
  bytesPerSecond: number;
  graceMs: number;
  maxBytesPerSecond: number;
}

/** How often the pace is checked. */
const PACE_CHECK_MS = 250;

/** Bytes a body read for `elapsedMs` must have delivered to keep `pace` (all of them once the pace allows). */
export function paceDue(pace: Pace, length: number, elapsedMs: number): number {
  return elapsedMs < pace.graceMs ? 0 : Math.min(length, Math.floor((pace.bytesPerSecond * elapsedMs) / 1000));
}

/** How long to wait, after `elapsedMs` of reading, before reading on past `received` bytes under `pace`'s ceiling. */
export function paceWait(pace: Pace, received: number, elapsedMs: number): number {
  return Math.max(0, (received * 1000) / pace.maxBytesPerSecond - elapsedMs);
}

/**
 * Fills `body` with the body of `req`, which announced `body.length` bytes; rejects as body-parser would on a short body
 * or an abort, and with a 408 (`request.too.slow`) when the body falls behind `pace`; pauses `req` while it is ahead
 * of the pace's ceiling.
 */
export function readSized(req: IncomingMessage, body: Buffer, pace?: Pace): Promise<Buffer> {
  const length = body.length;
  return new Promise((resolve, reject) => {
    let received = 0;
    let done = false;
    const started = performance.now();
    const check =
      pace &&
      setInterval(() => {
        const elapsed = performance.now() - started;
        if (received >= paceDue(pace, length, elapsed)) return;
        const rate = Math.round(received / (elapsed / 1000));
        const message = `${received} of ${length} bytes arrived in ${(elapsed / 1000).toFixed(1)} s (${rate} bytes/s)`;
        finish(
          Object.assign(bodyError('request.too.slow', message), { status: 408, bytesPerSecond: pace.bytesPerSecond }),
        );
      }, PACE_CHECK_MS);
    check?.unref();
    let resume: NodeJS.Timeout | undefined;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearInterval(check);
      clearTimeout(resume);
      req.off('data', onData);
      if (err) {
        req.resume();
        reject(err);
      } else resolve(body);
    };
    const onData = (chunk: Buffer) => {
      if (received + chunk.length > length)
        return finish(bodyError('request.size.invalid', 'request size did not match content length'));
      chunk.copy(body, received);
      received += chunk.length;
      const wait = pace && received < length ? paceWait(pace, received, performance.now() - started) : 0;
      if (wait >= 1) {
        req.pause();
        resume = setTimeout(() => req.resume(), wait);
      }
    };
    req.on('data', onData);
    req.once('end', () =>
      finish(
        received === length
          ? undefined
          : bodyError('request.size.invalid', 'request size did not match content length'),
      ),
    );
    req.once('close', () => finish(bodyError('request.aborted', 'request aborted')));
    req.once('error', (err) => finish(err));
  });
}
