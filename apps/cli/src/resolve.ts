// Boards are addressed by name or id on the command line; the API takes ids.
import type { FleetSchemas } from '@tpfleet/fleet-api';
import { CliError, UsageError } from './errors.js';
import type { Runtime } from './runtime.js';

/** A board as a list gives it (a board's own page has more: its capabilities and latest readings). */
export type Board = FleetSchemas['BoardListItem'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** A board's id from its name or id (decommissioned boards included). */
export async function boardId(rt: Runtime, nameOrId: string): Promise<string> {
  if (isUuid(nameOrId)) {
    return nameOrId;
  }
  const page = await rt.call(
    rt.client().GET('/api/v1/boards', {
      params: { query: { q: nameOrId, limit: 500, include_decommissioned: 'true' } },
    }),
  );
  const found = page.items.find((b) => b.name === nameOrId);
  if (!found) {
    throw new CliError(`no board named "${nameOrId}"`);
  }
  return found.id;
}

/** Every board a query matches, following the cursor. */
export async function listBoards(
  rt: Runtime,
  query: { selector?: string; state?: string; q?: string; include_decommissioned?: 'true' | 'false' },
): Promise<Board[]> {
  const items: Board[] = [];
  let cursor: string | undefined;
  do {
    const page = await rt.call(
      rt.client().GET('/api/v1/boards', { params: { query: { ...query, limit: 500, cursor } } }),
    );
    items.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return items;
}

/** `k=v` pairs (repeatable flag or comma list) into a label map. */
export function parseLabels(pairs: string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of pairs.flatMap((p) => p.split(','))) {
    const eq = pair.indexOf('=');
    if (eq <= 0) {
      throw new UsageError(`label "${pair}": expected key=value`);
    }
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return labels;
}

/** 1-4, as on the board (`tpi power on -n 2`). */
export function parseNode(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 4) {
    throw new UsageError(`node "${value}": expected 1, 2, 3 or 4`);
  }
  return n;
}

export function parseInteger(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new UsageError(
        `${name}: expected a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got "${value}"`,
      );
    }
    return n;
  };
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
