import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import fc from 'fast-check';
import { ListBodyParser } from '../../../src/kube/list-body.ts';

/** Feeds `body` in chunks cut at `cuts` (byte offsets); returns the items parsed and the envelope. */
function parse(body: Buffer, cuts: readonly number[] = []) {
  const items: unknown[] = [];
  const parser = new ListBodyParser((item) => items.push(item));
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    parser.push(body.subarray(at, cut));
    at = cut;
  }
  parser.push(body.subarray(at));
  return { items, envelope: parser.end() };
}

/**
 * Strings of `units`, and keys of the same without quote and backslash. Node 24's JSON.parse (V8 13.6; V8 14.6 too)
 * can misread a key written with an escape: when an object parsed or built earlier in the process, by any code, had
 * at the same place a key that holds a backslash and equals the escaped key's raw text, that key is returned instead
 * (nodejs/node#63785; pinned by the last test). The parser's JSON.parse of each item is exposed as much as the
 * whole-list JSON.parse the tests compare with, so generated keys that hold escapes made the property tests fail or
 * pass by what ran before them. Values keep every unit; an escaped first key has its own case.
 */
function textAndKey(units: string[]) {
  return {
    text: fc.string({ unit: fc.constantFrom(...units) }),
    key: fc.string({ unit: fc.constantFrom(...units.filter((unit) => unit !== '"' && unit !== '\\')) }),
  };
}

const list = (items: unknown[], extra: Record<string, unknown> = {}) => ({
  kind: 'ServiceList', apiVersion: 'v1', metadata: { resourceVersion: '42', continue: 'abc' }, items, ...extra,
});

