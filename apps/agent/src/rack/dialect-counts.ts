import type { Dialect, DialectName } from '../server/dialect.js';

/*
 * Kept apart from the rack's zod schemas (`dialects.ts`): the CLI parses `--dialects` with it, and the single agent's
 * start must not load zod.
 */

/**
 * `--dialects fork:3,upstream:2`: counts of boards per dialect, assigned from board 1 in the order given; boards
 * not covered speak `agent`. So with 10 boards: 1–3 fork, 4–5 upstream, 6–10 agent.
 */
export function parseDialectCounts(spec: string): { name: DialectName; count: number }[] {
  if (spec.trim() === '') {
    return [];
  }
  return spec.split(',').map((part) => {
    const match = /^\s*(agent|fork|upstream):(\d+)\s*$/.exec(part);
    if (!match) {
      throw new Error(`"${part}" is not <agent|fork|upstream>:<count>`);
    }
    return { name: match[1] as DialectName, count: Number(match[2]) };
  });
}

/** The dialect a board starts with, from the parsed `--dialects` counts. */
export function initialDialect(counts: readonly { name: DialectName; count: number }[], index: number): Dialect {
  let last = 0;
  for (const { name, count } of counts) {
    last += count;
    if (index <= last) {
      return { name };
    }
  }
  return { name: 'agent' };
}
