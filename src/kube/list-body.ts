// Reads a list response (`{"kind":…,"metadata":{…},"items":[…]}`) as it arrives, handing each item over as soon as its
// last byte is in: a list page is never held whole, as text or parsed, so an informer's first lists (what a warm start
// waits for, M9) cost the client about one item at a time on top of its cache. Only `items` of the top-level object
// is split; every other member is kept, and parsed at the end as the list's envelope.
//
// Works on bytes, as they arrive (json-bytes.ts).
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './json-bytes.ts';

export interface ListEnvelope {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string };
}

export class ListBodyParser {
  readonly #onItem: (itemJson: string) => void;
  /** Nesting depth before the byte being read: 1 inside the top-level object. */
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** The bytes of the last string read at depth 1, while it is read and after (the key before an array). */
  #key: Buffer[] = [];
  #keyDone = '';
  /** Inside the top-level `items` array (its elements are at depth 2 and above). */
  #inItems = false;
  /** Parts of the item being read. */
  #item: Buffer[] = [];
  #itemStart = -1;
  /** Parts of the envelope: everything outside the items array. */
  readonly #envelope: Buffer[] = [];
  #envelopeStart = 0;

  constructor(onItem: (itemJson: string) => void) {
    this.#onItem = onItem;
  }

  /** Reads the next chunk; calls onItem for every item that ends in it. Throws on a body that is not a list. */
  push(chunk: Buffer): void {
    this.#envelopeStart = this.#inItems ? -1 : 0;
    this.#itemStart = this.#item.length > 0 ? 0 : -1;
    let keyStart = this.#inString && this.#depth === 1 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === BACKSLASH) this.#escaped = true;
        else if (c === QUOTE) {
          this.#inString = false;
          if (keyStart >= 0) {
            this.#key.push(chunk.subarray(keyStart, i));
            this.#keyDone = Buffer.concat(this.#key).toString('utf8');
            this.#key = [];
            keyStart = -1;
          }
        }
        continue;
      }
      if (c === QUOTE) {
        if (this.#depth === 2 && this.#inItems) throw new Error('list body has an item that is not an object');
        this.#inString = true;
        if (this.#depth === 1) {
          this.#key = [];
          keyStart = i + 1;
        }
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (this.#depth === 0 && c !== OPEN_OBJECT) throw new Error('list body is not a JSON object');
        if (this.#depth === 1 && c === OPEN_ARRAY && this.#keyDone === 'items') {
          // The envelope keeps `"items":[` and, after the array, `]`: the items are left out.
          this.#envelope.push(Buffer.from(chunk.subarray(this.#envelopeStart, i + 1)));
          this.#envelopeStart = -1;
          this.#inItems = true;
        } else if (this.#depth === 2 && this.#inItems) {
          if (c !== OPEN_OBJECT) throw new Error('list body has an item that is not an object');
          this.#itemStart = i;
        }
        this.#depth++;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        this.#depth--;
        if (this.#depth === 2 && this.#inItems && this.#itemStart >= 0) {
          this.#item.push(chunk.subarray(this.#itemStart, i + 1));
          this.#emitItem();
        } else if (this.#depth === 1 && this.#inItems) {
          this.#inItems = false;
          this.#envelopeStart = i;
        } else if (this.#depth < 0) {
          throw new Error('list body has an unbalanced bracket');
        }
      } else if (this.#depth === 2 && this.#inItems && c !== COMMA && !isSpace(c) && this.#itemStart < 0) {
        throw new Error('list body has an item that is not an object');
      }
    }
    if (keyStart >= 0) this.#key.push(Buffer.from(chunk.subarray(keyStart)));
    // Slices of the chunk kept past this call are copied: the caller's buffer may be reused.
    if (this.#itemStart >= 0) this.#item.push(Buffer.from(chunk.subarray(this.#itemStart)));
    if (this.#envelopeStart >= 0) this.#envelope.push(Buffer.from(chunk.subarray(this.#envelopeStart)));
  }

  /** The list's members other than its items, once the whole body was read. */
  end(): ListEnvelope {
    if (this.#depth !== 0 || this.#inString || this.#inItems) throw new Error('list body ended before its last bracket');
    const text = Buffer.concat(this.#envelope).toString('utf8');
    if (text.trim() === '') throw new Error('list body is empty');
    return JSON.parse(text) as ListEnvelope;
  }

  #emitItem(): void {
    const text = Buffer.concat(this.#item).toString('utf8');
    this.#item = [];
    this.#itemStart = -1;
    this.#onItem(text);
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
