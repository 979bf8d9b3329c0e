import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { JsonText, rowsJson } from './json-text.js';

describe('rowsJson', () => {
  it('is the rows’ JSON, with each JsonText member standing for the value of its text', () => {
    const member = fc.oneof(
      fc.jsonValue().map((v) => ({ value: v, stored: v as unknown })),
      fc.jsonValue().map((v) => ({ value: v, stored: new JsonText(JSON.stringify(v, null, 1)) as unknown })),
    );
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string(), member), { maxLength: 5 }), (rows) => {
        const text = rowsJson(rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, m]) => [k, m.stored]))));
        const expected = rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, m]) => [k, m.value])));
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(expected)));
      }),
    );
  });

  it('keeps a member named __proto__ (the counterexample fast-check found: it was dropped)', () => {
    const row = JSON.parse('{"__proto__":{"a":1},"b":2}') as Record<string, unknown>;
    expect(JSON.parse(rowsJson([row]))).toEqual([JSON.parse('{"__proto__":{"a":1},"b":2}')]);
    expect(rowsJson([row])).toBe('[{"__proto__":{"a":1},"b":2}]');
  });

  it('writes a row whose every member is a JsonText', () => {
    expect(JSON.parse(rowsJson([{ health: new JsonText('{"a":1}') }, {}]))).toEqual([{ health: { a: 1 } }, {}]);
  });
});
