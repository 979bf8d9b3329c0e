import { z } from 'zod';
import { InvalidInputError } from './errors.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

export const ZPageQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE).describe('page size'),
  cursor: z.string().max(512).optional().describe('opaque cursor from the previous page’s `next_cursor`'),
});
export type TPageQuery = z.infer<typeof ZPageQuerySchema>;

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** A keyset position: the sort value of the last item and its id (ties broken by id). */
export interface CursorPosition {
  sort: string | number | null;
  id: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): CursorPosition | undefined {
  if (cursor === undefined) {
    return undefined;
  }
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    const result = z.object({ sort: z.union([z.string(), z.number(), z.null()]), id: z.string() }).safeParse(parsed);
    if (result.success) {
      return result.data;
    }
  } catch {
    // fall through to the refusal
  }
  throw new InvalidInputError('the cursor is not one this API issued; start again without `cursor`');
}

/** Builds a page from `limit + 1` fetched rows: the extra row only proves there is a next page. */
export function toPage<T>(rows: T[], limit: number, positionOf: (row: T) => CursorPosition): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next_cursor: rows.length > limit && last ? encodeCursor(positionOf(last)) : null };
}
