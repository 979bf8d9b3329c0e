import { z } from 'zod';
import { named } from './registry.js';

export const ZAccessActorSchema = named(
  'AccessActor',
  z.object({
    name: z.string().describe('The user, the proxied e-mail, `loopback`, or `unattributed`'),
    scheme: z.enum(['mtls', 'token', 'basic', 'loopback', 'none']).describe('How this request was authenticated'),
  }),
);
export type TAccessActor = z.infer<typeof ZAccessActorSchema>;

/** The first certificate of the effective client CA bundle. */
export const ZClientCaSchema = named(
  'ClientCa',
  z.object({
    subject: z.string().describe('`SN=value` pairs joined by `, `'),
    issuer: z.string().describe('`SN=value` pairs joined by `, `'),
    not_after: z.string().describe('OpenSSL time text, e.g. `Sep 12 10:00:00 2027 GMT`'),
    fingerprint: z.string().describe('SHA-256 of the DER, uppercase hex pairs joined by `:`'),
    count: z.number().int().positive().describe('Certificates in the bundle'),
  }),
);
export type TClientCa = z.infer<typeof ZClientCaSchema>;

export const ZIdentityHeaderSchema = named(
  'IdentityHeader',
  z.object({
    name: z.string().describe('Header a proxied identity is read from'),
    source: z.enum(['config', 'override', 'default']).describe('Where the header name comes from'),
  }),
);
export type TIdentityHeader = z.infer<typeof ZIdentityHeaderSchema>;

/** GET /access. */
export const ZAccessStateSchema = named(
  'AccessState',
  z.object({
    actor: ZAccessActorSchema.describe('How this request was authenticated'),
    local_account: z.string().describe('Always `root`'),
    client_ca: ZClientCaSchema.nullable().describe('The effective client CA; null when none or unparseable'),
    identity_header: ZIdentityHeaderSchema.describe('The identity header in effect'),
    client_ca_pinned_in_config: z.boolean().describe('True when tls.client_ca is set in config.yaml'),
  }),
);
export type TAccessState = z.infer<typeof ZAccessStateSchema>;

/** JSON body of PUT /access/client-ca. */
export const ZClientCaRequestSchema = named(
  'ClientCaRequest',
  z.object({
    pem: z.string().describe('One or more PEM certificates'),
    identity_header: z.string().optional().describe('Header to read the proxied identity from'),
  }),
);
export type TClientCaRequest = z.infer<typeof ZClientCaRequestSchema>;

/** JSON body of POST /access/password. */
export const ZPasswordChangeSchema = named(
  'PasswordChange',
  z.object({
    username: z.string().describe('Local account'),
    current_password: z.string().describe('Required even for an mTLS caller'),
    new_password: z.string().describe('At least 12 characters'),
  }),
);
export type TPasswordChange = z.infer<typeof ZPasswordChangeSchema>;

/** 202 body of PUT and DELETE /access/client-ca. */
export const ZReloadRequiredSchema = named(
  'ReloadRequired',
  z.object({
    reload_required: z.boolean().describe('Always true: effective after POST /reload'),
    detail: z.string().describe('Human-readable outcome'),
  }),
);
export type TReloadRequired = z.infer<typeof ZReloadRequiredSchema>;

/** Body of POST /authenticate. */
export const ZAuthenticateRequestSchema = named(
  'AuthenticateRequest',
  z.object({ username: z.string().describe('Account'), password: z.string().describe('Password') }),
);
export type TAuthenticateRequest = z.infer<typeof ZAuthenticateRequestSchema>;

/** 200 body of POST /authenticate; `id` is the bearer token (also in `X-Auth-Token`). */
export const ZAuthenticateResultSchema = named(
  'AuthenticateResult',
  z.object({
    id: z.string().describe('The bearer token'),
    name: z.string().describe('`User Session`'),
    description: z.string().describe('`User Session`'),
    username: z.string().describe('The authenticated user'),
  }),
);
export type TAuthenticateResult = z.infer<typeof ZAuthenticateResultSchema>;
