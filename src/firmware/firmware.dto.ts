import { z } from 'zod';
import { windowIssue } from './maintenance-window.js';

const ZVersionSchema = z
  .string()
  .trim()
  .min(1, { error: 'a release tag is required' })
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]*$/, { error: 'a release tag: letters, digits, . _ + -' });
const ZSourceIdSchema = z.string().trim().min(1, { error: 'a source id is required' }).max(64);

// ---------------------------------------------------------------- sources document

/** A source as the fleet stores it; the same rules as the board applies (POST /firmware/sources). */
const ZFleetSourceSchema = z
  .strictObject({
    id: ZSourceIdSchema,
    kind: z.enum(['github', 'http', 'local']),
    label: z.string().max(200),
    location: z.string().trim().min(1, { error: 'a location is required' }).max(1024),
    enabled: z.boolean().default(true),
  })
  .superRefine((s, ctx) => {
    const bad = (message: string) => ctx.addIssue({ code: 'custom', path: ['location'], message });
    if (s.kind === 'github' && !/^[^/\s]+\/[^/\s]+$/.test(s.location)) {
      bad(`source "${s.id}" should be owner/repo, not "${s.location}"`);
    }
    if (s.kind === 'http') {
      if (!/^https?:\/\//.test(s.location)) {
        bad(`source "${s.id}" should be an http(s) URL`);
      } else if (s.location.endsWith('.tpu')) {
        bad(`source "${s.id}" should be the DIRECTORY holding version folders, not an image`);
      }
    }
    if (s.kind === 'local' && !s.location.startsWith('/')) {
      bad(`source "${s.id}" should be an absolute path`);
    }
  });

export const ZFleetSourcesSchema = z
  .strictObject({ sources: z.array(ZFleetSourceSchema).min(1).max(32) })
  .superRefine((doc, ctx) => {
    const seen = new Set<string>();
    doc.sources.forEach((s, i) => {
      if (seen.has(s.id)) {
        ctx.addIssue({ code: 'custom', path: ['sources', i, 'id'], message: `duplicate source id "${s.id}"` });
      }
      seen.add(s.id);
    });
  })
  .meta({ id: 'FleetFirmwareSources' });
export type TFleetSources = z.infer<typeof ZFleetSourcesSchema>;

export const ZSelectorSchema = z
  .strictObject({
    labels: z.string().max(1024).optional().describe('Label selector, e.g. rack=r1,role!=spare'),
    racks: z.array(z.string().min(1).max(128)).min(1).max(1000).optional().describe('Only boards in these racks'),
    board_ids: z
      .array(z.uuid({ error: 'expected board ids (uuid)' }))
      .min(1)
      .max(10_000)
      .optional(),
  })
  .describe('Every given part must match (an empty selector is every board)');
export type TSelector = z.infer<typeof ZSelectorSchema>;

export const ZPushSourcesSchema = z
  .strictObject({
    selector: z.string().max(1024).default('').describe('Label selector of the boards ("" = all)'),
    dry_run: z.boolean().default(false),
  })
  .meta({ id: 'FirmwareSourcesPushRequest' });
export type TPushSources = z.infer<typeof ZPushSourcesSchema>;

export const ZCatalogueQuerySchema = z.strictObject({
  selector: z.string().max(1024).default('').describe('Label selector of the boards asked ("" = all)'),
  refresh: z.enum(['0', '1', 'true', 'false']).default('0').describe('Ask boards to refresh their catalogue cache'),
});
export type TCatalogueQuery = z.infer<typeof ZCatalogueQuerySchema>;

// ---------------------------------------------------------------- single-board install

/** One board's whole install, reboot and verification, in seconds: a single install's and a rollout's alike. */
const ZBoardTimeoutSchema = z
  .number()
  .int()
  .min(10)
  .max(86_400)
  .default(1800)
  .describe('Whole install, reboot and verification');
/** How long a rebooted board has to come back promoted, in seconds. */
const ZRebootTimeoutSchema = z.number().int().min(5).max(3600).default(600);

export const ZInstallRequestSchema = z
  .strictObject({
    source: ZSourceIdSchema.describe('Source id on the board (see the fleet sources document)'),
    version: ZVersionSchema,
    activate: z.boolean().default(true).describe('Reboot into the staged image and verify the promotion'),
    force: z.boolean().default(false).describe('Replace a different staged image'),
    allow_downgrade: z.boolean().default(false),
    timeout_seconds: ZBoardTimeoutSchema,
    reboot_timeout_seconds: ZRebootTimeoutSchema.describe('Board back and promoted within this'),
  })
  .meta({ id: 'FirmwareInstallRequest' });
export type TInstallRequest = z.infer<typeof ZInstallRequestSchema>;

export const ZIdParamSchema = z.object({ id: z.uuid({ error: 'expected an id (uuid)' }) });

// ---------------------------------------------------------------- rollouts

const ZWaveSchema = z.union([
  z.strictObject({ percent: z.number().gt(0).max(100).describe('Share of the rollout’s boards') }),
  z.strictObject({ count: z.number().int().min(1).max(100_000).describe('Fixed number of boards') }),
]);

