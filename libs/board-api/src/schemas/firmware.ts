import { z } from 'zod';
import { named } from './registry.js';

export const ZSourceKindSchema = z.enum(['github', 'http', 'local']);
export type TSourceKind = z.infer<typeof ZSourceKindSchema>;

const sourceFields = {
  id: z.string().min(1).describe('Stable identifier, used by install; unique'),
  kind: ZSourceKindSchema.describe('`github`, `http` or `local`'),
  label: z.string().describe('Display name'),
  location: z
    .string()
    .min(1)
    .describe('github: `owner/repo`; http: directory URL holding `<version>/<image>.tpu`; local: absolute path'),
};

/** A firmware source as stored and answered (`enabled` always present on output). */
export const ZSourceSchema = named(
  'Source',
  z.object({ ...sourceFields, enabled: z.boolean().describe('Disabled sources are skipped by the catalogue') }),
);
export type TSource = z.infer<typeof ZSourceSchema>;

/** GET /firmware/sources, and the echo of POST /firmware/sources. */
export const ZSourcesSchema = named(
  'Sources',
  z.object({ sources: z.array(ZSourceSchema).describe('Sources in catalogue order') }),
);
export type TSources = z.infer<typeof ZSourcesSchema>;

/** A source as a client may send it: `enabled` defaults to true. */
export const ZSourceInputSchema = z.object({
  ...sourceFields,
  enabled: z.boolean().optional().describe('Defaults to true'),
});
/** The sources document accepted by POST /firmware/sources (and inside ConfigExport.firmware_sources on import). */
export const ZSourcesInputSchema = z.object({ sources: z.array(ZSourceInputSchema) });
export type TSourcesInput = z.infer<typeof ZSourcesInputSchema>;

export const ZCandidateSchema = named(
  'Candidate',
  z.object({
    version: z.string().describe('Release tag (local files: tag from the file name, else the file name)'),
    relation: z
      .enum(['current', 'newer', 'older', 'unknown'])
      .describe('Relation to the running version; `unknown` when either side is not version-shaped'),
    prerelease: z.literal(true).optional().describe('Present (true) only for pre-releases'),
    trust: z
      .enum(['verified', 'tls', 'unverified'])
      .describe('github: verified (SHA256SUMS); http: tls; local: unverified'),
    file: z.string().optional().describe('Local candidates only: absolute path'),
    size_bytes: z.number().int().nonnegative().optional().describe('Local candidates only: file size'),
  }),
);
export type TCandidate = z.infer<typeof ZCandidateSchema>;

export const ZSourceCatalogSchema = named(
  'SourceCatalog',
  z.object({
    ...sourceFields,
    candidates: z.array(ZCandidateSchema).describe('What the source offers; may be empty'),
    error: z.string().optional().describe('Why this source produced nothing; omitted when none'),
  }),
);
export type TSourceCatalog = z.infer<typeof ZSourceCatalogSchema>;

/** GET /firmware/available. */
export const ZCatalogSchema = named(
  'Catalog',
  z.object({
    checked_at: z.string().describe('UTC ISO time of the answers'),
    running: z.string().describe('Running firmware version, or `unknown`'),
    sources: z.array(ZSourceCatalogSchema).describe('Candidates per enabled source, in configured order'),
    refreshing: z
      .literal(true)
      .optional()
      .describe('Present (true) while a refresh runs behind the cached answers; omitted when false'),
    age_seconds: z.number().int().nonnegative().describe('Age of the answers'),
  }),
);
export type TCatalog = z.infer<typeof ZCatalogSchema>;

/** The updater's view of one channel; all five fields required. */
export const ZChannelStateSchema = named(
  'ChannelState',
  z.object({
    channel: z.enum(['stable', 'edge']).describe('Channel name'),
    repo: z.string().describe('`owner/repo` the updater followed'),
    running: z.string().describe('Running firmware tag'),
    target: z.string().describe('Tag this channel resolves to'),
    update_available: z.boolean().describe('Target is newer than running'),
  }),
);
export type TChannelState = z.infer<typeof ZChannelStateSchema>;

