// Request and response shapes of the alerts API (alerts, rules, silences, receivers).
import { z } from 'zod';
import { zCsvEnum } from '../common/query-params.js';
import { parseLabelSelector } from '../common/label-selector.js';
import { ZPageQuerySchema } from '../common/pagination.js';

export const SEVERITY_VALUES = ['info', 'warning', 'critical'] as const;
export const STATUS_VALUES = ['pending', 'firing', 'resolved'] as const;
export const RULE_KINDS = [
  'temperature',
  'fan_max',
  'governor_overridden',
  'board_unreachable',
  'credentials_invalid',
  'clock_unsynced',
  'sdcard_full',
  'firmware_update',
  'external',
] as const;
export type TRuleKind = (typeof RULE_KINDS)[number];
export const REMEDIATIONS = ['none', 'fan_max', 'power_off'] as const;
/** Kinds judged against a threshold; the others are conditions that hold or not (how long: the dwell). */
export const THRESHOLD_KINDS: readonly string[] = ['temperature', 'sdcard_full'];

const ZSeveritySchema = z.enum(SEVERITY_VALUES);
export const ZIdParamSchema = z.object({ id: z.uuid({ error: 'expected an id (uuid)' }) });

const ZBooleanQuerySchema = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const ZAlertListQuerySchema = ZPageQuerySchema.extend({
  status: zCsvEnum(STATUS_VALUES).optional().describe('pending, firing, resolved (comma-separated)'),
  severity: zCsvEnum(SEVERITY_VALUES).optional().describe('info, warning, critical (comma-separated)'),
  board_id: z.uuid().optional(),
  rule: z.string().min(1).max(128).optional().describe('Rule name (or external key)'),
  acknowledged: ZBooleanQuerySchema.optional(),
  since: z.iso.datetime({ offset: true }).optional().describe('Only alerts created at or after this time'),
}).strict();
export type TAlertListQuery = z.infer<typeof ZAlertListQuerySchema>;

export const ZAlertSchema = z.object({
  id: z.string(),
  rule: z.string(),
  rule_id: z.string().nullable(),
  kind: z.string(),
  board_id: z.string(),
  sensor: z.string().nullable(),
  status: z.enum(STATUS_VALUES),
  severity: ZSeveritySchema,
  summary: z.string(),
  labels: z.record(z.string(), z.string()),
  value: z.number().nullable(),
  threshold: z.number().nullable(),
  pending_since: z.string(),
  fired_at: z.string().nullable(),
  resolved_at: z.string().nullable(),
  acknowledged: z.object({ at: z.string(), by: z.string(), comment: z.string().nullable() }).nullable(),
  remediation: z.string().nullable(),
  detail: z.unknown(),
});
export type TAlert = z.infer<typeof ZAlertSchema>;
export const ZAlertPageSchema = z.object({ items: z.array(ZAlertSchema), next_cursor: z.string().nullable() });

export const ZAcknowledgeSchema = z.strictObject({
  comment: z.string().max(2000).nullable().optional().describe('Why, or what is being done'),
});
export type TAcknowledge = z.infer<typeof ZAcknowledgeSchema>;

const ZSelectorSchema = z
  .string()
  .max(1024)
  .superRefine((s, ctx) => {
    try {
      parseLabelSelector(s);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : 'invalid label selector' });
    }
  })
  .describe('Label selector of the boards the rule applies to, e.g. rack=r1,role!=spare');

