import { z } from 'zod';
import { named } from './registry.js';

/** Element of GET /nodes: all four keys always present, null when unset. */
export const ZNodeInfoSchema = named(
  'NodeInfo',
  z.object({
    name: z.string().nullable().describe('User label of the node, null when unset'),
    module_name: z.string().nullable().describe('User label of the module type, null when unset'),
    power_on_time: z
      .number()
      .int()
      .nonnegative()
      .nullable()
      .describe('Seconds since the daemon powered the node on; null while the node is off'),
    uart_baud: z.number().int().nonnegative().nullable().describe('Stored baud rate, null when unset'),
  }),
);
export type TNodeInfo = z.infer<typeof ZNodeInfoSchema>;

/** GET /nodes answers exactly four, index 0 for node 1. */
export const ZNodeInfoListSchema = z.array(ZNodeInfoSchema).length(4).describe('Nodes 1 to 4, in order');

const powerValue = z.enum(['0', '1', 'Unknown']).describe('`1` on, `0` off, `Unknown` when the store cannot be read');

/** Element of GET /power: the persisted power bitmask, keys 1-based in both wire forms. */
export const ZNodePowerSchema = named(
  'NodePower',
  z.object({ node1: powerValue, node2: powerValue, node3: powerValue, node4: powerValue }),
);
export type TNodePower = z.infer<typeof ZNodePowerSchema>;
export const ZNodePowerListSchema = z.array(ZNodePowerSchema).length(1).describe('Exactly one object');

export const ZUsbModeSchema = z.enum(['Host', 'Device', 'Flash']);
export type TUsbMode = z.infer<typeof ZUsbModeSchema>;
/** Only two routes exist; "a node" appears only in prose. */
export const ZUsbRouteSchema = z.enum(['Bmc', 'AlternativePort']);
export type TUsbRoute = z.infer<typeof ZUsbRouteSchema>;

/** Element of GET /usb, derived from the persisted USB configuration. */
export const ZUsbStateSchema = named(
  'UsbState',
  z.object({
    mode: ZUsbModeSchema.describe('Host, Device or Flash'),
    route: ZUsbRouteSchema.describe('Where the bus is routed: the BMC or the alternative (USB-A) port'),
    node: z
      .string()
      .regex(/^Node [1-4]$/)
      .describe('Display label `Node <n>`, 1-based'),
    bus_type: z.enum(['Usb hub', 'Single bus']).describe('`Usb hub` on v2.5+ boards, `Single bus` on v2.4 boards'),
  }),
);
export type TUsbState = z.infer<typeof ZUsbStateSchema>;
export const ZUsbStateListSchema = z.array(ZUsbStateSchema).length(1).describe('Exactly one object');

/** One node's patch in the legacy-only `POST ?opt=set&type=node_info` body. */
export const ZNodeInfoPatchSchema = z.object({
  name: z.string().nullable().optional().describe('New label; absent or null leaves it unchanged'),
  module_name: z.string().nullable().optional().describe('New module label; absent or null leaves it unchanged'),
  uart_baud: z.number().int().nonnegative().nullable().optional().describe('New baud; absent or null leaves it'),
});
export type TNodeInfoPatch = z.infer<typeof ZNodeInfoPatchSchema>;

/** JSON body of `POST /api/bmc?opt=set&type=node_info`: keys `Node1`..`Node4`, all optional. */
export const ZLegacyNodeInfoBodySchema = named(
  'LegacyNodeInfoBody',
  z.object({
    Node1: ZNodeInfoPatchSchema.optional(),
    Node2: ZNodeInfoPatchSchema.optional(),
    Node3: ZNodeInfoPatchSchema.optional(),
    Node4: ZNodeInfoPatchSchema.optional(),
  }),
);
export type TLegacyNodeInfoBody = z.infer<typeof ZLegacyNodeInfoBodySchema>;