describe('kube list body: items handed over as they arrive', () => {
  it('hands over every item in order and keeps the rest as the envelope', () => {
    const body = Buffer.from(JSON.stringify(list([{ metadata: { name: 'a' } }, { metadata: { name: 'b' }, spec: { ports: [{ port: 80 }] } }])));
    const { items, envelope } = parse(body);
    expect(items).to.deep.equal([{ metadata: { name: 'a' } }, { metadata: { name: 'b' }, spec: { ports: [{ port: 80 }] } }]);
    expect(envelope).to.deep.equal({ kind: 'ServiceList', apiVersion: 'v1', metadata: { resourceVersion: '42', continue: 'abc' }, items: [] });
  });

  const cases: Array<[string, string, unknown[]]> = [
    ['an empty list', '{"kind":"ServiceList","metadata":{"resourceVersion":"7"},"items":[]}', []],
    ['items before the metadata', '{"items":[{"a":1}],"metadata":{"resourceVersion":"7"}}', [{ a: 1 }]],
    ['no items member (an apiserver omits an empty one)', '{"kind":"ServiceList","metadata":{"resourceVersion":"7"}}', []],
    ['brackets, quotes and escapes inside strings', '{"items":[{"a":"]}\\"{[\\\\","b":["x]"]}],"metadata":{}}', [{ a: ']}"{[\\', b: ['x]'] }]],
    ['another array member named like items, nested', '{"metadata":{"items":[1,2]},"items":[{"items":[{"c":1}]}]}', [{ items: [{ c: 1 }] }]],
    ['a key ending in items', '{"moreitems":[1],"items":[{"z":true}]}', [{ z: true }]],
    ['whitespace everywhere', ' { "items" : [ { "a" : 1 } , { "b" : [ ] } ] , "metadata" : { } } ', [{ a: 1 }, { b: [] }]],
    ['items found by their first key, one holding that key nested', '{"items":[{"k":1},{"k":[{"k":2},{"k":3}]},{"k":"},{\\"k\\":"},{"k":4}],"metadata":{}}',
      [{ k: 1 }, { k: [{ k: 2 }, { k: 3 }] }, { k: '},{"k":' }, { k: 4 }]],
    ['multi-byte characters', '{"items":[{"name":"naïve-ünïcode-名前"}]}', [{ name: 'naïve-ünïcode-名前' }]],
    ['items whose first key holds an escaped quote and backslash', '{"items":[{"list\\"body\\\\key":1},{"list\\"body\\\\key":2},{"list\\"body\\\\key":3}]}',
      [{ 'list"body\\key': 1 }, { 'list"body\\key': 2 }, { 'list"body\\key': 3 }]],
  ];
  for (const [title, text, expected] of cases) {
    it(`reads ${title}, whichever byte each chunk ends at`, () => {
      const body = Buffer.from(text);
      for (let cut = 0; cut <= body.length; cut++) expect(parse(body, [cut]).items, `cut at ${cut}`).to.deep.equal(expected);
    });
  }

  const refused: Array<[string, string, RegExp]> = [
    ['a top-level array', '[{"a":1}]', /not a JSON object/],
    ['an item that is a string', '{"items":["a"]}', /not an object/],
    ['an item that is a number', '{"items":[1]}', /not an object/],
    ['an item that is an array', '{"items":[[1]]}', /not an object/],
    ['a body cut short in an item', '{"items":[{"a":1}', /ended before its last bracket/],
    ['a body cut short in a string', '{"items":[{"a":"x', /ended before its last bracket/],
    ['an empty body', '', /empty/],
    ['an unbalanced bracket', '{"items":[]}}', /unbalanced/],
  ];
  for (const [title, text, error] of refused) {
    it(`refuses ${title}`, () => {
      expect(() => parse(Buffer.from(text))).to.throw(error);
    });
  }

  it('reads any list of JSON objects the same as JSON.parse, however the body is cut into chunks', () => {
    // Strings made mostly of what the scanner skips over or stops at: quotes, escapes, brackets, multi-byte characters.
    const { text, key } = textAndKey(['a', '"', '\\', '{', '}', '[', ']', ',', ':', ' ', 'é', '名']);
    const value = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.boolean(), fc.constant(null),
        fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(key, tie('value'), { maxKeys: 3 })),
    })).value;
    const item = fc.dictionary(key, value, { maxKeys: 5 });
    fc.assert(fc.property(
      fc.array(item, { maxLength: 8 }), fc.string(), fc.array(fc.nat(), { maxLength: 6 }),
      (items, resourceVersion, rawCuts) => {
        const body = Buffer.from(JSON.stringify(list(items, { metadata: { resourceVersion } }), null, items.length % 2 === 0 ? undefined : 1));
        const parsed = parse(body, rawCuts.map((c) => c % (body.length + 1)));
        expect(parsed.items).to.deep.equal(JSON.parse(JSON.stringify(items)));
        expect(parsed.envelope.metadata).to.deep.equal({ resourceVersion });
      },
    ), { numRuns: 1000 });
  });

  it('finds every item but the first and the last by its separator', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ metadata: { name: `s${i}`, labels: { a: '},{"metadata":' } }, spec: { ports: [{ port: i }, { port: i + 1 }] } }));
    const body = Buffer.from(JSON.stringify(list(items)));
    for (const cuts of [[], [17, 900, 901, 5000]]) {
      const parser = new ListBodyParser(() => {});
      let at = 0;
      for (const cut of [...cuts, body.length]) {
        parser.push(body.subarray(at, cut));
        at = cut;
      }
      parser.end();
      expect(parser.separated, `cut at ${cuts.join(', ')}`).to.equal(98);
    }
  });

  it('leaves the separator for good once a candidate did not parse, however many items follow', () => {
    // The second item holds `},{"k":` nested: from there on every item is scanned, none is found by the separator
    // (and a parser that took the separator up again would recurse once per such item).
    const nested = { k: [{ k: 1 }, { k: 2 }] };
    const items = [{ k: 0 }, nested, ...Array.from({ length: 20_000 }, (_, i) => (i % 2 === 0 ? { k: i } : nested))];
    const parsed: unknown[] = [];
    const parser = new ListBodyParser((item) => parsed.push(item));
    parser.push(Buffer.from(JSON.stringify(list(items))));
    parser.end();
    expect(parsed).to.deep.equal(items);
    expect(parser.separated).to.equal(0);
  });

  it('reads lists whose items share their first key (as an apiserver writes them) the same as JSON.parse', () => {
    // The items are found by `},{"k":`, which also occurs inside them (nested objects, strings): each such candidate
    // does not parse and hands the rest of the body back to the scan.
    const { text, key } = textAndKey(['a', '"', '\\', '{', '}', ',', ':', 'k', '名']);
    const value = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.constant(null),
        fc.array(tie('value'), { maxLength: 3 }), fc.record({ k: tie('value') }), fc.dictionary(key, tie('value'), { maxKeys: 2 })),
    })).value;
    const item = fc.tuple(value, fc.dictionary(key, value, { maxKeys: 3 })).map(([k, rest]) => ({ k, ...rest }));
    fc.assert(fc.property(fc.array(item, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 6 }), (items, rawCuts) => {
      const body = Buffer.from(JSON.stringify(list(items)));
      expect(parse(body, rawCuts.map((c) => c % (body.length + 1))).items).to.deep.equal(JSON.parse(JSON.stringify(items)));
    }), { numRuns: 1000 });
  });

  it('keeps nothing of an item once it was handed over (chunks reused by the caller do not change it)', () => {
    const body = Buffer.from('{"items":[{"name":"first"},{"name":"second"}]}');
    const seen: unknown[] = [];
    const parser = new ListBodyParser((item) => seen.push(item));
    const scratch = Buffer.alloc(body.length);
    for (const [from, to] of [[0, 20], [20, body.length]] as const) {
      body.copy(scratch, 0, from, to);
      parser.push(scratch.subarray(0, to - from));
      scratch.fill(0x20);
    }
    parser.end();
    expect(seen).to.deep.equal([{ name: 'first' }, { name: 'second' }]);
  });

  it('meets a JSON.parse that misreads an escaped key after one holding a backslash, so generated keys hold no escape', () => {
    // The shape of the counterexample the first property test found (seed 1278371032): an object with the key `x\`,
    // then one with `x"` after the same first key. Run in a fresh process, as whether this one still shows it depends on
    // what ran before. Failing here means the engine reads such keys right (nodejs/node#63785 fixed): textAndKey may
    // then give keys every unit again.
    const script = `JSON.parse('{"q":1,"x\\\\\\\\":2}'); process.stdout.write(JSON.stringify(Object.keys(JSON.parse('{"q":1,"x\\\\"":2}'))));`;
    expect(JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }))).to.deep.equal(['q', 'x\\']);
  });
});
