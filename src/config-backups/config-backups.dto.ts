// Request and response shapes of the config backup API (validation and the OpenAPI document).
import { z } from 'zod';
import { ZSourceInputSchema } from '@tpfleet/board-api';
import { ZPageQuerySchema } from '../common/pagination.js';
import { MAX_BODY_BYTES } from '../common/http-setup.js';
import { CONFIG_FIELDS } from './config-document.js';
import { patternIssues } from './config-template.js';

/** A source in a template, bounded here (the board's own contract leaves lengths to the board). */
const ZTemplateSourceSchema = ZSourceInputSchema.extend({
  id: z.string().min(1).max(64).describe('Stable identifier, used by install; unique'),
  label: z.string().max(200).describe('Display name'),
  location: z.string().min(1).max(1024).describe('github: `owner/repo`; http: directory URL; local: absolute path'),
});

const ZFieldSchema = z.enum(CONFIG_FIELDS);

export const ZBoardVersionParamSchema = z.object({
  id: z.uuid({ error: 'expected a board id (uuid)' }),
  seq: z.coerce
    .number({ error: 'expected a version number' })
    .int({ error: 'expected a version number' })
    .min(1, { error: 'versions start at 1' }),
});

export const ZIdParamSchema = z.object({ id: z.uuid({ error: 'expected an id (uuid)' }) });

export const ZVersionListQuerySchema = ZPageQuerySchema.extend({}).strict();

export const ZDiffQuerySchema = z
  .strictObject({
    from: z.coerce
      .number({ error: 'expected a version number' })
      .int()
      .min(1)
      .describe('Version number of the old side'),
    to: z
      .union([z.literal('live'), z.coerce.number({ error: 'expected a version number or `live`' }).int().min(1)], {
        error: 'expected a version number or `live`',
      })
      .default('live')
      .describe('Version number of the new side, or `live` (the board’s config now); default live'),
  })
  .describe('Diff between two versions, or a version and the live config');
export type TDiffQuery = z.infer<typeof ZDiffQuerySchema>;

const uniqueFields = (fields: readonly string[] | undefined) => !fields || new Set(fields).size === fields.length;

export const ZRestoreSchema = z
  .strictObject({
    version_id: z
      .uuid({ error: 'expected a version id (uuid)' })
      .describe('The stored version (of this or another board)'),
    fields: z
      .array(ZFieldSchema)
      .min(1)
      .max(CONFIG_FIELDS.length)
      .refine(uniqueFields, { error: 'fields must not repeat' })
      .optional()
      .describe('Restore only these fields (default: all four)'),
  })
  .meta({ id: 'ConfigRestoreRequest' });
export type TRestore = z.infer<typeof ZRestoreSchema>;

export const ZRunBackupsSchema = z
  .strictObject({ selector: z.string().max(1024).describe('Label selector ("" = every board)') })
  .meta({ id: 'ConfigBackupRun' });

export const ZBoardConfigSettingsSchema = z
  .strictObject({
    backup_interval_seconds: z
      .number()
      .int()
      .min(300, { error: 'at least 300 seconds' })
      .max(31_536_000)
      .nullable()
      .optional()
      .describe('Per-board backup interval; null = the fleet default'),
    template_id: z.uuid().nullable().optional().describe('Bind to a template for drift detection; null unbinds'),
    auto_reapply: z.boolean().optional().describe('Re-apply the bound template when drift is found'),
  })
  .refine((v) => Object.keys(v).length > 0, { error: 'nothing to change' })
  .meta({ id: 'BoardConfigSettings' });
export type TBoardConfigSettings = z.infer<typeof ZBoardConfigSettingsSchema>;

export const ZPolicySchema = z
  .strictObject({
    backup_interval_seconds: z.number().int().min(300).max(31_536_000).optional().describe('Default backup interval'),
    keep_versions: z.number().int().min(1).max(100_000).optional().describe('Keep the newest N versions of each board'),
    keep_days: z.number().int().min(0).max(36_500).optional().describe('Keep every version newer than D days'),
    keep_monthly: z.boolean().optional().describe('Keep the last version of each month'),
  })
  .refine((v) => Object.keys(v).length > 0, { error: 'nothing to change' })
  .meta({ id: 'ConfigPolicy' });
export type TPolicy = z.infer<typeof ZPolicySchema>;

const ZNtpServerSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9._:-]+$/, { error: 'a host name or address (letters, digits, ".", "_", ":", "-")' });

