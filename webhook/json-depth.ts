// How deeply a JSON text nests, found by one pass over its bytes before it is parsed. A review is a few levels of
// envelope around a Kubernetes object; a body nested thousands deep is hostile, and rules, conversion and JSON.stringify
// all recurse over what they are given, so such a body is refused before anything walks it (W5).

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when no object or array in `text` lies more than `max` levels deep (the top-level value is level 1). Brackets
 * inside strings do not count. Malformed text is not judged here: JSON.parse reports it afterwards.
 */
export function nestsAtMost(text: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return false;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return true;
}
