// W6: large bodies are read into shared buffers that are kept and reused, so a body allocates no fresh memory.

import { expect } from 'chai';
import { BodyBuffers } from '../../../src/webhook/transport/body-buffers.ts';

describe('W6: BodyBuffers', () => {
  it('lends a view of exactly the length asked, over a shared buffer of the full size', () => {
    const buffers = new BodyBuffers(1024, 1);
    const b = buffers.take(300);
    expect(b.length).to.equal(300);
    expect(b.buffer).to.be.instanceOf(SharedArrayBuffer);
    expect(b.buffer.byteLength).to.equal(1024);
  });

  it('reuses a buffer given back instead of making another', () => {
    const buffers = new BodyBuffers(1024, 1);
    const first = buffers.take(1024);
    buffers.give(first);
    expect(buffers.take(10).buffer).to.equal(first.buffer);
  });

  it('lends each shared buffer to one taker at a time; past the count, memory of its own', () => {
    const buffers = new BodyBuffers(1024, 2);
    const [a, b, c] = [buffers.take(100), buffers.take(100), buffers.take(100)];
    expect(a.buffer).to.be.instanceOf(SharedArrayBuffer);
    expect(b.buffer).to.be.instanceOf(SharedArrayBuffer);
    expect(b.buffer).to.not.equal(a.buffer);
    expect(c.buffer).to.not.be.instanceOf(SharedArrayBuffer);
    expect(c.buffer.byteLength).to.equal(100);
  });

  it('gives memory of its own for a length over the size', () => {
    const buffers = new BodyBuffers(1024, 1);
    expect(buffers.take(1025).buffer).to.not.be.instanceOf(SharedArrayBuffer);
    expect(buffers.take(1024).buffer).to.be.instanceOf(SharedArrayBuffer);
  });

  it('ignores memory of its own given back, and a buffer given back twice is lent once', () => {
    const buffers = new BodyBuffers(1024, 1);
    const shared = buffers.take(10);
    buffers.give(Buffer.allocUnsafeSlow(10));
    buffers.give(shared);
    buffers.give(shared);
    expect(buffers.take(10).buffer).to.equal(shared.buffer);
    expect(buffers.take(10).buffer).to.not.be.instanceOf(SharedArrayBuffer);
  });
});
