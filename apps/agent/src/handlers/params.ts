import { BoardError, type NodeId } from '../backend/backend.js';
import type { HandlerContext } from './context.js';

/** The daemon's `Missing \`<name>\` parameter` refusal. */
export function requireParam(params: Record<string, string>, name: string): string {
  const value = params[name];
  if (value === undefined) {
    throw new BoardError(400, `Missing \`${name}\` parameter`);
  }
  return value;
}

// Rust's `i32::from_str`: optional sign, ASCII digits, no blanks.
const INTEGER = /^[+-]?\d+$/;

/**
 * The `node` parameter in the numbering of this request (the only place that knows about the two spellings):
 * 1..4 in the agent's path form, 0..3 in the legacy form (every existing client sends 0-based) and in the fork
 * dialect. Returns the 1-based node the hardware uses.
 */
export function nodeParam(ctx: HandlerContext): NodeId {
  const raw = requireParam(ctx.params, 'node');
  const value = INTEGER.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || Math.abs(value) > 2 ** 31 - 1) {
    throw new BoardError(400, 'Parameter `node` is not a number');
  }
  const first = ctx.nodeBase;
  if (value < first || value > first + 3) {
    throw new BoardError(400, `Parameter \`node\` is out of range ${first}..${first + 3} of node IDs`);
  }
  return (value - first + 1) as NodeId;
}

/**
 * A boolean flag (`force`, `fel`, `refresh`, …): `1`/`true` on, `0`/`false` off, absent off, anything else 400.
 * Deliberately stricter than the daemon's "present means true", under which `force=0` forced.
 */
export function flagParam(params: Record<string, string>, name: string): boolean {
  const value = params[name];
  if (value === undefined || value === '0' || value === 'false') {
    return false;
  }
  if (value === '1' || value === 'true') {
    return true;
  }
  throw new BoardError(400, `Parameter \`${name}\` is \`${value}\`; expected 1, true, 0 or false`);
}

/** A non-negative integer as Rust's `u64::from_str` reads it; undefined when it does not parse. */
export function parseUnsigned(raw: string): number | undefined {
  if (!/^\+?\d+$/.test(raw)) {
    return undefined;
  }
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}
