import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import type { z } from 'zod';
import { operations } from '../operations.js';
import { EXACT_KEYWORDS, exactJsonSchema, isExactAnswer, STORED_READS, type StoredRead } from './exact-answers.js';

/** Answers as the simulated board gives them. */
const ANSWERS: Record<StoredRead, unknown> = {
  getHealth: {
    clock: {
      measured_by: 'chronyc tracking',
      offset_seconds: -0.0000033,
      rtc: [{ device: 'rtc0', name: 'sun6i-rtc' }],
      source: '3.pool.ntp.org',
      stratum: 3,
      synchronised: true,
    },
    load: { fifteen_minutes: 0.18, five_minutes: 0.18, one_minute: 0.18, present: true },
    memory: {
      available_bytes: 74076201,
      free_bytes: 54153257,
      present: true,
      self_resident_bytes: 59166720,
      self_threads: 4,
      total_bytes: 121634816,
    },
    nand: {
      available_bytes: 634880,
      available_eraseblocks: 5,
      bad_eraseblocks: 0,
      eraseblock_size_bytes: 126976,
      present: true,
      reserved_eraseblocks: 40,
      total_eraseblocks: 2040,
    },
    uptime_seconds: 0.01,
  },
  getThermal: {
    cooling: [
      {
        cur_state: 2,
        levels: [0, 16, 32, 64, 102, 170, 254],
        max_level: 254,
        max_state: 6,
        name: 'pwm-fan',
        present: true,
      },
    ],
    sensors: [
      {
        name: 'bmc-thermal',
        present: true,
        temperature_c: 47.6,
        trips: [
          { index: 0, kind: 'active', temperature_c: 20 },
          { index: 4, kind: 'hot', temperature_c: 95 },
        ],
      },
    ],
  },
};

/** What the check must say: zod's parse accepts the value and returns it unchanged. */
function exactByZod(id: StoredRead, value: unknown): boolean {
  const parsed = (operations[id].response as z.ZodType).safeParse(value);
  return parsed.success && isDeepStrictEqual(parsed.data, value);
}

type Path = Array<string | number>;

function pathsOf(value: unknown, at: Path = []): Path[] {
  if (value === null || typeof value !== 'object') {
    return [at];
  }
  const children = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  return [at, ...children.flatMap(([k, v]) => pathsOf(v, [...at, k]))];
}

type Mutation = { path: Path; kind: 'replace' | 'delete' | 'add'; key: string; replacement: unknown };

/** `value` with one member changed: replaced, deleted, or an object given one more member. */
function mutate(value: unknown, m: Mutation): unknown {
  if (m.path.length === 0) {
    return m.kind === 'add' && value !== null && typeof value === 'object' && !Array.isArray(value)
      ? { ...value, [m.key]: m.replacement }
      : m.replacement;
  }
  const [head, ...rest] = m.path;
  const container = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  if (rest.length === 0 && m.kind === 'delete') {
    if (Array.isArray(container)) {
      container.splice(head as number, 1);
    } else {
      delete container[head!];
    }
    return container;
  }
  container[head!] = mutate(container[head!], { ...m, path: rest });
  return container;
}

// Values JSON.parse can give that are edge cases for a number or a member: 1e999 parses to Infinity.
const EDGES = [Infinity, -1, 1.5, 2 ** 53, -0, 0, null, '', 'x', [], {}, true, false];

describe('exact answers: the compiled check and zod agree', () => {
  it.each(STORED_READS)('%s: its JSON Schema uses only keywords that mean in ajv what they mean in zod', (id) => {
    const used = new Set<string>();
    const walk = (node: unknown, inProperties = false): void => {
      if (Array.isArray(node)) {
        node.forEach((n) => walk(n));
      } else if (node !== null && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (!inProperties) {
            used.add(k);
          }
          walk(v, !inProperties && k === 'properties');
        }
      }
    };
    walk(exactJsonSchema(id));
    expect([...used].filter((k) => !EXACT_KEYWORDS.has(k))).toEqual([]);
  });

  it.each(STORED_READS)('%s: the simulated board’s answer is exact', (id) => {
    expect(exactByZod(id, ANSWERS[id])).toBe(true);
    expect(isExactAnswer(id, ANSWERS[id])).toBe(true);
  });

  it.each(STORED_READS)('%s: for answers changed in up to three places, the check says what zod says', (id) => {
    const paths = pathsOf(ANSWERS[id]);
    const mutation = fc.record({
      path: fc.constantFrom(...paths),
      kind: fc.constantFrom('replace' as const, 'delete' as const, 'add' as const),
      key: fc.oneof(fc.string(), fc.constantFrom('name', 'present', 'uptime_seconds', 'extra')),
      replacement: fc.oneof(fc.jsonValue(), fc.constantFrom(...EDGES)),
    });
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 3 }), (mutations) => {
        const value = mutations.reduce<unknown>(mutate, ANSWERS[id]);
        expect(isExactAnswer(id, value)).toBe(exactByZod(id, value));
      }),
      { numRuns: 2000 },
    );
  });

  it.each(STORED_READS)('%s: for any JSON value, the check says what zod says', (id) => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(isExactAnswer(id, value)).toBe(exactByZod(id, value));
      }),
      { numRuns: 500 },
    );
  });
});
