import { z } from 'zod';
import { named } from './registry.js';

const count = () => z.number().int().nonnegative();

export const ZRtcSchema = named(
  'Rtc',
  z.object({
    device: z.string().describe('Device name, e.g. `rtc0`'),
    name: z.string().nullable().describe('Driver name, e.g. `sun6i-rtc`; null when unreadable'),
  }),
);
export type TRtc = z.infer<typeof ZRtcSchema>;

/** Health.clock and Ntp.clock: every field but `rtc` always present and nullable. */
export const ZClockSchema = named(
  'Clock',
  z.object({
    rtc: z.array(ZRtcSchema).describe('Every RTC device, sorted by name; may be empty'),
    synchronised: z.boolean().nullable().describe('Whether chrony is synchronised; null when chronyc gave nothing'),
    source: z.string().nullable().describe('Reference source name (or hex id); null for an all-zero id'),
    stratum: count().nullable().describe('NTP stratum'),
    offset_seconds: z.number().nullable().describe('System clock minus true time; negative means slow'),
    measured_by: z.string().nullable().describe('`chronyc tracking` when chrony answered, else null'),
  }),
);
export type TClock = z.infer<typeof ZClockSchema>;

export const ZLoadSchema = named(
  'Load',
  z.object({
    present: z.boolean().describe('Whether /proc/loadavg was readable'),
    one_minute: z.number().nullable().describe('1-minute load average'),
    five_minutes: z.number().nullable().describe('5-minute load average'),
    fifteen_minutes: z.number().nullable().describe('15-minute load average'),
  }),
);
export type TLoad = z.infer<typeof ZLoadSchema>;

export const ZMemorySchema = named(
  'Memory',
  z.object({
    present: z.boolean().describe('Whether /proc/meminfo was readable'),
    total_bytes: count().nullable().describe('MemTotal in bytes'),
    free_bytes: count().nullable().describe('MemFree in bytes'),
    available_bytes: count().nullable().describe('MemAvailable in bytes; not derived when missing'),
    self_resident_bytes: count().nullable().describe('Resident set size of the daemon'),
    self_threads: count().nullable().describe('Threads of the daemon'),
  }),
);
export type TMemory = z.infer<typeof ZMemorySchema>;

export const ZNandSchema = named(
  'Nand',
  z.object({
    present: z.boolean().describe('Whether the UBI device ubi0 exists'),
    total_eraseblocks: count().nullable().describe('Logical eraseblocks'),
    available_eraseblocks: count().nullable().describe('Available eraseblocks'),
    bad_eraseblocks: count().nullable().describe('Bad physical eraseblocks'),
    reserved_eraseblocks: count().nullable().describe('Eraseblocks reserved for bad-block handling'),
    eraseblock_size_bytes: count().nullable().describe('Eraseblock size'),
    available_bytes: count().nullable().describe('available_eraseblocks × eraseblock_size'),
  }),
);
export type TNand = z.infer<typeof ZNandSchema>;

/** GET /health: always 200. */
export const ZHealthSchema = named(
  'Health',
  z.object({
    clock: ZClockSchema.describe('Time keeping'),
    load: ZLoadSchema.describe('Load averages'),
    memory: ZMemorySchema.describe('Memory of the controller and of the daemon'),
    nand: ZNandSchema.describe('Flash wear'),
    uptime_seconds: z
      .number()
      .nonnegative()
      .nullable()
      .describe('Seconds since the management controller booted; not the uptime of any compute module'),
  }),
);
export type THealth = z.infer<typeof ZHealthSchema>;