export const ZPolicySchema = z
  .strictObject({
    canary: z.number().int().min(0).max(1000).default(1).describe('Boards in the first wave (0: no canary wave)'),
    waves: z.array(ZWaveSchema).max(50).default([]).describe('Waves after the canary; the rest forms a last wave'),
    concurrency: z.number().int().min(1).max(1000).default(10).describe('Boards installing at once in this rollout'),
    fleet_cap: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(32)
      .describe('No dispatch while the fleet has this many installs running'),
    max_per_rack: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe('At most this many boards of one rack at once (fleet-wide)'),
    activation: z
      .enum(['stage_only', 'reboot'])
      .default('reboot')
      .describe('Stage only, or stage then reboot and verify'),
    window: z
      .strictObject({
        cron: z.string().min(9).max(120).describe('When the window opens, 5-field cron, e.g. `0 2 * * *`'),
        duration_minutes: z
          .number()
          .int()
          .min(1)
          .max(7 * 24 * 60),
        timezone: z.string().min(1).max(64).default('UTC'),
      })
      .optional()
      .describe('Reboots only inside this window (staging happens any time)'),
    install_timeout_seconds: z.number().int().min(5).max(3600).default(900).describe('One POST /firmware/install'),
    board_timeout_seconds: ZBoardTimeoutSchema,
    reboot_timeout_seconds: ZRebootTimeoutSchema.describe('Back and promoted within this, else stuck'),
    retries: z.number().int().min(0).max(5).default(1).describe('Install retries after a failure to reach the board'),
    error_threshold: z
      .strictObject({
        count: z.number().int().min(1).optional(),
        percent: z.number().min(0).max(100).optional(),
        min_finished: z
          .number()
          .int()
          .min(1)
          .default(1)
          .describe('Judged only once this many boards of the wave finished'),
      })
      .refine((t) => t.count !== undefined || t.percent !== undefined, { error: 'give count, percent or both' })
      .default({ percent: 20, min_finished: 1 }),
    success_threshold_percent: z.number().min(0).max(100).default(100).describe('Wave success needed to go on'),
    after_wave: z.enum(['continue', 'wait_for_approval']).default('continue'),
    soak_seconds: z
      .number()
      .int()
      .min(0)
      .max(7 * 86_400)
      .default(0)
      .describe('Watch each finished wave this long'),
    allow_downgrade: z.boolean().default(false).describe('Install even when the target is older than a board runs'),
  })
  .superRefine((p, ctx) => {
    if (p.window) {
      const issue = windowIssue({
        cron: p.window.cron,
        durationMinutes: p.window.duration_minutes,
        timezone: p.window.timezone,
      });
      if (issue) {
        ctx.addIssue({ code: 'custom', path: ['window'], message: issue });
      }
      if (p.activation === 'stage_only') {
        ctx.addIssue({ code: 'custom', path: ['window'], message: 'a window only applies to activation "reboot"' });
      }
    }
  });
export type TPolicy = z.infer<typeof ZPolicySchema>;

export const ZRolloutCreateSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    version: ZVersionSchema,
    source: ZSourceIdSchema,
    selector: ZSelectorSchema.default({}),
    policy: ZPolicySchema.default(ZPolicySchema.parse({})),
    start: z
      .union([z.enum(['now', 'manual']), z.iso.datetime({ offset: true, error: 'now, manual or an ISO time' })])
      .default('now')
      .describe('Start now, wait for the start action, or start at this time'),
    dry_run: z.boolean().default(false).describe('Show the frozen board list and the waves; create nothing'),
  })
  .meta({ id: 'FirmwareRolloutCreate' });
export type TRolloutCreate = z.infer<typeof ZRolloutCreateSchema>;

export const ROLLOUT_STATUSES = ['scheduled', 'running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];

export const ZRolloutListQuerySchema = z.strictObject({
  status: z.enum(ROLLOUT_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z.string().max(512).optional(),
});
export type TRolloutListQuery = z.infer<typeof ZRolloutListQuerySchema>;

export const ROLLOUT_ACTIONS = ['start', 'pause', 'resume', 'approve', 'retry', 'cancel'] as const;
export type RolloutAction = (typeof ROLLOUT_ACTIONS)[number];
export const ZRolloutActionParamSchema = z.object({
  id: z.uuid({ error: 'expected a rollout id (uuid)' }),
  action: z.enum(ROLLOUT_ACTIONS, { error: `one of ${ROLLOUT_ACTIONS.join(', ')}` }),
});

// ---------------------------------------------------------------- responses (what rollouts.service.ts and
// fleet-firmware.service.ts return; documented so libs/fleet-api types them)

const ZIsoTimeSchema = z.iso.datetime({ offset: true });

export const ZRolloutInstallSchema = z
  .object({
    install_id: z.uuid(),
    board_id: z.uuid(),
    name: z.string(),
    rack: z.string().nullable(),
    wave: z.number().int().nullable().describe('1 = the first (canary) wave; null for a board left out'),
    status: z.string().describe('queued, staging, staged, rebooting, verifying, succeeded, failed, …'),
    reason: z.string().nullable(),
    soak_failed: z.boolean(),
    attempts: z.number().int(),
    from_version: z.string().nullable(),
    version: z.string(),
    started_at: ZIsoTimeSchema.nullable(),
    finished_at: ZIsoTimeSchema.nullable(),
  })
  .meta({ id: 'FirmwareInstall' });

export const ZRolloutSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    version: z.string(),
    source: z.string(),
    selector: ZSelectorSchema,
    policy: ZPolicySchema,
    status: z.enum(ROLLOUT_STATUSES),
    status_reason: z.string().nullable(),
    current_wave: z.number().int().describe('1-based'),
    wave_phase: z.string(),
    soak_until: ZIsoTimeSchema.nullable(),
    start_at: ZIsoTimeSchema.nullable(),
    actor: z.string(),
    created_at: ZIsoTimeSchema,
    started_at: ZIsoTimeSchema.nullable(),
    finished_at: ZIsoTimeSchema.nullable(),
  })
  .meta({ id: 'FirmwareRollout' });

