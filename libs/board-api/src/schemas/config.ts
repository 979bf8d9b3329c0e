import { z } from 'zod';
import { ZSourcesInputSchema } from './firmware.js';
import { named } from './registry.js';

/** ConfigExport.exported_from: every key omitted when unknown; ignored on import. */
export const ZExportOriginSchema = named(
  'ExportOrigin',
  z.object({
    hostname: z.string().optional().describe('Live hostname at export time'),
    board_serial: z.string().optional().describe('Factory serial'),
    firmware: z.string().optional().describe('Running firmware version'),
  }),
);
export type TExportOrigin = z.infer<typeof ZExportOriginSchema>;

/** Element of ConfigExport.nodes: `id` is 1-based; the others omitted when null. */
export const ZNodeSettingsSchema = named(
  'NodeSettings',
  z.object({
    id: z.number().int().min(1).max(255).describe('1-based node number (1-4 are imported)'),
    name: z.string().optional().describe('User label for the node'),
    module_name: z.string().optional().describe('User label for the module type'),
    uart_baud: z.number().int().nonnegative().optional().describe('Stored baud rate'),
  }),
);
export type TNodeSettings = z.infer<typeof ZNodeSettingsSchema>;

/** GET /config, and the document POST /config imports. */
export const ZConfigExportSchema = named(
  'ConfigExport',
  z.object({
    format_version: z.number().int().nonnegative().describe('Always 1; import refuses any other value'),
    exported_at: z.string().describe('UTC `YYYY-MM-DDTHH:MM:SSZ`; required on import, value ignored'),
    exported_from: ZExportOriginSchema.describe('Required on import, contents ignored'),
    hostname: z.string().optional().describe('Live hostname; omitted when unreadable'),
    ntp_servers: z
      .array(z.string())
      .optional()
      .describe('Configured time servers in preference order; omitted when none are configured'),
    firmware_sources: ZSourcesInputSchema.optional().describe('The stored (or default) firmware sources'),
    nodes: z.array(ZNodeSettingsSchema).optional().describe('Node labels; 4 entries when present'),
  }),
);
export type TConfigExport = z.infer<typeof ZConfigExportSchema>;

/** 200 body of POST /config: per-field outcome of a non-transactional import. */
export const ZImportReportSchema = named(
  'ImportReport',
  z.object({
    applied: z.array(z.string()).describe('What was applied, e.g. `hostname tp1`'),
    skipped: z.array(z.string()).describe('What the document did not carry'),
    failed: z.array(z.string()).describe('What failed, with the reason'),
  }),
);
export type TImportReport = z.infer<typeof ZImportReportSchema>;
