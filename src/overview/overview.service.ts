import { Injectable } from '@nestjs/common';
import { ZThermalSchema } from '@tpfleet/board-api';
import { derivedThreshold } from '../alerts/conditions.js';
import type { TBoardTile, TOverview } from './overview.dto.js';
import { OverviewRepository, type TileRow } from './overview.repository.js';

/** The hottest present sensor of a /thermal reading, with the trip points the default thermal rules alert on. */
export function hottestSensor(thermal: unknown): TBoardTile['hottest'] {
  const parsed = ZThermalSchema.safeParse(thermal);
  if (!parsed.success) {
    return null;
  }
  let best: TBoardTile['hottest'] = null;
  for (const s of parsed.data.sensors) {
    if (s.temperature_c === null || (best && best.temperature_c >= s.temperature_c)) {
      continue;
    }
    best = {
      sensor: s.name,
      temperature_c: s.temperature_c,
      warning_c: derivedThreshold(s, 'trip_active'),
      critical_c: derivedThreshold(s, 'trip_hot'),
    };
  }
  return best;
}

function tile(row: TileRow): TBoardTile {
  return {
    id: row.id,
    name: row.name,
    slot: row.slot,
    state: row.state,
    state_since: row.stateSince.toISOString(),
    firmware_version: row.firmwareVersion,
    last_success_at: row.lastSuccessAt?.toISOString() ?? null,
    hottest: hottestSensor(row.thermal),
  };
}

/** The console's one-look view of the fleet: counts by state and every rack as a grid of tiles. */
@Injectable()
export class OverviewService {
  constructor(private readonly repository: OverviewRepository) {}

  async overview(): Promise<TOverview> {
    const rows = await this.repository.tiles();
    const counts: Record<string, number> = {};
    const racks = new Map<string | null, TBoardTile[]>();
    for (const row of rows) {
      counts[row.state] = (counts[row.state] ?? 0) + 1;
      const list = racks.get(row.rack) ?? [];
      list.push(tile(row));
      racks.set(row.rack, list);
    }
    return {
      total: rows.length,
      counts,
      racks: [...racks].map(([rack, boards]) => ({ rack, boards })),
    };
  }
}