export const ZRolloutWaveSchema = z
  .object({
    wave: z.number().int(),
    size: z.number().int(),
    state: z.string().describe('done, waiting, or the current wave’s phase'),
    succeeded: z.number().int(),
    failed: z.number().int(),
    open: z.number().int(),
    success_percent: z.number(),
    by_status: z.record(z.string(), z.number().int()),
  })
  .meta({ id: 'FirmwareRolloutWave' });

export const ZRolloutDetailSchema = ZRolloutSchema.extend({
  summary: z.record(z.string(), z.number().int()).describe('Boards per install status'),
  waves: z.array(ZRolloutWaveSchema),
  boards: z.array(ZRolloutInstallSchema),
}).meta({ id: 'FirmwareRolloutDetail' });

export const ZRolloutPlanSchema = z
  .object({
    dry_run: z.literal(true),
    version: z.string(),
    source: z.string(),
    waves: z.array(z.object({ wave: z.number().int(), size: z.number().int() })),
    summary: z.object({
      will_install: z.number().int(),
      skipped: z.number().int(),
      blocked: z.number().int(),
      warnings: z.number().int(),
    }),
    boards: z.array(
      z.object({
        board_id: z.uuid(),
        name: z.string(),
        rack: z.string().nullable(),
        state: z.string(),
        current_version: z.string().nullable(),
        wave: z.number().int().nullable(),
        position: z.number().int(),
        status: z.enum(['will_install', 'skipped', 'blocked']),
        reason: z.string().nullable(),
        warning: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'FirmwareRolloutPlan' });

export const ZRolloutPageSchema = z
  .object({ items: z.array(ZRolloutSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'FirmwareRolloutPage' });

export const ZCatalogueSchema = z
  .object({
    asked: z.number().int().describe('Boards asked (online, with a known daemon)'),
    answered: z.number().int(),
    versions: z.array(
      z.object({
        version: z.string(),
        prerelease: z.boolean(),
        sources: z.array(z.object({ id: z.string(), kind: z.string(), trust: z.string() })),
        board_count: z.number().int(),
        boards: z.array(
          z.object({
            board_id: z.uuid(),
            name: z.string(),
            current_version: z.string(),
            relation: z.string(),
            source: z.string(),
          }),
        ),
      }),
    ),
    errors: z.array(z.object({ board_id: z.uuid(), name: z.string(), error: z.string() })),
  })
  .meta({ id: 'FirmwareCatalogue' });

export const ZFleetSourcesDocumentSchema = z
  .object({
    sources: z.array(ZFleetSourceSchema),
    revision: z.number().int().describe('Goes up by one with every PUT'),
    updated_by: z.string(),
    updated_at: ZIsoTimeSchema,
  })
  .meta({ id: 'FleetFirmwareSourcesDocument' });

export const ZSourcesPushSchema = z
  .union([
    z.object({
      id: z.null(),
      dry_run: z.literal(true),
      revision: z.number().int(),
      boards: z.array(
        z.object({
          board_id: z.uuid(),
          name: z.string(),
          status: z.enum(['will_push', 'skipped']),
          error: z.string().nullable().describe('Why a board is skipped'),
        }),
      ),
    }),
    z.object({
      id: z.uuid(),
      dry_run: z.literal(false),
      revision: z.number().int(),
      created_at: ZIsoTimeSchema,
      summary: z.record(z.string(), z.number().int()).describe('Boards per status'),
      boards: z.array(
        z.object({
          board_id: z.uuid(),
          status: z.string().describe('pending, succeeded, failed, skipped'),
          error: z.string().nullable(),
        }),
      ),
    }),
  ])
  .meta({ id: 'FirmwareSourcesPush' });

export const ZInstallDetailSchema = ZRolloutInstallSchema.extend({
  rollout_id: z.uuid().nullable().describe('null for a single-board install'),
  activate: z.boolean(),
  slots: z.unknown().describe('The board’s slot report after the install, when read'),
}).meta({ id: 'FirmwareInstallDetail' });
