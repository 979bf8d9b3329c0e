// Housekeeping on Redis queues, end to end: the polling clock enqueues the thermal compaction on its configured
// interval, BullMQ accepts the job (its id once had a `:` that Redis queues refused on every tick), and a polled
// board gets 5-minute means while raw samples past their retention are deleted, with nobody calling the job.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';

const redis = requireRedis();

redis.describe('thermal housekeeping on Redis queues', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let sql: pg.Client;

  beforeAll(async () => {
    rack = await startRack(1, ['--trust-loopback']);
    app = await startTestApp({
      redisUrl: redis.url,
      env: { POLL_INTERVAL_SECONDS: '1', THERMAL_COMPACT_INTERVAL_SECONDS: '2', THERMAL_RAW_RETENTION_HOURS: '1' },
    });
    api = apiClient(app.baseUrl);
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await app?.close();
    await rack?.stop();
  });

  it('writes 5-minute means of a polled board and deletes raw samples past retention, on schedule', async () => {
    const res = await api('POST', '/api/v1/boards/bulk', { boards: [{ name: 'hk', base_url: rack.boardUrl(1) }] });
    expect(res.status).toBe(201);
    const boardId: string = res.body.items[0].id;
    // A sample two hours old: past the one hour of raw retention.
    await sql.query(
      `INSERT INTO "ThermalSample" ("boardId", "sensor", "at", "temperatureC") VALUES ($1, 'cpu', $2, 99)`,
      [boardId, new Date(Date.now() - 2 * 3600_000)],
    );

    const { value: means } = await waitFor(
      '5-minute means of the polled board',
      async () => (await api('GET', `/api/v1/boards/${boardId}/thermal?resolution=5m`)).body.items as unknown[],
      (items) => items.length > 0,
      30_000,
      500,
    );
    expect(means[0]).toEqual(expect.objectContaining({ mean: expect.any(Number), min: expect.any(Number) }));

    await waitFor(
      'the expired raw sample to be deleted',
      async () =>
        (
          await sql.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM "ThermalSample" WHERE "boardId" = $1 AND "at" < now() - interval '1 hour'`,
            [boardId],
          )
        ).rows[0]!.n,
      (n) => n === 0,
      30_000,
      500,
    );
    // Fresh samples stay: retention deletes only what is past it.
    const fresh = await api('GET', `/api/v1/boards/${boardId}/thermal?resolution=raw`);
    expect(fresh.body.items.length).toBeGreaterThan(0);
  }, 90_000);
});
