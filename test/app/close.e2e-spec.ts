// app.close() must release the database: afterwards no connection of the app is left (the test support drops the
// database with FORCE right after, and a connection terminated under a running query used to crash the process).
// The clocks tick four times a second here: a tick during the close used to reopen a queue (and its pool) that had
// just been closed, or query through Prisma after its disconnect, and leave those connections open.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { apiClient, waitFor } from '../boards/api.js';
import { startTestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { testEnv, withDatabase } from '../support/env.js';

// pg_stat_activity needs a PostgreSQL server (the in-memory PGlite has no sessions to list).
const describeOnServer = testEnv.databaseUrl === null ? describe.skip : describe;

describeOnServer('closing the app (queues in PostgreSQL)', () => {
  let db: TestDatabase;
  let admin: pg.Client;
  let dbName: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    dbName = new URL(db.url).pathname.slice(1);
    admin = new pg.Client({ connectionString: withDatabase(db.url, 'postgres') });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await db?.drop();
  });

  const sessions = async () =>
    (
      await admin.query<{ application_name: string; state: string; query: string }>(
        'SELECT application_name, state, query FROM pg_stat_activity WHERE datname = $1',
        [dbName],
      )
    ).rows;

  it('leaves no connection to the database behind while its clocks were ticking', async () => {
    const app = await startTestApp({ db, env: { POLL_INTERVAL_SECONDS: '1' } });
    const api = apiClient(app.baseUrl);
    // A board to claim: nothing answers at this address, which the scheduler does not know (it never calls boards).
    const created = await api('POST', '/api/v1/boards', {
      name: 'b1',
      base_url: 'http://127.0.0.1:9',
      credentials: { username: 'root', password: 'turing' },
    });
    expect(created.status).toBe(201);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await sessions()).length).toBeGreaterThan(0);

    await app.close();

    // A closed session leaves pg_stat_activity when its server process has exited, a moment after the client hung up
    // (longer on a loaded machine); then nothing the app left running may connect again.
    await waitFor('the sessions to end', sessions, (rows) => rows.length === 0, 5000, 100).catch(() => undefined);
    expect(await sessions()).toEqual([]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await sessions()).toEqual([]);
  }, 60_000);
});
