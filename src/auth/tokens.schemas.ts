import { z } from 'zod';
import { ROLES } from './roles.js';

export const ZCreateTokenSchema = z
  .object({
    name: z.string().trim().min(1).max(100).describe('who or what uses the token, e.g. "grafana" or "alice"'),
    role: z.enum(ROLES).describe('viewer reads; operator acts on boards and jobs; admin manages everything'),
    expires_in_days: z.number().int().min(1).max(3650).optional().describe('no expiry when omitted'),
  })
  .strict();
export type TCreateToken = z.infer<typeof ZCreateTokenSchema>;

export const ZTokenIdParamSchema = z.object({ id: z.uuid({ error: 'expected a token id (uuid)' }) });
