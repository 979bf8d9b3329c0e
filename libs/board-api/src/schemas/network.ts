import { z } from 'zod';
import { ZClockSchema } from './health.js';
import { named } from './registry.js';

const counter = () => z.number().int().nonnegative().nullable();

/** Element of Network.ports: always six, node1..node4 then ge0, ge1. */
export const ZSwitchPortSchema = named(
  'SwitchPort',
  z.object({
    name: z.string().describe('Interface name (`node1`..`node4`, `ge0`, `ge1`)'),
    kind: z.enum(['node', 'uplink']).describe('`node` for node ports, `uplink` for ge0/ge1'),
    present: z.boolean().describe('Whether the interface exists; when false every other field is null'),
    link: z.boolean().nullable().describe('Carrier; null when unreadable'),
    operstate: z.string().nullable().describe('Kernel operstate verbatim'),
    speed_mbps: z.number().int().positive().nullable().describe('Link speed; null without link'),
    duplex: z.string().nullable().describe('`full` or `half`; null when unknown'),
    rx_bytes: counter().describe('Received bytes'),
    tx_bytes: counter().describe('Transmitted bytes'),
    rx_errors: counter().describe('Receive errors'),
    tx_errors: counter().describe('Transmit errors'),
  }),
);
export type TSwitchPort = z.infer<typeof ZSwitchPortSchema>;

/** GET /network. */
export const ZNetworkSchema = named(
  'Network',
  z.object({ ports: z.array(ZSwitchPortSchema).describe('The six switch ports, in fixed order') }),
);
export type TNetwork = z.infer<typeof ZNetworkSchema>;

/** GET /ntp (2.36.3 shape; later builds add `sources`, accepted and ignored). */
export const ZNtpSchema = named(
  'Ntp',
  z.object({
    servers: z.array(z.string()).describe('Configured servers; empty means the image default pool'),
    configurable: z.boolean().describe('False when chrony lacks the sourcedir line, so a saved list has no effect'),
    clock: ZClockSchema.describe('Same as Health.clock'),
  }),
);
export type TNtp = z.infer<typeof ZNtpSchema>;
