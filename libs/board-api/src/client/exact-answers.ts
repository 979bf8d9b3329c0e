import { Ajv, type ValidateFunction } from 'ajv';
import { z } from 'zod';
import { operations } from '../operations.js';

/**
 * The reads whose answers a caller may keep as the board's own JSON text (the fleet manager stores them on every
 * poll): their schemas are plain records (objects, arrays, strings, numbers, booleans, null; integer and range
 * checks), which JSON Schema states exactly, so a check compiled from them accepts what the zod schema's parse returns
 * unchanged and nothing else (exact-answers.spec.ts holds the two to each other).
 */
export const STORED_READS = ['getHealth', 'getThermal'] as const;
export type StoredRead = (typeof STORED_READS)[number];

/** Every keyword such a schema's JSON Schema may use: each one means in ajv what it means in zod. */
export const EXACT_KEYWORDS = new Set([
  '$schema',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'description',
]);

/**
 * The read's answer schema as JSON Schema with the parse's output in view: an object admits no member the schema
 * does not name (`additionalProperties: false`), since zod's parse would drop it.
 */
export function exactJsonSchema(id: StoredRead): Record<string, unknown> {
  return z.toJSONSchema(operations[id].response, { target: 'draft-7', io: 'output', unrepresentable: 'throw' });
}

/**
 * The longest answer text kept as it is, in characters. A board may pad a valid answer with whitespace up to the body
 * cap (BOARD_BODY_LIMIT_BYTES, 4 MiB): past this, the caller gets the value's compact JSON instead, so what it stores
 * and sends on (a poll's write statement) stays the answer's size. /health is ~600 characters, /thermal ~450 per zone.
 */
export const EXACT_TEXT_MAX_CHARS = 16 * 1024;

// strictNumbers: JSON.parse turns 1e999 into Infinity, which zod's numbers refuse.
const ajv = new Ajv({ strictNumbers: true, allErrors: false });
const checks = new Map<StoredRead, ValidateFunction>();

/**
 * Whether `value` (the parsed answer of `id`) is exactly what zod's parse of it would return: valid, and nothing in
 * it the parse would drop. Then the answer's text is the value's JSON as is, and the parse's copy is not needed.
 * False means "ask zod": the answer may still be valid (with members the parse drops) or not (zod says why).
 */
export function isExactAnswer(id: StoredRead, value: unknown): boolean {
  let check = checks.get(id);
  if (check === undefined) {
    check = ajv.compile(exactJsonSchema(id));
    checks.set(id, check);
  }
  return check(value);
}
