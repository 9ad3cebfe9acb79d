// JSON's structural characters as bytes, for the scanner that reads JSON text before parsing it: admission review
// bodies (webhook/transport/json-depth.ts). All are ASCII, so none occurs inside a UTF-8 multi-byte sequence.
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const COMMA = 0x2c;
