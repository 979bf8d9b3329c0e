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

export const ZNodeImageIdParamSchema = z.object({ id: z.uuid({ error: 'expected a node image job id (uuid)' }) });

export const ZNodeImageSchema = z
  .object({
    id: z.uuid(),
    board_id: z.uuid(),
    node: z.number().int().describe('1-4'),
    url: z.string(),
    status: z.string().describe('pending | running | succeeded | failed | cancelled'),
    bytes_written: z.number().int().nullable().describe('What the board reported last'),
    size: z.number().int().nullable().describe('Bytes of the image (Content-Length of the URL)'),
    sha256: z.string().nullable().describe('SHA-256 of the bytes sent to the board'),
    error: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'NodeImage' });
export type TNodeImage = z.infer<typeof ZNodeImageSchema>;
