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

/** A token as listed: never the secret, only its prefix. */
export const ZTokenSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    role: z.enum(ROLES),
    prefix: z.string().describe('the first characters of the token, to recognise it'),
    created_by: z.string().nullable(),
    created_at: z.iso.datetime({ offset: true }),
    last_used_at: z.iso.datetime({ offset: true }).nullable(),
    expires_at: z.iso.datetime({ offset: true }).nullable(),
    revoked_at: z.iso.datetime({ offset: true }).nullable(),
  })
  .meta({ id: 'ApiToken' });

export const ZCreatedTokenSchema = ZTokenSchema.extend({
  token: z.string().describe('the secret, shown only in this answer'),
}).meta({ id: 'ApiTokenCreated' });
