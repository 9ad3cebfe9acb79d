// W6: a large body is read into its buffer as it arrives, and one that holds the large-body slot must keep a pace and
// is read no faster than its ceiling.

import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { paceDue, paceWait, readSized, type Pace } from '../../../src/webhook/transport/large-body.ts';

const asRequest = (s: PassThrough) => s as unknown as IncomingMessage;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('large bodies read as they arrive (W6)', () => {
  /** Rows of [title, bytes, elapsed ms, expected] for a function of a pace, bytes and elapsed time. */
  type Row = [string, number, number, number];
  const table = (fn: (pace: Pace, bytes: number, elapsedMs: number) => number, pace: Pace, rows: Row[]) => {
    for (const [title, bytes, elapsed, want] of rows) it(title, () => expect(fn(pace, bytes, elapsed)).to.equal(want));
  };

  describe('paceDue: bytes due from a body of the given length', () =>
    table(paceDue, { bytesPerSecond: 1000, graceMs: 2000, maxBytesPerSecond: Infinity }, [
      ['nothing is due within the grace', 10_000, 1999, 0],
      ['the average rate is due from the grace on', 10_000, 2000, 2000],
      ['and grows with the time spent', 10_000, 5500, 5500],
      ['never more than the body', 3000, 9000, 3000],
    ]));

  describe('paceWait: ms to wait after the given bytes were read', () =>
    table(paceWait, { bytesPerSecond: 0, graceMs: 0, maxBytesPerSecond: 1000 }, [
      ['no wait while behind the ceiling', 500, 600, 0],
      ['no wait exactly at it', 500, 500, 0],
      ['ahead of it: until the bytes read are due', 2000, 500, 1500],
      ['the first chunk, at once: its whole length ahead', 1000, 0, 1000],
    ]));

  it('reads a body no faster than its ceiling, pausing the stream while ahead', async () => {
    const s = new PassThrough();
    const started = performance.now();
    const read = readSized(asRequest(s), Buffer.alloc(4000), {
      bytesPerSecond: 0,
      graceMs: 0,
      maxBytesPerSecond: 10_000,
    });
    for (let i = 0; i < 4; i++) s.write(Buffer.alloc(1000, i));
    s.end();
    const body = await read;
    // 4,000 bytes at 10,000 bytes/s: the last chunk is read 300 ms in (each earlier one is followed by a pause).
    expect(performance.now() - started).to.be.within(290, 1_000);
    expect([...new Set(body)]).to.deep.equal([0, 1, 2, 3]);
  });

  it('fills the buffer from chunks as they come', async () => {
    const s = new PassThrough();
    const read = readSized(asRequest(s), Buffer.alloc(6));
    s.write('abc');
    s.end('def');
    expect((await read).toString()).to.equal('abcdef');
  });

  it('refuses a body longer or shorter than announced', async () => {
    const long = new PassThrough();
    const tooLong = readSized(asRequest(long), Buffer.alloc(2));
    long.end('abc');
    await tooLong.then(
      () => expect.fail('resolved'),
      (err: { type: string; status: number }) =>
        expect([err.type, err.status]).to.deep.equal(['request.size.invalid', 400]),
    );
    const short = new PassThrough();
    const tooShort = readSized(asRequest(short), Buffer.alloc(4));
    short.end('abc');
    await tooShort.then(
      () => expect.fail('resolved'),
      (err: { type: string }) => expect(err.type).to.equal('request.size.invalid'),
    );
  });

  it('cuts a body that falls behind its pace with a 408 that says how far it got', async () => {
    const s = new PassThrough();
    const started = performance.now();
    const read = readSized(asRequest(s), Buffer.alloc(100_000), {
      bytesPerSecond: 100_000,
      graceMs: 100,
      maxBytesPerSecond: Infinity,
    });
    s.write(Buffer.alloc(10));
    const err = await read.then(
      () => expect.fail('resolved'),
      (e: { type: string; status: number; message: string }) => e,
    );
    expect([err.type, err.status]).to.deep.equal(['request.too.slow', 408]);
    expect(err.message).to.match(/^10 of 100000 bytes arrived in \d+\.\d s/);
    // Checked every 250 ms: cut at the first check past the grace.
    expect(performance.now() - started).to.be.below(1_000);
  });

  it('lets a body through that keeps its pace, however long it takes', async () => {
    const s = new PassThrough();
    const read = readSized(asRequest(s), Buffer.alloc(1200), {
      bytesPerSecond: 200,
      graceMs: 100,
      maxBytesPerSecond: Infinity,
    });
    for (let i = 0; i < 12; i++) {
      s.write(Buffer.alloc(100));
      await sleep(50);
    }
    s.end();
    expect((await read).length).to.equal(1200);
  });

  it('has no pace without one: a stalled body waits for the request deadline', async () => {
    const s = new PassThrough();
    let settled = false;
    void readSized(asRequest(s), Buffer.alloc(10))
      .finally(() => {
        settled = true;
      })
      .catch(() => {});
    s.write('a');
    await sleep(600);
    expect(settled).to.equal(false);
    s.destroy();
  });
});