const ruleFields = {
  name: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z_][A-Za-z0-9_:.-]*$/, {
      error: 'letters, digits, "_", ":", ".", "-", starting with a letter or "_"',
    })
    .describe('Unique; the alertname label'),
  description: z.string().max(2000).nullable().default(null).describe('What the rule watches and why (for people)'),
  kind: z.enum(RULE_KINDS).describe('What the rule watches'),
  enabled: z.boolean().default(true),
  severity: ZSeveritySchema,
  sensor: z.string().min(1).max(128).nullable().default(null).describe('temperature: one sensor; null = every sensor'),
  threshold: z
    .number()
    .finite()
    .nullable()
    .default(null)
    .describe(
      'temperature: °C; sdcard_full: percent of the card used; other kinds: unused (the dwell is the duration)',
    ),
  threshold_from: z
    .enum(['trip_active', 'trip_hot'])
    .nullable()
    .default(null)
    .describe("temperature: derive the threshold from the sensor's own trip points"),
  threshold_offset: z.number().finite().min(-100).max(100).default(0),
  dwell_seconds: z.number().int().min(0).max(86_400).default(0).describe('Must hold this long before firing'),
  hysteresis: z.number().finite().min(0).max(100).default(0).describe('Clears only below threshold − hysteresis'),
  clear_seconds: z.number().int().min(0).max(86_400).default(0).describe('…for this long'),
  selector: ZSelectorSchema.nullable().default(null),
  remediation: z.enum(REMEDIATIONS).default('none').describe('Off by default'),
  remediation_nodes: z.array(z.number().int().min(1).max(4)).max(4).default([]).describe('power_off: nodes (1–4)'),
  remediation_after_seconds: z.number().int().min(0).max(86_400).default(0),
};

/** The same fields, all optional and without defaults (a PATCH changes only what it names). */
function partialOf<T extends Record<string, z.ZodType>>(fields: T) {
  return Object.fromEntries(
    Object.entries(fields).map(([k, v]) => [k, (v instanceof z.ZodDefault ? (v.unwrap() as z.ZodType) : v).optional()]),
  ) as { [K in keyof T]: z.ZodOptional<T[K]> };
}

function checkRule(rule: Partial<Record<keyof typeof ruleFields, unknown>>, ctx: z.RefinementCtx) {
  const needsThreshold = THRESHOLD_KINDS.includes(String(rule.kind));
  if (rule.kind !== undefined && needsThreshold && rule.threshold == null && rule.threshold_from == null) {
    ctx.addIssue({
      code: 'custom',
      path: ['threshold'],
      message: `a ${String(rule.kind)} rule needs threshold or threshold_from`,
    });
  }
  if (rule.threshold_from != null && rule.kind !== undefined && rule.kind !== 'temperature') {
    ctx.addIssue({ code: 'custom', path: ['threshold_from'], message: 'only temperature rules derive thresholds' });
  }
  if (rule.remediation === 'fan_max' && rule.kind !== undefined && rule.kind !== 'temperature') {
    ctx.addIssue({ code: 'custom', path: ['remediation'], message: 'fan_max remediation is for temperature rules' });
  }
  if (
    rule.remediation === 'power_off' &&
    Array.isArray(rule.remediation_nodes) &&
    rule.remediation_nodes.length === 0
  ) {
    ctx.addIssue({ code: 'custom', path: ['remediation_nodes'], message: 'power_off needs the nodes to power off' });
  }
}

export const ZRuleCreateSchema = z.strictObject(ruleFields).superRefine(checkRule);
export type TRuleCreate = z.infer<typeof ZRuleCreateSchema>;

export const ZRuleUpdateSchema = z
  .strictObject(partialOf(ruleFields))
  .superRefine(checkRule)
  .refine((v) => Object.keys(v).length > 0, { error: 'nothing to change' });
export type TRuleUpdate = z.infer<typeof ZRuleUpdateSchema>;

export const ZRuleSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  kind: z.enum(RULE_KINDS),
  enabled: z.boolean(),
  severity: ZSeveritySchema,
  sensor: z.string().nullable(),
  threshold: z.number().nullable(),
  threshold_from: z.string().nullable(),
  threshold_offset: z.number(),
  dwell_seconds: z.number(),
  hysteresis: z.number(),
  clear_seconds: z.number(),
  selector: z.string().nullable(),
  remediation: z.enum(REMEDIATIONS),
  remediation_nodes: z.array(z.number()),
  remediation_after_seconds: z.number(),
  builtin: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type TRule = z.infer<typeof ZRuleSchema>;

const ZMatcherSchema = z.strictObject({
  name: z.string().min(1).max(128),
  value: z.string().max(1024),
  is_regex: z.boolean().default(false),
  is_equal: z.boolean().default(true),
});
export type TMatcher = z.infer<typeof ZMatcherSchema>;

