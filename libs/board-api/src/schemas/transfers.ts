import { z } from 'zod';
import { named } from './registry.js';

/**
 * Records of the daemon extensions (operations real clients use that the seed's 38-operation contract leaves out).
 * Their shapes are the daemon's own, because BMC-UI and tpi parse them.
 */

/** `opt=set&type=flash|firmware` answers this bare (no legacy envelope); `id` of the transfer state equals it. */
export const ZTransferHandleSchema = named(
  'TransferHandle',
  z.object({ handle: z.number().int().nonnegative().describe('Upload to POST /api/bmc/upload/{handle}') }),
);
export type TTransferHandle = z.infer<typeof ZTransferHandleSchema>;

const ZDurationSchema = z.object({ secs: z.number().int().nonnegative(), nanos: z.number().int().nonnegative() });

export const ZTransferringSchema = z.object({
  id: z.number().int().nonnegative().describe('The handle'),
  process_name: z.string().describe('`Node N os install service` or `firmware upgrade service`'),
  size: z.number().int().nonnegative().describe('The announced `length` in bytes'),
  cancelled: z.boolean(),
  bytes_written: z.number().int().nonnegative().describe('Bytes written to the target so far'),
});
export type TTransferring = z.infer<typeof ZTransferringSchema>;

/**
 * The transfer state as serde serialises the daemon's enum: the string `Ready`, or an object with exactly one of
 * `Transferring`, `Done` ([duration, bytes]) and `Error` (the message). Answered bare, in both spellings.
 */
export const ZTransferStateSchema = named(
  'TransferState',
  z.union([
    z.literal('Ready'),
    z.object({ Transferring: ZTransferringSchema }).strict(),
    z.object({ Done: z.tuple([ZDurationSchema, z.number().int().nonnegative()]) }).strict(),
    z.object({ Error: z.string() }).strict(),
  ]),
);
export type TTransferState = z.infer<typeof ZTransferStateSchema>;

/** `get`/`other`: the deprecated duplicate of About that `tpi info` prints; every value a string. */
export const ZOtherSchema = named(
  'Other',
  z.object({
    api: z.string(),
    buildtime: z.string(),
    ip: z.string().describe('IPv4 address of br0, or `Unknown`'),
    mac: z.string().describe('MAC address of br0, or `Unknown`'),
    buildroot: z.string(),
    version: z.string(),
  }),
);
export type TOther = z.infer<typeof ZOtherSchema>;
export const ZOtherListSchema = z.array(ZOtherSchema).length(1).describe('Exactly one object');

/** `get`/`uart`: the node's whole serial ring buffer (reading does not drain it); legacy key `uart`. */
export const ZUartTextSchema = z.string().describe('Console output of the node, oldest first');

/** `get`/`usb_node1`: whether node 1's USB goes to the board's USB-A port (v2.5+). */
export const ZUsbNode1Schema = z.boolean().describe('true: node 1 on the alternative (USB-A) port');
