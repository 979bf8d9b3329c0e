import { z } from 'zod';

/**
 * Faults a test can inject into one simulated board (control API, outside /api/bmc). POST merges into the current
 * set, DELETE clears all of them (and restores the rack's password).
 */
export const ZFaultsSchema = z
  .object({
    /** Delay before every API answer. */
    latencyMs: z.number().int().min(0).max(600_000),
    /**
     * Extra delay of the requests whose path below the board starts with a key (e.g. `/api/bmc/firmware/check`):
     * one slow operation, like an update check waiting on a board's missing uplink, while the rest answer at once.
     */
    pathLatencyMs: z.record(z.string().startsWith('/').max(200), z.number().int().min(0).max(600_000)),
    /**
     * The latency faults (latencyMs, pathLatencyMs) lapse once they have delayed this many answers: a board that met
     * one busy moment and then answers at once again.
     */
    lapseAfter: z.number().int().min(1).max(1_000_000),
    /** Share of API requests answered 500 before reaching the board (0..1). */
    errorRate: z.number().min(0).max(1),
    /**
     * Pad JSON answers with trailing whitespace to this many bytes (valid JSON still): a daemon dumping far more than
     * asked, which a client must refuse to buffer without bound.
     */
    padBodyBytes: z
      .number()
      .int()
      .min(0)
      .max(256 * 1024 * 1024),
    /** Send answer bodies at this many bytes a second (a congested link, a daemon stalling mid-write). */
    bodyBytesPerSecond: z.number().int().min(1).max(1_000_000_000),
    /** Reset the connection after this many bytes of each answer's body (the daemon crashing mid-answer). */
    resetAfterBytes: z
      .number()
      .int()
      .min(0)
      .max(256 * 1024 * 1024),
    /** Destroy every connection without answering (the board is off the network). */
    unreachable: z.boolean(),
    /** The board's temperature climbs at this rate whatever the fan does; null stops it. */
    thermalRunaway: z
      .object({ ratePerMinute: z.number().min(0).max(1000) })
      .strict()
      .nullable(),
    /** The firmware promotion gate rolls the next staged image back (issue 4 firmware flow). */
    gateFail: z.boolean(),
    /** New password of the board's root account (the clear text is not kept; only its hash). */
    password: z.string().min(1).max(256),
  })
  .partial()
  .strict();
export type TFaults = z.infer<typeof ZFaultsSchema>;

/** Hooks a backend may offer for faults that live inside the hardware model; missing hooks are reported, not faked. */
export interface FaultHooks {
  injectThermalRunaway?(options: { ratePerMinute: number }): void;
  /** Clears every hardware-model fault (the simulated board's thermal runaway). */
  clearFaults?(): void;
  setGateFail?(fail: boolean): void;
}

/** Faults as reported back: the password is never echoed. */
export function describeFaults(faults: TFaults): Record<string, unknown> {
  const { password, ...rest } = faults;
  return { ...rest, passwordChanged: password !== undefined };
}
