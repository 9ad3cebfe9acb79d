// Buffers that large bodies are read into, kept and reused (W6). Each body used to get 7 MiB of fresh memory on the
// main thread, and V8 counts such memory towards starting a major collection: while maximum-size bodies arrived the
// main heap was marked and compacted several times a second for a live heap that did not grow, and those pauses fell
// on ordinary reviews (docs/reliability.md). A shared buffer is allocated once, lent to the reader, read in place by
// the review worker thread and given back once the thread has answered, so a body allocates no buffer of its size.

export class BodyBuffers {
  readonly #size: number;
  readonly #count: number;
  readonly #free: SharedArrayBuffer[] = [];
  #made = 0;

  /** Up to `count` shared buffers of `size` bytes, each made when first needed. */
  constructor(size: number, count: number) {
    this.#size = size;
    this.#count = count;
  }

  /**
   * A buffer of exactly `length` bytes: a view of a free shared buffer, or (all lent, or `length` over the size) memory
   * of its own, which no one gives back.
   */
  take(length: number): Buffer {
    const shared =
      length > this.#size
        ? undefined
        : (this.#free.pop() ??
          (this.#made < this.#count ? (this.#made++, new SharedArrayBuffer(this.#size)) : undefined));
    return shared ? Buffer.from(shared, 0, length) : Buffer.allocUnsafeSlow(length);
  }

  /**
   * Gives back what `take` lent, once nothing reads it any more: its review answered by the thread, or dropped before
   * it got there. Memory of its own is left to the collector.
   */
  give(buffer: Uint8Array): void {
    if (buffer.buffer instanceof SharedArrayBuffer && !this.#free.includes(buffer.buffer))
      this.#free.push(buffer.buffer);
  }
}