export const ZSilenceCreateSchema = z
  .strictObject({
    matchers: z
      .array(ZMatcherSchema)
      .min(1)
      .max(32)
      .superRefine((ms, ctx) => {
        ms.forEach((m, i) => {
          if (m.is_regex) {
            try {
              new RegExp(`^(?:${m.value})$`);
            } catch {
              ctx.addIssue({ code: 'custom', path: [i, 'value'], message: 'not a valid regular expression' });
            }
          }
        });
      }),
    starts_at: z.iso.datetime({ offset: true }).optional().describe('Default: now'),
    ends_at: z.iso.datetime({ offset: true }),
    comment: z.string().min(1).max(2000),
  })
  .refine((s) => new Date(s.ends_at).getTime() > (s.starts_at ? new Date(s.starts_at).getTime() : Date.now()), {
    path: ['ends_at'],
    error: 'ends_at must be after starts_at (and in the future)',
  });
export type TSilenceCreate = z.infer<typeof ZSilenceCreateSchema>;

export const ZSilenceSchema = z.object({
  id: z.string(),
  matchers: z.array(ZMatcherSchema),
  starts_at: z.string(),
  ends_at: z.string(),
  created_by: z.string(),
  comment: z.string(),
  state: z.enum(['pending', 'active', 'expired']),
});
export type TSilence = z.infer<typeof ZSilenceSchema>;

export const ZSilenceListQuerySchema = z
  .strictObject({ state: z.enum(['pending', 'active', 'expired']).optional() })
  .describe('Filter by state');

const receiverFields = {
  name: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { error: 'letters, digits, ".", "_", "-"' }),
  type: z.enum(['webhook', 'alertmanager']),
  url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).max(1024),
  enabled: z.boolean().default(true),
  min_severity: ZSeveritySchema.default('info'),
  group_by: z
    .array(
      z
        .string()
        .max(128)
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'a label name' }),
    )
    .max(16)
    .default(['alertname']),
  group_interval_seconds: z.number().int().min(1).max(86_400).default(60),
  repeat_interval_seconds: z.number().int().min(1).max(86_400).default(60),
  secret: z.string().min(16).max(512).nullable().optional().describe('webhook: HMAC-SHA256 key (stored encrypted)'),
};

export const ZReceiverCreateSchema = z.strictObject(receiverFields);
export type TReceiverCreate = z.infer<typeof ZReceiverCreateSchema>;
export const ZReceiverUpdateSchema = z
  .strictObject(partialOf(receiverFields))
  .refine((v) => Object.keys(v).length > 0, { error: 'nothing to change' });
export type TReceiverUpdate = z.infer<typeof ZReceiverUpdateSchema>;

export const ZReceiverSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(['webhook', 'alertmanager']),
  url: z.string(),
  enabled: z.boolean(),
  min_severity: ZSeveritySchema,
  group_by: z.array(z.string()),
  group_interval_seconds: z.number(),
  repeat_interval_seconds: z.number(),
  has_secret: z.boolean(),
});
export type TReceiver = z.infer<typeof ZReceiverSchema>;

export const ZDeliveryQuerySchema = ZPageQuerySchema.pick({ limit: true }).strict();

export const ZReceiverTestResultSchema = z
  .object({
    ok: z.boolean(),
    status: z.number().int().nullable().describe('The receiver’s HTTP status, when it answered'),
    error: z.string().nullable(),
  })
  .meta({ id: 'ReceiverTestResult' });

export const ZDeliveryPageSchema = z
  .object({
    items: z.array(
      z.object({
        id: z.string(),
        at: z.iso.datetime(),
        group_key: z.string(),
        attempt: z.number().int(),
        ok: z.boolean(),
        status: z.number().int().nullable(),
        error: z.string().nullable(),
        alert_ids: z.array(z.string()),
        test: z.boolean().describe('A test notification (POST …/test)'),
      }),
    ),
  })
  .meta({ id: 'ReceiverDeliveries' });
