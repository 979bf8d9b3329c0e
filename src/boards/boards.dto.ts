// Request and response shapes of the boards API: the single source for validation and for the OpenAPI document.
import { z } from 'zod';
import { labelIssues, MAX_LABEL_KEY, MAX_LABEL_VALUE } from '../common/label-selector.js';
import { MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE } from '../common/pagination.js';
import { normalizeBaseUrl } from './base-url.js';

export const BOARD_STATES = [
  'unknown',
  'online',
  'degraded',
  'unreachable',
  'credentials_invalid',
  'banned',
  'decommissioned',
] as const;
export const DIALECTS = ['agent', 'fork', 'upstream'] as const;

export const ZBoardIdParamSchema = z.object({ id: z.uuid({ error: 'expected a board id (uuid)' }) });

const MAX_LABELS = 64;
// The bounds are in the schema (and so in the OpenAPI document); labelIssues says what else a key or value must be.
const ZLabelsSchema = z
  .record(z.string().max(MAX_LABEL_KEY), z.string().max(MAX_LABEL_VALUE))
  .superRefine((labels, ctx) => {
    for (const issue of labelIssues(labels)) {
      ctx.addIssue({ code: 'custom', message: issue });
    }
    if (Object.keys(labels).length > MAX_LABELS) {
      ctx.addIssue({ code: 'custom', message: `at most ${MAX_LABELS} labels` });
    }
  })
  .meta({ maxProperties: MAX_LABELS })
  .describe('Key/value labels, e.g. {"rack":"r1","role":"worker"}');

const ZBaseUrlSchema = z
  .url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL of the board (without /api/bmc)' })
  .max(512)
  // Stored in one spelling (lower-case host, no default port, no trailing slash): the certificate pin and the
  // uniqueness of addresses compare it with the origin a connection reports (base-url.ts).
  .transform((u, ctx) => {
    try {
      return normalizeBaseUrl(u);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  })
  .describe('Where the board answers, e.g. https://10.0.0.5 (the client appends /api/bmc)');

export const ZCredentialsInputSchema = z
  .union([
    z.strictObject({
      username: z.string().min(1).max(128).describe('Board user, usually root'),
      password: z.string().min(1).max(512).describe('Password (stored encrypted; never returned)'),
    }),
    z.strictObject({ token: z.string().min(1).max(512).describe('Long-lived bearer token (stored encrypted)') }),
  ])
  .describe('Either username and password, or a token');
export type TCredentialsInput = z.infer<typeof ZCredentialsInputSchema>;

const boardFields = {
  name: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { error: 'letters, digits, ".", "_" and "-", starting alphanumeric' })
    .describe('Unique display name (not the identity: boards are addressed by id)'),
  base_url: ZBaseUrlSchema,
  labels: ZLabelsSchema.optional(),
  rack: z.string().min(1).max(64).nullable().optional().describe('Rack name'),
  slot: z.number().int().min(0).max(1000).nullable().optional().describe('Slot in the rack'),
  notes: z.string().max(4096).nullable().optional().describe('Free text'),
  credentials: ZCredentialsInputSchema.nullable().optional(),
  poll_interval_seconds: z
    .number()
    .int()
    .min(1)
    .max(86400)
    .nullable()
    .optional()
    .describe('Overrides the fleet polling interval for this board'),
};

export const ZBoardCreateSchema = z.strictObject(boardFields).meta({ id: 'BoardCreate' });
export type TBoardCreate = z.infer<typeof ZBoardCreateSchema>;

export const ZBoardBulkCreateSchema = z
  .strictObject({
    boards: z.array(ZBoardCreateSchema).min(1).max(1000).describe('Boards to register, all or nothing'),
  })
  .meta({ id: 'BoardBulkCreate' });

