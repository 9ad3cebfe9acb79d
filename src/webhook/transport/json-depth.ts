// How deeply a JSON text nests and how many objects and arrays it holds, found by one pass over its bytes before it is
// parsed. A review is a few levels of envelope around a Kubernetes object; a body nested thousands deep is hostile, and
// rules, conversion and JSON.stringify all recurse over what they are given, so such a body is refused before anything
// walks it (W5). Parsing costs far more heap than the text where the text is mostly structure: about 110 bytes per
// object or array for the 2 bytes of `{}`, and objects with many distinct keys make V8 build a hidden class per key
// (7 MiB of `{"a":0,"b":0,…}` objects took 440 MiB RSS and 6 s to parse), and every short value is an allocation of
// its own. So objects, arrays, keys and values are counted, and a body with more than a review ever holds is refused
// before JSON.parse (W6).

import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
} from '../../kube/json-bytes.ts';

export interface JsonBounds {
  /** Deepest nesting; the top-level value is level 1. */
  depth: number;
  /** Most objects and arrays in the whole text. */
  containers: number;
  /** Most object keys in the whole text. */
  keys: number;
  /** Most commas, that is array elements and object members after the first of each, in the whole text. */
  values: number;
}

/**
 * The first bound of `max` that `text` exceeds, or undefined. Brackets inside strings do not count. Malformed text is
 * not judged here: JSON.parse reports it afterwards.
 */
export function exceededBound(text: Uint8Array, max: JsonBounds): keyof JsonBounds | undefined {
  let depth = 0;
  let containers = 0;
  let keys = 0;
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max.depth) return 'depth';
      if (++containers > max.containers) return 'containers';
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COLON) {
      if (++keys > max.keys) return 'keys';
    } else if (c === COMMA) {
      if (++values > max.values) return 'values';
    }
  }
  return undefined;
}
