import { expect } from 'chai';
import fc from 'fast-check';
import { exceededBound } from '../../../src/webhook/transport/json-depth.ts';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const nestsAtMost = (text: Uint8Array, depth: number) =>
  exceededBound(text, { depth, containers: Infinity, keys: Infinity, values: Infinity }) === undefined;

interface Counts {
  containers: number;
  keys: number;
  values: number;
}
/** Objects and arrays, object keys, and commas (children after the first) in a parsed value, by recursion. */
function countsOf(value: unknown): Counts {
  if (value === null || typeof value !== 'object') return { containers: 0, keys: 0, values: 0 };
  const children = Array.isArray(value) ? value : Object.values(value);
  const own = {
    containers: 1,
    keys: Array.isArray(value) ? 0 : children.length,
    values: Math.max(0, children.length - 1),
  };
  return children
    .map(countsOf)
    .reduce(
      (a, b) => ({ containers: a.containers + b.containers, keys: a.keys + b.keys, values: a.values + b.values }),
      own,
    );
}

/** The nesting depth of a parsed value, by recursion (the reference the byte scan must agree with). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe('JSON nesting bound of webhook bodies (W5)', () => {
  const table: Array<[string, number, boolean]> = [
    ['1', 0, true],
    ['"[[[["', 0, true],
    ['{}', 1, true],
    ['{}', 0, false],
    ['[[[]]]', 3, true],
    ['[[[]]]', 2, false],
    ['{"a":"\\"[[[","b":[{}]}', 3, true],
    ['{"a":"\\\\","b":[[{}]]}', 3, false],
    ['[]'.repeat(1000), 1, true],
  ];
  for (const [text, max, expected] of table) {
    it(`${text.slice(0, 24)} nests at most ${max}: ${expected}`, () => {
      expect(nestsAtMost(bytes(text), max)).to.equal(expected);
    });
  }
  it('a million levels are refused without recursion', () => {
    expect(nestsAtMost(bytes('['.repeat(1_000_000) + ']'.repeat(1_000_000)), 100)).to.equal(false);
  });
  it('agrees with the depth of the parsed value, whatever the strings hold', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.nat(10), (value, max) => {
        const text = JSON.stringify(value) ?? 'null';
        expect(nestsAtMost(bytes(text), max)).to.equal(depthOf(JSON.parse(text)) <= max);
      }),
      { numRuns: 2_000 },
    );
  });
  it('W6: counts objects, arrays, keys and values as the parsed value holds them, whatever the strings hold', () => {
    const unbounded = { depth: 100, containers: Infinity, keys: Infinity, values: Infinity };
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.nat(40), (value, max) => {
        const text = JSON.stringify(value) ?? 'null';
        const counts = countsOf(JSON.parse(text));
        for (const bound of ['containers', 'keys', 'values'] as const) {
          expect(exceededBound(bytes(text), { ...unbounded, [bound]: max }) === bound, bound).to.equal(
            counts[bound] > max,
          );
        }
      }),
      { numRuns: 2_000 },
    );
  });
  it('W6: a body of empty objects, of many keys or of many values is refused at its bound, before JSON.parse', () => {
    const bounds = { depth: 100, containers: 1_000, keys: 1_000, values: 5_000 };
    expect(exceededBound(bytes(`[${'"a",'.repeat(5_001)}"a"]`), bounds)).to.equal('values');
    expect(exceededBound(bytes(`[${'"a",'.repeat(5_000)}"a"]`), bounds)).to.equal(undefined);
    expect(exceededBound(bytes(`[${'{},'.repeat(1_000)}{}]`), bounds)).to.equal('containers');
    expect(exceededBound(bytes(`[${'{},'.repeat(998)}{}]`), bounds)).to.equal(undefined);
    expect(
      exceededBound(bytes(`{${Array.from({ length: 1_001 }, (_, i) => `"k${i}":0`).join(',')}}`), bounds),
    ).to.equal('keys');
    expect(
      exceededBound(bytes(`{${Array.from({ length: 1_000 }, (_, i) => `"k${i}":0`).join(',')}}`), bounds),
    ).to.equal(undefined);
  });
});
