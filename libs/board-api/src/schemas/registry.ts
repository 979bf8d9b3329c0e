import type { z } from 'zod';

/**
 * The named records (OpenAPI component name → schema), in definition order. Kept apart from zod's global registry so
 * that the OpenAPI document lists exactly the board's records as components, and nothing another library registered.
 */
export const namedSchemas = new Map<string, z.ZodType>();

/** Register `schema` as the OpenAPI component `id` and return it unchanged (so it can wrap a definition inline). */
export function named<T extends z.ZodType>(id: string, schema: T): T {
  if (namedSchemas.has(id)) {
    throw new Error(`duplicate schema name ${id}`);
  }
  namedSchemas.set(id, schema);
  return schema;
}
