import { z } from 'zod';

export { initialDialect, parseDialectCounts } from './dialect-counts.js';

export const ZDialectNameSchema = z.enum(['agent', 'fork', 'upstream']);

export const ZDialectSchema = z
  .object({ dialect: ZDialectNameSchema, version: z.string().min(1).max(64).optional() })
  .strict();