const ZTemplateNodeSchema = z
  .strictObject({
    id: z.number().int().min(1, { error: 'nodes are 1-4' }).max(4, { error: 'nodes are 1-4' }),
    name: z.string().min(1).max(64).optional(),
    module_name: z.string().min(1).max(64).optional(),
    uart_baud: z.number().int().min(1).max(4_294_967_295).optional(),
  })
  .refine((n) => n.name !== undefined || n.module_name !== undefined || n.uart_baud !== undefined, {
    error: 'a node entry sets at least one of name, module_name, uart_baud',
  });

export const ZTemplateSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { error: 'letters, digits, ".", "_" and "-", starting alphanumeric' }),
    description: z.string().max(1024).nullable().optional(),
    hostname_pattern: z
      .string()
      .min(1)
      .max(253)
      .superRefine((p, ctx) => {
        for (const issue of patternIssues(p)) {
          ctx.addIssue({ code: 'custom', message: issue });
        }
      })
      .nullable()
      .optional()
      .describe('Per-board hostname, e.g. `{rack}-{slot}`, `{name}`, `tp-{label.role}-{slot}`'),
    ntp_servers: z
      .array(ZNtpServerSchema)
      .max(8)
      .nullable()
      .optional()
      .describe('Time servers in order ([] = the board default)'),
    firmware_sources: z
      .object({ sources: z.array(ZTemplateSourceSchema).max(32) })
      .strict()
      .refine((d) => new Set(d.sources.map((s) => s.id)).size === d.sources.length, {
        error: 'source ids must be unique',
      })
      .nullable()
      .optional()
      .describe('The whole firmware sources document'),
    nodes: z
      .array(ZTemplateNodeSchema)
      .min(1)
      .max(4)
      .refine((n) => new Set(n.map((x) => x.id)).size === n.length, { error: 'node ids must be unique' })
      .nullable()
      .optional()
      .describe('Node labels to set; attributes left out are left alone'),
  })
  .refine(
    (t) => [t.hostname_pattern, t.ntp_servers, t.firmware_sources, t.nodes].some((f) => f !== undefined && f !== null),
    { error: 'a template sets at least one of hostname_pattern, ntp_servers, firmware_sources, nodes' },
  )
  .meta({ id: 'ConfigTemplate' });
export type TTemplate = z.infer<typeof ZTemplateSchema>;

export const ZPushSchema = z
  .strictObject({
    selector: z.string().max(1024).describe('Label selector of the boards ("" = every board)'),
    dry_run: z.boolean().default(false).describe('Show the per-board diff; send nothing'),
    concurrency: z.number().int().min(1).max(256).default(8).describe('Boards at once'),
    stop_on_failure_ratio: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe('Stop (cancel the boards not started) when failed/finished exceeds this; 1 = never'),
    min_finished: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(5)
      .describe('Boards finished before the ratio is checked'),
    bind: z.boolean().default(true).describe('Bind the boards to the template (drift detection on each backup)'),
    auto_reapply: z.boolean().default(false).describe('With bind: re-apply automatically when drift is found'),
  })
  .meta({ id: 'ConfigPushRequest' });
export type TPush = z.infer<typeof ZPushSchema>;

export const ZDriftQuerySchema = ZPageQuerySchema.extend({
  selector: z.string().max(1024).optional(),
  status: z.enum(['in_sync', 'drifted', 'unknown']).optional(),
}).strict();

export const ZExportQuerySchema = z.strictObject({
  selector: z.string().max(1024).default('').describe('Label selector of the boards ("" = every board)'),
  include_decommissioned: z
    .enum(['true', 'false'])
    .default('true')
    .transform((v) => v === 'true'),
});

export const ZImportJsonSchema = z.strictObject({
  archive: z.string().min(1).max(MAX_BODY_BYTES).describe('The JSON-lines archive text'),
});

export const ZFieldChangeSchema = z.object({
  field: z.string(),
  path: z.string().describe('e.g. hostname, ntp_servers[0], firmware_sources[fork], nodes[2].name'),
  from: z.unknown(),
  to: z.unknown(),
});

export const ZVersionSchema = z
  .object({
    id: z.uuid(),
    board_id: z.uuid(),
    board_name: z.string(),
    version: z.number().int(),
    hash: z.string(),
    format_version: z.number().int(),
    firmware_version: z.string().nullable(),
    source: z.string(),
    captured_at: z.string(),
    last_seen_at: z.string(),
    document: z.unknown().optional(),
  })
  .meta({ id: 'ConfigVersion' });

export const ZFieldOutcomeSchema = z.object({
  field: z.string(),
  status: z.enum(['applied', 'skipped', 'failed']),
  message: z.string(),
});