export const ZBoardUpdateSchema = z
  .strictObject({
    name: boardFields.name.optional(),
    base_url: ZBaseUrlSchema.optional(),
    labels: ZLabelsSchema.optional(),
    rack: boardFields.rack,
    slot: boardFields.slot,
    notes: boardFields.notes,
    credentials: boardFields.credentials,
    keep_credentials: z
      .boolean()
      .optional()
      .describe(
        'With a base_url on another origin (scheme, host or port): send the stored credentials to the new address. ' +
          'Without it such a change needs `credentials` again (recorded in the audit log and the timeline)',
      ),
    poll_interval_seconds: boardFields.poll_interval_seconds,
  })
  .refine((b) => Object.keys(b).length > 0, { error: 'nothing to update' })
  .meta({ id: 'BoardUpdate' });
export type TBoardUpdate = z.infer<typeof ZBoardUpdateSchema>;

const ipv4 = z.ipv4({ error: 'expected an IPv4 address' });
export const ZBoardScanSchema = z
  .strictObject({
    from: ipv4.describe('First address of the range'),
    to: ipv4.optional().describe('Last address of the range (default: from)'),
    ports: z.array(z.number().int().min(1).max(65535)).min(1).max(16).default([443]).describe('Ports to try'),
    scheme: z.enum(['http', 'https']).default('https'),
    paths: z
      .array(
        z
          .string()
          .max(256)
          .regex(/^(\/[A-Za-z0-9._~-]+)*$/, { error: 'expected a path such as /boards/1' }),
      )
      .min(1)
      .max(1024)
      .default([''])
      .describe('Path prefixes before /api/bmc (a rack serves several boards on one address)'),
    credentials: ZCredentialsInputSchema.optional(),
    labels: ZLabelsSchema.optional(),
    name_prefix: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/)
      .default('board'),
    dry_run: z.boolean().default(false).describe('Report what answers without registering'),
  })
  .meta({ id: 'BoardScan' });
export type TBoardScan = z.infer<typeof ZBoardScanSchema>;

const sortFields = ['name', 'created_at', 'state', 'updated_at'] as const;
export const ZBoardListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE).describe('page size'),
  cursor: z.string().max(512).optional().describe('`next_cursor` of the previous page'),
  state: z
    .string()
    .max(256)
    .optional()
    .transform((s, ctx) => {
      if (s === undefined) {
        return undefined;
      }
      const states = s.split(',');
      for (const st of states) {
        if (!(BOARD_STATES as readonly string[]).includes(st)) {
          ctx.addIssue({ code: 'custom', message: `unknown state "${st}"; expected ${BOARD_STATES.join(', ')}` });
        }
      }
      return states as (typeof BOARD_STATES)[number][];
    })
    .describe('Comma-separated states'),
  selector: z.string().max(1024).optional().describe('Label selector, e.g. rack=r1,role!=spare'),
  dialect: z.enum(DIALECTS).optional(),
  version: z.string().max(64).optional().describe('Daemon version, exact'),
  q: z.string().max(128).optional().describe('Free text over name, base URL, rack, notes, serial'),
  sort: z
    .enum([...sortFields, ...sortFields.map((f) => `-${f}` as const)])
    .default('name')
    .describe('Sort field; prefix with - for descending'),
  include_decommissioned: z.enum(['true', 'false', '1', '0']).optional(),
  include: z
    .enum(['capabilities'])
    .optional()
    .describe(
      "`capabilities`: give each item the board's capabilities (its operation ids), as a board's own page does. " +
        'Left out of a list otherwise: they are half of a page, and follow from `dialect` and `daemon_version`',
    ),
});
export type TBoardListQuery = z.infer<typeof ZBoardListQuerySchema>;

