import { z } from 'zod';

export const ZNodeImageRequestSchema = z
  .strictObject({
    url: z
      .url({ protocol: /^https?$/, error: 'expected an http(s) URL of the image' })
      .max(2048)
      .describe('Where the fleet manager fetches the image (it streams it to the board, never storing it whole)'),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, { error: 'expected 64 hexadecimal digits' })
      .optional()
      .describe('SHA-256 of the image: the board refuses bytes that differ'),
    verify: z.boolean().default(true).describe('Read the image back from the node and compare (the board’s CRC check)'),
  })
  .meta({ id: 'NodeImageRequest' });
export type TNodeImageRequest = z.infer<typeof ZNodeImageRequestSchema>;

/** The upload form's options travel in the query: the body is the image itself (application/octet-stream). */
export const ZNodeImageUploadQuerySchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,128}$/, { error: 'expected a file name of letters, digits, `.`, `_` or `-`' })
      .default('image.img')
      .describe('The image’s file name, shown on the job and told to the board'),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, { error: 'expected 64 hexadecimal digits' })
      .optional()
      .describe('SHA-256 of the image: an upload whose bytes differ is refused (400) and not stored'),
    verify: z
      .enum(['true', 'false', '1', '0'], { error: 'expected true or false' })
      .default('true')
      .transform((v) => v === 'true' || v === '1')
      .describe('Read the image back from the node and compare (the board’s CRC check)'),
  })
  .meta({ id: 'NodeImageUploadQuery' });
export type TNodeImageUploadQuery = z.infer<typeof ZNodeImageUploadQuerySchema>;

export const ZNodeImageIdParamSchema = z.object({ id: z.uuid({ error: 'expected a node image job id (uuid)' }) });

export const ZNodeImageSchema = z
  .object({
    id: z.uuid(),
    board_id: z.uuid(),
    node: z.number().int().describe('1-4'),
    source: z.enum(['url', 'upload']).describe('Fetched from a URL, or uploaded to the fleet manager'),
    url: z.string().describe('The URL without credentials or query, or `upload:<name>` for an upload'),
    status: z.string().describe('pending | running | succeeded | failed | cancelled'),
    bytes_written: z.number().int().nullable().describe('What the board reported last'),
    size: z.number().int().nullable().describe('Bytes of the image (Content-Length of the URL, or of the upload)'),
    sha256: z.string().nullable().describe('SHA-256 of the bytes sent to the board'),
    error: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'NodeImage' });
export type TNodeImage = z.infer<typeof ZNodeImageSchema>;
