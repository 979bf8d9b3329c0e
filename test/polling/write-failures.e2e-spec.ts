// A poll's write that fails, against real PostgreSQL. The poll's write and the slow lane's write lock the same boards'
// rows in different orders, and PostgreSQL aborts one of them now and then ("deadlock detected"): the poll's results
// were lost, and its boards stayed leased, unpolled, until the lease ran out (interval + 8 request timeouts). In
// test/polling/faulty-rack.e2e-spec.ts a batch of healthy boards went 20-28 s without a poll at a 2 s interval.
// Now a deadlocked statement runs again; and a write that fails for good gives its batch's leases back.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { PollingRepository } from '../../src/polling/polling.repository.js';
import { PollingWorker } from '../../src/polling/polling.worker.js';
import { waitFor } from '../boards/api.js';
import type { TestApp } from '../support/app.js';
import { testEnv } from '../support/env.js';
import { requireRedis } from '../support/redis.js';
import { CLAIM, pollWrite, startOneBoardApp, type OneBoardApp } from './one-board.js';

const redis = requireRedis();
// Two sessions that wait for each other need a PostgreSQL server (the in-memory PGlite serves one at a time).
const withServer = testEnv.databaseUrl ? it : it.skip;

redis.describe('a poll write that fails', () => {
  let fixture: OneBoardApp;
  let app: TestApp;
  let sql: pg.Client;
  let id: string;

  beforeAll(async () => {
    fixture = await startOneBoardApp(redis.url, 'deadlocked');
    ({ app, sql, id } = fixture);
  }, 60_000);

  afterAll(async () => {
    await fixture?.close();
  });

  const claim = async () => {
    await sql.query(
      `UPDATE "BoardSchedule" SET "pollLeaseUntil" = NULL, "nextPollAt" = now() - interval '1 s' WHERE "boardId" = $1`,
      [id],
    );
    const [claimed] = (await app.app.get(PollingRepository).claimDue(CLAIM))!;
    expect(claimed).toMatchObject({ id });
    return claimed!.lease;
  };
  const state = async () =>
    (
      await sql.query<{ polled: Date | null; until: Date | null }>(
        `SELECT "lastPolledAt" AS polled, "pollLeaseUntil" AS until
         FROM "Board" b JOIN "BoardSchedule" s ON s."boardId" = b."id" WHERE "id" = $1`,
        [id],
      )
    ).rows[0]!;

  describe('deadlocked with another writer', () => {
    withServer(
      'runs its statement again and writes the poll',
      async () => {
        const lease = await claim();
        await sql.query(`INSERT INTO "BoardReading" ("boardId") VALUES ($1) ON CONFLICT DO NOTHING`, [id]);
        // Another writer (as the slow lane's write does) holds the board's reading row, and will want its schedule row.
        // It waits 60 s before it looks for a deadlock, so PostgreSQL aborts the poll's statement, never this one.
        const other = new pg.Client({ connectionString: app.db.url });
        await other.connect();
        try {
          await other.query('BEGIN');
          await other.query(`SET LOCAL deadlock_timeout = '60s'`);
          await other.query(`UPDATE "BoardReading" SET "uptimeSeconds" = 7 WHERE "boardId" = $1`, [id]);
          // The poll's statement takes the schedule and board rows, then waits for the reading row.
          const polledAt = new Date();
          const written = app.app.get(PollingRepository).applyPolls([pollWrite(id, lease, polledAt)]);
          const outcome = written.then(
            () => 'written',
            (err: unknown) => (err instanceof Error ? err.message : String(err)),
          );
          await waitFor(
            'the poll to wait for the reading row',
            async () =>
              (
                await sql.query<{ n: number }>(
                  `SELECT count(*)::int AS n FROM pg_stat_activity
                 WHERE datname = current_database() AND wait_event_type = 'Lock'`,
                )
              ).rows[0]!.n,
            (n) => n >= 1,
            10_000,
            20,
          );
          // The other writer now wants the schedule row the poll holds: a cycle, which PostgreSQL breaks after its
          // deadlock_timeout (1 s) by aborting the poll's statement. This update then goes through.
          await other.query(`UPDATE "BoardSchedule" SET "aboutDue" = "aboutDue" WHERE "boardId" = $1`, [id]);
          await other.query('COMMIT');
          expect(await outcome).toBe('written');
          expect(await state()).toEqual({ polled: polledAt, until: null });
        } finally {
          await other.query('ROLLBACK').catch(() => undefined);
          await other.end();
        }
      },
      30_000,
    );
  });

  it('gives the batch its leases back when its write fails for good, so the boards are polled at their next slot', async () => {
    const lease = await claim();
    expect((await state()).until).not.toBeNull();
    // Every write of this board's poll fails (as one would with its statement refused).
    await sql.query(`
      CREATE FUNCTION refuse_poll_write() RETURNS trigger AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql;
      CREATE TRIGGER refuse_poll_write BEFORE UPDATE OF "lastPolledAt" ON "Board"
        FOR EACH ROW EXECUTE FUNCTION refuse_poll_write();`);
    try {
      const worker = app.app.get(PollingWorker);
      await expect(worker.pollBatch({ boards: [{ id, slow: false, lease }] })).rejects.toThrow('refused by the test');
      expect((await state()).until).toBeNull();
    } finally {
      await sql.query(`DROP TRIGGER refuse_poll_write ON "Board"; DROP FUNCTION refuse_poll_write();`);
    }
  });
});
