// The setup of the tests that claim and write polls by hand against real PostgreSQL and Redis.
import pg from 'pg';
import type { PollWrite } from '../../src/polling/polling.repository.js';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { apiClient } from '../boards/api.js';
import { startTestApp, type TestApp } from '../support/app.js';

/** The scheduler's claim options these tests use: a 15 s interval, the slow lane hourly, a 40 s lease beyond it. */
export const CLAIM = { limit: 100, defaultIntervalSeconds: 15, slowIntervalSeconds: 3600, leaseExtraSeconds: 40 };

export interface OneBoardApp {
  app: TestApp;
  /** A session on the app's database, for reading and arranging rows. */
  sql: pg.Client;
  /** The one board, registered at a port that refuses (nothing polls it but the test). */
  id: string;
  close(): Promise<void>;
}

/** A fleet manager whose polling clock is stopped (the test claims by hand), with one board registered. */
export async function startOneBoardApp(redisUrl: string, name: string): Promise<OneBoardApp> {
  const app = await startTestApp({ redisUrl });
  app.app.get(PollingScheduler).enabled = false;
  const sql = new pg.Client({ connectionString: app.db.url });
  await sql.connect();
  const res = await apiClient(app.baseUrl)('POST', '/api/v1/boards/bulk', {
    boards: [{ name, base_url: 'http://127.0.0.1:9' }],
  });
  return {
    app,
    sql,
    id: res.body.items[0].id,
    async close() {
      await sql.end();
      await app.close();
    },
  };
}

/** A successful poll of the board under `lease`, polled at `polledAt`, that found it `state` (one state event). */
export function pollWrite(boardId: string, lease: number, polledAt: Date, state = 'online'): PollWrite {
  return {
    boardId,
    lease,
    lagging: false,
    credentialVersion: 1,
    polledAt,
    succeeded: true,
    state,
    stateChanged: true,
    stateReason: null,
    consecutiveFailures: 0,
    nextPollAt: null,
    bannedUntil: null,
    aboutDue: false,
    noAnswer: false,
    reading: { health: { uptime_seconds: 1 } },
    thermalSamples: [{ sensor: 'cpu', temperatureC: 40 }],
    events: [{ kind: 'state', summary: `x → ${state}` }],
    attention: false,
  };
}
