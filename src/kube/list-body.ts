// Reads a list response (`{"kind":…,"metadata":{…},"items":[…]}`) as it arrives, handing each item over as soon as its
// last byte is in: a list page is never held whole, as text or parsed, so an informer's first lists (what a warm start
// waits for, M9) cost the client about one item at a time on top of its cache. Only `items` of the top-level object
// is split; every other member is kept, and parsed at the end as the list's envelope.
//
// Works on bytes, as they arrive (json-bytes.ts). Once the first item is in, the rest are found without the scan: an
// apiserver writes every item of a list with the same first key (`{"metadata":` for built-in kinds, `{"apiVersion":`
// for custom resources), so `},{"<that key>":` is searched for as bytes and what precedes it taken as an item if it
// parses as JSON. Parsing proves it: that text starts at an item's first byte, so it is valid JSON only if its last
// bracket closes the item. The first candidate that does not parse (the sequence inside an item) hands the rest of
// the body back to the scan. The scan cost 2.3 s of the worker's CPU for 10,000 ServiceImports and 22,540
// EndpointSlices at a warm start, JSON.parse 1.8 s (docs/benchmarks.md).
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './json-bytes.ts';

// The worker runs JavaScript in the interpreter only, where a loop over every byte made the scan several times slower
// than the parse; V8 matches regular expressions in compiled code. So the loop visits brackets, and the bytes between
// them are skipped by these:
/** At depth 3 and more (inside an item): whole strings and all but brackets, up to a bracket or a string the chunk cuts. */
const ITEM_RUN = /(?:[^"{}[\]]|"(?:[^"\\]|\\.)*")+/y;
/** The rest of a string the chunk cut: up to its next quote or backslash. */
const STRING_RUN = /[^"\\]+/y;

export interface ListEnvelope {
  kind?: string;
  apiVersion?: string;
  metadata?: { resourceVersion?: string; continue?: string };
}

/** An item's first key, as JSON writes it at the start of the item. */
const FIRST_KEY = /^\{("(?:[^"\\]|\\.)*"):/;

export class ListBodyParser {
  readonly #onItem: (item: unknown) => void;
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
  /** Parts of the envelope: everything outside the items array. */
  readonly #envelope: Buffer[] = [];
  /** `},{"<first key of the first item>":` once the first item was read. */
  #separator: Buffer | undefined;
  /** A candidate did not parse: an item holds the separator, so the rest of this list is scanned. */
  #scanOnly = false;
  /** Found by the separator: the bytes from the current item's first byte on (undefined: the scan reads). */
  #pending: Buffer | undefined;
  /** Where in #pending the separator is searched for next. */
  #searchFrom = 0;
  #separated = 0;

  constructor(onItem: (item: unknown) => void) {
    this.#onItem = onItem;
  }

  /** Items found by the separator; the others were read by the scan. */
  get separated(): number {
    return this.#separated;
  }

  /** Reads the next chunk; calls onItem for every item that ends in it. Throws on a body that is not a list. */
  push(chunk: Buffer): void {
    if (this.#pending !== undefined) this.#pushPending(chunk);
    else this.#scan(chunk);
  }

  /** Items by their separator: each candidate that parses is an item; the first that does not goes back to the scan. */
  #pushPending(chunk: Buffer): void {
    const separator = this.#separator!;
    // Kept past this call: copied, as the caller's buffer may be reused.
    let pending = Buffer.concat([this.#pending!, chunk]);
    for (;;) {
      const at = pending.indexOf(separator, this.#searchFrom);
      if (at < 0) break;
      let item: unknown;
      try {
        item = JSON.parse(pending.toString('utf8', 0, at + 1));
      } catch {
        this.#scanOnly = true;
        this.#separator = undefined;
        this.#pending = undefined;
        this.#scan(pending);
        return;
      }
      this.#separated++;
      this.#onItem(item);
      pending = pending.subarray(at + 2);
      this.#searchFrom = 0;
    }
    this.#pending = pending;
    this.#searchFrom = Math.max(0, pending.length - separator.length + 1);
  }

  #scan(chunk: Buffer): void {
    // The state lives in locals while the chunk is read: the interpreter reads a local faster than a private field.
    let depth = this.#depth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    let inItems = this.#inItems;
    let envelopeStart = inItems ? -1 : 0;
    let itemStart = this.#item.length > 0 ? 0 : -1;
    let keyStart = inString && depth === 1 ? 0 : -1;
    // Latin-1 maps each byte to one character, so indexes are byte offsets; UTF-8's multi-byte sequences hold no ASCII.
    const text = chunk.toString('latin1');
    const length = chunk.length;
    for (let i = 0; i < length; i++) {
      const c = chunk[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) {
          inString = false;
          if (keyStart >= 0) {
            this.#key.push(chunk.subarray(keyStart, i));
            this.#keyDone = Buffer.concat(this.#key).toString('utf8');
            this.#key = [];
            keyStart = -1;
          }
        } else {
          STRING_RUN.lastIndex = i;
          STRING_RUN.test(text);
          i = STRING_RUN.lastIndex - 1;
        }
        continue;
      }
      if (depth >= 3 && c !== OPEN_OBJECT && c !== OPEN_ARRAY && c !== CLOSE_OBJECT && c !== CLOSE_ARRAY) {
        ITEM_RUN.lastIndex = i;
        if (ITEM_RUN.test(text)) {
          i = ITEM_RUN.lastIndex - 1;
          continue;
        }
      }
      if (c === QUOTE) {
        if (depth === 2 && inItems) throw new Error('list body has an item that is not an object');
        inString = true;
        if (depth === 1) {
          this.#key = [];
          keyStart = i + 1;
        }
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (depth === 0 && c !== OPEN_OBJECT) throw new Error('list body is not a JSON object');
        if (depth === 1 && c === OPEN_ARRAY && this.#keyDone === 'items') {
          // The envelope keeps `"items":[` and, after the array, `]`: the items are left out.
          this.#envelope.push(Buffer.from(chunk.subarray(envelopeStart, i + 1)));
          envelopeStart = -1;
          inItems = true;
        } else if (depth === 2 && inItems) {
          if (c !== OPEN_OBJECT) throw new Error('list body has an item that is not an object');
          itemStart = i;
        }
        depth++;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        depth--;
        if (depth === 2 && inItems && itemStart >= 0) {
          this.#item.push(chunk.subarray(itemStart, i + 1));
          itemStart = -1;
          this.#emitItem();
          const separator = this.#separator;
          if (separator !== undefined && chunk.subarray(i, i + separator.length).equals(separator)) {
            this.#depth = depth;
            this.#inString = false;
            this.#escaped = false;
            this.#inItems = true;
            this.#pending = Buffer.alloc(0);
            this.#searchFrom = 0;
            this.#pushPending(chunk.subarray(i + 2));
            return;
          }
        } else if (depth === 1 && inItems) {
          inItems = false;
          envelopeStart = i;
        } else if (depth < 0) {
          throw new Error('list body has an unbalanced bracket');
        }
      } else if (depth === 2 && inItems && c !== COMMA && !isSpace(c) && itemStart < 0) {
        throw new Error('list body has an item that is not an object');
      }
    }
    this.#depth = depth;
    this.#inString = inString;
    this.#escaped = escaped;
    this.#inItems = inItems;
    if (keyStart >= 0) this.#key.push(Buffer.from(chunk.subarray(keyStart)));
    // Slices of the chunk kept past this call are copied: the caller's buffer may be reused.
    if (itemStart >= 0) this.#item.push(Buffer.from(chunk.subarray(itemStart)));
    if (envelopeStart >= 0) this.#envelope.push(Buffer.from(chunk.subarray(envelopeStart)));
  }

  /** The list's members other than its items, once the whole body was read. */
  end(): ListEnvelope {
    // The last item, and the envelope after it, are read by the scan from the last item's first byte (no separator
    // follows it, so the scan reads to the end).
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) this.#scan(pending);
    if (this.#depth !== 0 || this.#inString || this.#inItems) throw new Error('list body ended before its last bracket');
    const text = Buffer.concat(this.#envelope).toString('utf8');
    if (text.trim() === '') throw new Error('list body is empty');
    return JSON.parse(text) as ListEnvelope;
  }

  #emitItem(): void {
    const text = Buffer.concat(this.#item).toString('utf8');
    this.#item = [];
    this.#onItem(JSON.parse(text));
    if (this.#separator === undefined && !this.#scanOnly) {
      const key = FIRST_KEY.exec(text);
      if (key !== null) this.#separator = Buffer.from(`},{${key[1]}:`);
    }
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