/** GET /firmware/check: all four keys always present. */
export const ZUpdateCheckSchema = named(
  'UpdateCheck',
  z.object({
    checked_at: z.string().describe('UTC `YYYY-MM-DDTHH:MM:SSZ` of the last resolution'),
    stable: ZChannelStateSchema.nullable().describe('Latest release, pre-releases excluded; null when unresolved'),
    edge: ZChannelStateSchema.nullable().describe('Newest release including pre-releases; null when unresolved'),
    error: z
      .string()
      .nullable()
      .describe('`<channel>: <detail>` per failed channel, joined by `; `; null when both resolved'),
  }),
);
export type TUpdateCheck = z.infer<typeof ZUpdateCheckSchema>;

export const ZSlotSchema = named(
  'Slot',
  z.object({
    volume: z.string().describe('UBI volume name (`rootfs`, `rootfs_prev`, `rootfs_new`)'),
    volume_id: z.number().int().nonnegative().describe('N of ubi0_N'),
    size_bytes: z.number().int().nonnegative().nullable().describe('Data bytes of the volume'),
    version: z.string().nullable().describe('Firmware version of the slot; null when unknown (never guessed)'),
  }),
);
export type TSlot = z.infer<typeof ZSlotSchema>;

export const ZStagedImageSchema = named(
  'StagedImage',
  z.object({
    version: z.string().nullable().describe('Release tag written by the stager'),
    sha256: z.string().nullable().describe('Checksum verified before writing'),
    staged_at: z.string().nullable().describe('Board time, UTC ISO'),
    source: z.string().nullable().describe('`tpi-selfupdate` or `upload`'),
    file: z.string().nullable().describe('Upload file name'),
  }),
);
export type TStagedImage = z.infer<typeof ZStagedImageSchema>;

export const ZPromotionSchema = named(
  'Promotion',
  z.object({
    timestamp: z.string().describe('busybox `date` text before the `postupdate:` marker'),
    message: z.string().describe('Text after the marker'),
  }),
);
export type TPromotion = z.infer<typeof ZPromotionSchema>;

export const ZPromotionHistorySchema = named(
  'PromotionHistory',
  z.object({
    attempts: z.number().int().nonnegative().describe('Tentative boots'),
    promoted: z.number().int().nonnegative().describe('Attempts minus rollbacks, at least 0'),
    rolled_back: z.number().int().nonnegative().describe('Rollbacks'),
  }),
);
export type TPromotionHistory = z.infer<typeof ZPromotionHistorySchema>;

/** GET /firmware/slots. */
export const ZFirmwareSlotsSchema = named(
  'FirmwareSlots',
  z.object({
    present: z.boolean().describe('Whether the UBI device exists'),
    running: ZSlotSchema.nullable().describe('The slot the board booted from'),
    rollback: ZSlotSchema.nullable().describe('The slot a rollback would land on, when it can be named'),
    update_staged: z
      .boolean()
      .nullable()
      .describe('Whether an update is staged; null when the boot-loader environment cannot be read'),
    nextboot: z.string().nullable().describe('Raw next-boot variable when set'),
    last_promotion: ZPromotionSchema.nullable().describe('Last line of the promotion log; null without a log'),
    staged: ZStagedImageSchema.nullable().describe('The staged note; null when there is none'),
    promotion_history: ZPromotionHistorySchema.optional().describe('Promotion gate totals; omitted without a log'),
  }),
);
export type TFirmwareSlots = z.infer<typeof ZFirmwareSlotsSchema>;

/** 200 body of POST /firmware/install. */
export const ZInstallResultSchema = named(
  'InstallResult',
  z.object({
    source: z.string().describe('Source id'),
    staged: z.string().describe('Version staged for the next boot'),
  }),
);
export type TInstallResult = z.infer<typeof ZInstallResultSchema>;
