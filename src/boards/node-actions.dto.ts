import { z } from 'zod';
import { BOARD_STATES } from './boards.dto.js';

/** Bulk actions touch at most this many boards (one job each). */
export const MAX_BULK_BOARDS = 10_000;

export const NODE_ACTIONS = ['power_on', 'power_off', 'reset', 'usb_mode', 'usb_boot'] as const;
export type NodeActionName = (typeof NODE_ACTIONS)[number];

const ZNodeSchema = z.coerce.number().int().min(1, { error: 'nodes are 1-4' }).max(4, { error: 'nodes are 1-4' });

const ZUsbParamsSchema = z.strictObject({
  mode: z.enum(['Host', 'Device', 'Flash']).describe('USB role of the node'),
  route: z.enum(['Bmc', 'AlternativePort']).default('AlternativePort').describe('Where the bus is routed'),
});

const actionFields = {
  action: z.enum(NODE_ACTIONS).describe('What to do to the node(s)'),
  usb: ZUsbParamsSchema.optional().describe('Required for usb_mode'),
};

function requireUsb(v: { action: NodeActionName; usb?: unknown }, ctx: z.RefinementCtx): void {
  if (v.action === 'usb_mode' && v.usb === undefined) {
    ctx.addIssue({ code: 'custom', path: ['usb'], message: 'usb_mode needs usb.mode (and optionally usb.route)' });
  }
}

export const ZNodeParamsSchema = z.object({
  id: z.uuid({ error: 'expected a board id (uuid)' }),
  node: ZNodeSchema.describe('Node 1-4 (fleet numbering; translated per dialect)'),
});

export const ZNodeActionSchema = z.strictObject(actionFields).superRefine(requireUsb).meta({ id: 'NodeAction' });
export type TNodeAction = z.infer<typeof ZNodeActionSchema>;

export const ZBulkNodeActionSchema = z
  .strictObject({
    ...actionFields,
    selector: z.string().max(1024).describe('Label selector of the boards, e.g. rack=r1,role!=spare ("" = all)'),
    nodes: z.array(ZNodeSchema).min(1).max(4).describe('Nodes on each board'),
    dry_run: z.boolean().default(false).describe('List the boards and nodes it would touch, send nothing'),
    // The console's bulk selection: boards ticked one by one, or "all matching" the boards page's other filters.
    board_ids: z
      .array(z.uuid({ error: 'expected a board id (uuid)' }))
      .min(1)
      .max(MAX_BULK_BOARDS)
      .optional()
      .describe('Only these boards (of those the other filters match)'),
    states: z
      .array(z.enum(BOARD_STATES))
      .min(1)
      .max(BOARD_STATES.length)
      .optional()
      .describe('Only boards in these states'),
    q: z.string().max(128).optional().describe('Free text over name, base URL, rack, notes, serial (as GET /boards)'),
  })
  .superRefine(requireUsb)
  .meta({ id: 'BulkNodeAction' });
export type TBulkNodeAction = z.infer<typeof ZBulkNodeActionSchema>;

export const ZActionIdParamSchema = z.object({ id: z.uuid({ error: 'expected an action id (uuid)' }) });

export const ZBulkPlanEntrySchema = z.object({
  board_id: z.uuid(),
  name: z.string(),
  dialect: z.string().nullable(),
  version: z.string().nullable(),
  nodes: z.array(z.number().int()),
  status: z
    .string()
    .describe('dry run: will_run | refused; otherwise pending | running | succeeded | failed | refused | cancelled'),
  error: z.string().nullable(),
});

export const ZBulkActionResultSchema = z
  .object({
    id: z.uuid().nullable().describe('null for a dry run'),
    action: z.enum(NODE_ACTIONS),
    selector: z.string().nullable(),
    dry_run: z.boolean(),
    created_at: z.string().nullable(),
    summary: z.record(z.string(), z.number().int()),
    boards: z.array(ZBulkPlanEntrySchema),
  })
  .meta({ id: 'BulkNodeActionResult' });

export const ZBoardIdParamSchema = z.object({ id: z.uuid({ error: 'expected a board id (uuid)' }) });

export const ZNodePowerStateSchema = z
  .object({
    board_id: z.uuid(),
    nodes: z.array(
      z.object({
        node: z.number().int().describe('1-4'),
        power: z.enum(['on', 'off', 'unknown']).describe('unknown: the board could not read its power store'),
      }),
    ),
  })
  .meta({ id: 'NodePowerState' });

export const ZUsbRoutingSchema = z
  .object({
    board_id: z.uuid(),
    node: z.number().int().describe('The node (1-4) the USB bus is connected to'),
    mode: z.enum(['Host', 'Device', 'Flash']).describe("That node's USB role"),
    route: z.enum(['Bmc', 'AlternativePort']).describe('Where the bus is routed: the BMC or the USB-A port'),
    bus_type: z.enum(['Usb hub', 'Single bus']),
  })
  .meta({ id: 'UsbRouting' });

export const ZNodeActionResultSchema = z
  .object({
    board_id: z.uuid(),
    node: z.number().int(),
    action: z.enum(NODE_ACTIONS),
    status: z.literal('succeeded').describe('A refusal or failure is a problem+json answer instead'),
  })
  .meta({ id: 'NodeActionResult' });
