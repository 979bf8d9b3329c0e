import { z } from 'zod';
import { named } from './registry.js';

const aboutCommon = {
  api: z.string().describe('Version of the /api/bmc contract (`1.1`); not a release of anything'),
  board_model: z.string().describe('EEPROM ProductName; empty string when the EEPROM cannot be read'),
  board_revision: z.string().describe('EEPROM HwVersion; empty string when the EEPROM cannot be read'),
  board_serial: z
    .string()
    .nullable()
    .optional()
    .describe('EEPROM FactorySerial; null when missing or blank after trimming'),
  build_version: z.string().describe('Daemon version, duplicated because the web interface reads this key'),
  buildroot: z.string().describe('BUILDROOT_VERSION, else PRETTY_NAME, else `unknown`'),
  buildtime: z.string().describe('Compile time, `YYYY-MM-DD HH:MM:SS-00:00`'),
  hostname: z.string().describe('Live hostname, or an empty string'),
  kernel: z.string().describe('Running kernel release; `unknown` when it cannot be read'),
  version: z.string().describe('Firmware version from the OS release file; `unknown` when it cannot be read'),
};

/** GET /about as this project's agent answers it: `daemon_version`, equal to `build_version`. */
export const ZAboutSchema = named(
  'About',
  z.object({
    ...aboutCommon,
    daemon_version: z.string().describe('Version of the daemon (equal to build_version)'),
  }),
);
export type TAbout = z.infer<typeof ZAboutSchema>;

/** GET /about as the existing fork daemon answers it: `bmcd_version` instead of `daemon_version`. */
export const ZAboutForkSchema = z.object({
  ...aboutCommon,
  bmcd_version: z.string().describe('Version of the daemon (equal to build_version)'),
});
export type TAboutFork = z.infer<typeof ZAboutForkSchema>;

/**
 * `get`/`about` of upstream bmcd 2.3.x. Two generations: master has `bmcd_version` (daemon) and
 * `version` (OS); v2.3.4 has `version` (daemon) and `build_version` (OS). Neither has `kernel` or `board_serial`.
 */
export const ZAboutUpstreamSchema = z.object({
  api: z.string().describe('Contract version'),
  version: z.string().describe('master: OS VERSION; v2.3.4: daemon version'),
  bmcd_version: z.string().optional().describe('master only: daemon version'),
  build_version: z.string().optional().describe('v2.3.4 only: OS VERSION'),
  buildtime: z.string().optional().describe('Compile time'),
  buildroot: z.string().optional().describe('PRETTY_NAME'),
  board_model: z.string().optional().describe('Board model'),
  board_revision: z.string().optional().describe('Board revision'),
  hostname: z.string().optional().describe('Hostname'),
  kernel: z.string().optional().describe('Not sent by upstream'),
  board_serial: z.string().nullable().optional().describe('Not sent by upstream'),
});
export type TAboutUpstream = z.infer<typeof ZAboutUpstreamSchema>;

/** GET /hostname: both keys always present, possibly null. */
export const ZHostnameSchema = named(
  'Hostname',
  z.object({
    hostname: z.string().nullable().describe('The name currently in effect; null if it cannot be read'),
    on_next_boot: z.string().nullable().describe('The persisted name (/etc/hostname); null when the file is absent'),
  }),
);
export type THostname = z.infer<typeof ZHostnameSchema>;

/** Element of BoardInfo.ip: one per address (IPv4 and IPv6), loopback excluded. */
export const ZNetInfoSchema = named(
  'NetInfo',
  z.object({
    device: z.string().describe('Interface name'),
    ip: z.string().describe('Address text'),
    mac: z.string().describe('MAC address, or `Unknown`'),
  }),
);
export type TNetInfo = z.infer<typeof ZNetInfoSchema>;

/** Element of BoardInfo.storage. */
export const ZStorageInfoSchema = named(
  'StorageInfo',
  z.object({
    name: z.string().describe('`BMC` (root filesystem) or `SD card`'),
    total_bytes: z.number().int().nonnegative().describe('Blocks × fragment size'),
    bytes_free: z.number().int().nonnegative().describe('Free blocks × fragment size (free, not available)'),
  }),
);
export type TStorageInfo = z.infer<typeof ZStorageInfoSchema>;

/** GET /info. */
export const ZBoardInfoSchema = named(
  'BoardInfo',
  z.object({
    ip: z.array(ZNetInfoSchema).describe('Addresses of the non-loopback interfaces'),
    storage: z.array(ZStorageInfoSchema).describe('Root filesystem and, when a card exists, the SD card'),
  }),
);
export type TBoardInfo = z.infer<typeof ZBoardInfoSchema>;
