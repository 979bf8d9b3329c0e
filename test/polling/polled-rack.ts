// A simulated rack polled by the fleet manager as production runs it: an api process and N worker processes (the
// built entry point) on a database of their own, real PostgreSQL and Redis. For the polling e2e tests that watch
// the board rows change under real workers (faulty-rack, handed-off).
import pg from 'pg';
import { apiClient } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { fleetEnv, startFleetProcess, type FleetProcess } from '../support/fleet-process.js';

export interface PolledRack {
  rack: RackProcess;
  db: TestDatabase;
  /** A connection of the test's own to the fleet's database (triggers, direct reads). */
  sql: pg.Client;
  /** The api process first, then the workers. */
  fleet: FleetProcess[];
  api: ReturnType<typeof apiClient>;
  stop(): Promise<void>;
}

/**
 * Starts the rack and the database, runs `prepare` (faults, triggers) before any fleet process exists, then starts
 * the api and `workers` worker processes with these settings. On a failure part-way, what was started is stopped.
 */
export async function startPolledRack(options: {
  boards: number;
  redisUrl: string;
  settings: Record<string, string>;
  workers: number;
  prepare?: (rack: RackProcess, sql: pg.Client) => Promise<void>;
}): Promise<PolledRack> {
  const started: Partial<PolledRack> & { fleet: FleetProcess[] } = { fleet: [] };
  const stop = async () => {
    for (const f of started.fleet) {
      await f.stop();
    }
    await started.sql?.end();
    await started.db?.drop();
    await started.rack?.stop();
  };
  try {
    started.rack = await startRack(options.boards);
    started.db = await createTestDatabase();
    started.sql = new pg.Client({ connectionString: started.db.url });
    await started.sql.connect();
    await options.prepare?.(started.rack, started.sql);
    const env = fleetEnv(started.db, options.redisUrl, options.settings);
    started.fleet.push(await startFleetProcess('api', env));
    for (let n = 0; n < options.workers; n++) {
      started.fleet.push(await startFleetProcess('worker', env));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const { rack, db, sql, fleet } = started as Required<typeof started>;
  return { rack, db, sql, fleet, api: apiClient(fleet[0]!.url), stop };
}