export const ZBoardSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    base_url: z.string(),
    labels: z.record(z.string(), z.string()),
    rack: z.string().nullable(),
    slot: z.number().int().nullable(),
    notes: z.string().nullable(),
    credentials: z
      .object({ kind: z.enum(['password', 'token']), username: z.string().nullable(), key_id: z.string().nullable() })
      .nullable()
      .describe('What kind of credential is stored (never the secret)'),
    tls_fingerprint: z
      .string()
      .nullable()
      .describe('SHA-256 of the TLS certificate pinned on first contact; null: not seen yet, or plain HTTP'),
    poll_interval_seconds: z.number().int().nullable(),
    dialect: z.enum(DIALECTS).nullable(),
    model: z.string().nullable(),
    serial: z.string().nullable(),
    daemon_version: z.string().nullable(),
    firmware_version: z.string().nullable(),
    capabilities: z.unknown().nullable(),
    state: z.enum(BOARD_STATES),
    state_since: z.string(),
    state_reason: z.string().nullable(),
    consecutive_failures: z.number().int(),
    last_polled_at: z.string().nullable(),
    last_success_at: z.string().nullable(),
    next_poll_at: z.string(),
    banned_until: z.string().nullable(),
    decommissioned_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Board' });
export type TBoard = z.infer<typeof ZBoardSchema>;

export const ZBoardDetailSchema = ZBoardSchema.extend({
  latest: z.object({
    health: z.unknown().nullable(),
    health_at: z.string().nullable(),
    thermal: z.unknown().nullable(),
    thermal_at: z.string().nullable(),
    cooling: z.unknown().nullable().describe('latest GET /cooling (every few polls)'),
    cooling_at: z.string().nullable(),
    sdcard: z.unknown().nullable().describe('latest GET /sdcard (every few polls)'),
    sdcard_at: z.string().nullable(),
    firmware_check: z.unknown().nullable(),
    firmware_at: z.string().nullable(),
    slots: z.unknown().nullable(),
    slots_at: z.string().nullable(),
    about: z.unknown().nullable(),
    about_at: z.string().nullable(),
  }),
}).meta({ id: 'BoardDetail' });

/** A board in a list: without its capabilities unless asked for (`include=capabilities`). */
export const ZBoardListItemSchema = ZBoardSchema.extend({
  capabilities: z.unknown().nullable().optional().describe('only with `include=capabilities`'),
}).meta({ id: 'BoardListItem' });

export type TBoardListItem = z.infer<typeof ZBoardListItemSchema>;

export const ZBoardPageSchema = z
  .object({ items: z.array(ZBoardListItemSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'BoardPage' });

export const ZThermalHistoryQuerySchema = z.strictObject({
  sensor: z.string().max(128).optional(),
  from: z.iso.datetime({ error: 'expected an ISO 8601 time' }).optional(),
  to: z.iso.datetime({ error: 'expected an ISO 8601 time' }).optional(),
  resolution: z.enum(['raw', '5m']).default('raw'),
  limit: z.coerce.number().int().min(1).max(10000).default(1000),
});

/** What POST /boards/scan answers (boards.service.ts scan). */
export const ZBoardScanResultSchema = z
  .object({
    dry_run: z.boolean(),
    probed: z.number().int().describe('address/port/path combinations tried'),
    found: z.array(
      z.object({
        base_url: z.string(),
        dialect: z.enum(['agent', 'fork', 'upstream']),
        version: z.string().describe('the daemon’s version'),
        already_registered: z.boolean(),
      }),
    ),
    registered: z.array(ZBoardSchema).describe('the boards this scan registered (none on a dry run)'),
    unanswered: z.number().int(),
  })
  .meta({ id: 'BoardScanResult' });

export const ZThermalHistorySchema = z
  .object({
    resolution: z.enum(['raw', '5m']),
    items: z.array(
      z.object({
        sensor: z.string(),
        at: z.iso.datetime().describe('The sample’s time, or the start of its 5-minute bucket'),
        mean: z.number().describe('°C (a raw sample: its reading; min and max are the same)'),
        min: z.number(),
        max: z.number(),
      }),
    ),
  })
  .meta({ id: 'ThermalHistory' });
