import { z } from 'zod';

export const ZHottestSchema = z
  .object({
    sensor: z.string(),
    temperature_c: z.number(),
    warning_c: z
      .number()
      .nullable()
      .describe('Its highest active trip point (the thermal_warning rule fires above it); null when none'),
    critical_c: z
      .number()
      .nullable()
      .describe('Its hot trip point (the thermal_critical rule fires above it); null when none'),
  })
  .meta({ id: 'HottestSensor' });

export const ZBoardTileSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    slot: z.number().int().nullable(),
    state: z.string(),
    state_since: z.string(),
    firmware_version: z.string().nullable(),
    last_success_at: z.string().nullable(),
    hottest: ZHottestSchema.nullable().describe('The hottest sensor of the latest poll; null before one'),
  })
  .meta({ id: 'BoardTile' });

export const ZOverviewSchema = z
  .object({
    total: z.number().int(),
    counts: z.record(z.string(), z.number().int()).describe('Boards in service by state'),
    racks: z.array(
      z.object({
        rack: z.string().nullable().describe('null: boards registered without a rack'),
        boards: z.array(ZBoardTileSchema),
      }),
    ),
  })
  .meta({ id: 'FleetOverview' });
export type TOverview = z.infer<typeof ZOverviewSchema>;
export type TBoardTile = z.infer<typeof ZBoardTileSchema>;
