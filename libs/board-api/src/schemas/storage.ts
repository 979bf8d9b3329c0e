import { z } from 'zod';
import { named } from './registry.js';

/** Element of GET /sdcard, in bytes. */
export const ZSdCardSchema = named(
  'SdCard',
  z.object({
    total: z.number().int().nonnegative().describe('Blocks × fragment size'),
    free: z.number().int().nonnegative().describe('Free blocks × fragment size'),
    use: z.number().int().nonnegative().describe('total − free (the key is `use`, not `used`)'),
  }),
);
export type TSdCard = z.infer<typeof ZSdCardSchema>;
export const ZSdCardListSchema = z.array(ZSdCardSchema).length(1).describe('Exactly one object');

/** Element of GET /sdcard/files. */
export const ZSdCardEntrySchema = named(
  'SdCardEntry',
  z.object({
    path: z.string().describe('Relative to the card root, never absolute'),
    name: z.string().describe('File name'),
    directory: z.boolean().describe('Whether the entry is a directory'),
    size: z.number().int().nonnegative().describe('Bytes; 0 for directories'),
    modified: z.number().int().nullable().describe('mtime in Unix seconds, or null'),
    flashable: z.boolean().describe('Whether the entry looks like a node OS image'),
    reason: z.string().optional().describe('Why it is not flashable; only with flashable:false'),
  }),
);
export type TSdCardEntry = z.infer<typeof ZSdCardEntrySchema>;
export const ZSdCardEntryListSchema = z
  .array(ZSdCardEntrySchema)
  .describe('One directory level: directories first, then by name');
