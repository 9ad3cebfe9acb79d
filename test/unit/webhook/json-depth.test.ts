import { expect } from 'chai';
import fc from 'fast-check';
import { nestsAtMost } from '../../../webhook/json-depth.ts';

const bytes = (text: string) => Buffer.from(text, 'utf8');

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
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), fc.nat(10), (value, max) => {
      const text = JSON.stringify(value) ?? 'null';
      expect(nestsAtMost(bytes(text), max)).to.equal(depthOf(JSON.parse(text)) <= max);
    }), { numRuns: 2_000 });
  });
});
