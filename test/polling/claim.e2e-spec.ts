// The scheduler's claim against real PostgreSQL: a claim moves each due board's next poll on; firmware reads are
// claimed only while the slow lane keeps up, and otherwise stay due for a later tick instead of being skipped.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { PollingRepository } from '../../src/polling/polling.repository.js';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { apiClient } from '../boards/api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();

redis.describe('claiming due boards', () => {
  let app: TestApp;
  let sql: pg.Client;
  let id: string;

  beforeAll(async () => {
    app = await startTestApp({ redisUrl: redis.url });
    app.app.get(PollingScheduler).enabled = false; // this test claims by hand
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
    const res = await apiClient(app.baseUrl)('POST', '/api/v1/boards/bulk', {
      boards: [{ name: 'due', base_url: 'http://127.0.0.1:9' }],
    });
    id = res.body.items[0].id;
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await app?.close();
  });

  const makeDue = () =>
    sql.query(
      `UPDATE "Board" SET "nextPollAt" = now() - interval '1 s', "nextSlowPollAt" = now() - interval '1 s' WHERE "id" = $1`,
      [id],
    );
  const slowAt = async () =>
    (await sql.query<{ at: Date }>(`SELECT "nextSlowPollAt" AS at FROM "Board" WHERE "id" = $1`, [id])).rows[0]!.at;

  it('leaves the firmware reads due while the slow lane is behind, and claims them once it catches up', async () => {
    const repository = app.app.get(PollingRepository);
    await makeDue();
    const behind = await repository.claimDue(100, 15, 3600, false);
    expect(behind).toEqual([{ id, slow: false, medium: expect.any(Boolean) }]);
    expect((await slowAt()).getTime()).toBeLessThanOrEqual(Date.now()); // still due

    await sql.query(`UPDATE "Board" SET "nextPollAt" = now() - interval '1 s' WHERE "id" = $1`, [id]);
    const caughtUp = await repository.claimDue(100, 15, 3600, true);
    expect(caughtUp).toEqual([{ id, slow: true, medium: expect.any(Boolean) }]);
    expect((await slowAt()).getTime()).toBeGreaterThan(Date.now() + 3000 * 1000); // an interval (±10 %) on
    // Claimed: not due again this tick.
    expect(await repository.claimDue(100, 15, 3600, true)).toEqual([]);
  });
});