export const ZRestoreResultSchema = z
  .object({
    id: z.uuid(),
    board_id: z.uuid(),
    version_id: z.uuid(),
    source_board_id: z.uuid(),
    fields: z.array(z.string()),
    status: z.string().describe('pending | running | applied | partial | failed'),
    report: z.unknown().nullable().describe('The board’s ImportReport'),
    fields_outcome: z.array(ZFieldOutcomeSchema).nullable(),
    error: z.string().nullable(),
    pre_backup_version_id: z.uuid().nullable(),
    created_at: z.string(),
    finished_at: z.string().nullable(),
  })
  .meta({ id: 'ConfigRestore' });

export const ZPushResultSchema = z
  .object({
    id: z.uuid().nullable(),
    template: z.object({ id: z.uuid().nullable(), name: z.string() }),
    status: z.string(),
    dry_run: z.boolean(),
    summary: z.record(z.string(), z.number().int()),
    boards: z.array(
      z.object({
        board_id: z.uuid(),
        name: z.string(),
        status: z.string(),
        changes: z.array(ZFieldChangeSchema).optional(),
        fields: z.array(ZFieldOutcomeSchema).optional(),
        error: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'ConfigPushResult' });

const ZDiffSideSchema = z.object({ version: z.number().int(), id: z.uuid(), captured_at: z.iso.datetime() });

export const ZConfigDiffSchema = z
  .object({
    board_id: z.uuid(),
    from: ZDiffSideSchema,
    to: z.union([
      ZDiffSideSchema,
      z.object({ live: z.literal(true), fetched_at: z.iso.datetime().describe('when the board was asked') }),
    ]),
    identical: z.boolean(),
    changes: z.array(ZFieldChangeSchema),
  })
  .meta({ id: 'ConfigDiff' });

const template = ZTemplateSchema.shape;

/** A template as answered (config-templates.service.ts templateDto): every field present, null when not set. */
export const ZTemplateViewSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().nullable(),
    hostname_pattern: z.string().nullable(),
    ntp_servers: template.ntp_servers.unwrap(),
    firmware_sources: template.firmware_sources.unwrap(),
    nodes: template.nodes.unwrap(),
    fields: z.array(z.enum(CONFIG_FIELDS)).describe('The fields this template sets'),
    bound_boards: z.number().int().optional().describe('Boards bound to it (one template only)'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'ConfigTemplateView' });

export const ZDriftPageSchema = z
  .object({
    items: z.array(
      z.object({
        board_id: z.uuid(),
        name: z.string().nullable(),
        template_id: z.uuid(),
        status: z.string().describe('in_sync, drifted, unknown'),
        fields: z.array(ZFieldChangeSchema).describe('What differs from the template'),
        checked_at: z.iso.datetime().nullable(),
      }),
    ),
    summary: z.record(z.string(), z.number().int()).describe('Boards per status'),
  })
  .meta({ id: 'ConfigDrift' });

/** A board's backup schedule, versions, template binding and drift (config-backups.service.ts status). */
export const ZConfigStatusSchema = z
  .object({
    board_id: z.uuid(),
    name: z.string(),
    backup: z.object({
      interval_seconds: z.number().int(),
      interval_overridden: z.boolean().describe('false: the fleet policy’s interval'),
      next_backup_at: z.iso.datetime().nullable(),
      last_backup_at: z.iso.datetime().nullable(),
      last_status: z.string().nullable(),
      last_error: z.string().nullable(),
    }),
    versions: z.number().int(),
    latest_version: ZVersionSchema.nullable(),
    template: z.object({ id: z.uuid(), name: z.string() }).nullable(),
    auto_reapply: z.boolean(),
    drift: z.object({
      status: z.string().describe('unbound, unknown, in_sync, drifted'),
      fields: z.array(ZFieldChangeSchema),
      checked_at: z.iso.datetime().nullable(),
    }),
  })
  .meta({ id: 'ConfigStatus' });

export const ZBackupPolicyViewSchema = z
  .object({
    backup_interval_seconds: z.number().int(),
    keep_versions: z.number().int(),
    keep_days: z.number().int(),
    keep_monthly: z.boolean(),
  })
  .meta({ id: 'ConfigBackupPolicyView' });

export const ZImportSummarySchema = z
  .object({
    lines: z.number().int(),
    imported: z.number().int(),
    duplicates: z.number().int().describe('Versions already stored (same content and capture time)'),
    unmatched: z.array(z.object({ line: z.number().int(), board: z.string() })).describe('Boards not registered here'),
    errors: z.array(z.object({ line: z.number().int(), error: z.string() })),
  })
  .meta({ id: 'ConfigImportSummary' });
