// Thermal history against real PostgreSQL: the compaction job rolls raw samples into 5-minute means (min, max, count)
// and applies the configured retention to both tables; re-running it changes nothing; the API serves both
// resolutions. Samples are written straight into the tables (as the poller's batch write does) at chosen ages.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { PollingWorker } from '../../src/polling/polling.worker.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import { apiClient } from './api.js';

const redis = requireRedis();
const MIN = 60_000;
const BUCKET = 5 * MIN;

redis.describe('thermal history', () => {
  let app: TestApp;
  let sql: pg.Client;
  let api: ReturnType<typeof apiClient>;
  let boardId: string;

  beforeAll(async () => {
    app = await startTestApp({
      redisUrl: redis.url,
      env: { THERMAL_RAW_RETENTION_HOURS: '2', THERMAL_ROLLUP_RETENTION_DAYS: '3' },
    });
    app.app.get(PollingScheduler).enabled = false; // nothing polls the (unreachable) board meanwhile
    api = apiClient(app.baseUrl);
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
    const res = await api('POST', '/api/v1/boards/bulk', {
      boards: [{ name: 'hot', base_url: 'http://127.0.0.1:9' }],
    });
    expect(res.status).toBe(201);
    boardId = res.body.items[0].id;
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await app?.close();
  });

  const sample = (sensor: string, at: number, t: number) =>
    sql.query(`INSERT INTO "ThermalSample" ("boardId", "sensor", "at", "temperatureC") VALUES ($1, $2, $3, $4)`, [
      boardId,
      sensor,
      new Date(at),
      t,
    ]);
  const count = async (table: string) =>
    (await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}" WHERE "boardId" = $1`, [boardId]))
      .rows[0]!.n;

  it('rolls samples into 5-minute means and keeps each table for its configured time', async () => {
    const now = Date.now();
    const previousBucket = Math.floor(now / BUCKET) * BUCKET - BUCKET; // complete, inside the recomputed window
    await sample('cpu', previousBucket + 1 * MIN, 40);
    await sample('cpu', previousBucket + 2 * MIN, 50);
    await sample('cpu', previousBucket + 3 * MIN, 60);
    await sample('board', previousBucket + 1 * MIN, 30);
    await sample('cpu', now - 3 * 3600_000, 99); // older than the 2 hours of raw retention
    await sql.query(
      `INSERT INTO "ThermalRollup" ("boardId", "sensor", "bucket", "mean", "min", "max", "samples")
       VALUES ($1, 'cpu', $2, 45, 44, 46, 60), ($1, 'cpu', $3, 41, 40, 42, 60)`,
      [boardId, new Date(now - 4 * 86_400_000), new Date(now - 2 * 86_400_000)],
    );

    const result = await app.app.get(PollingWorker).compactThermal();
    // The expired raw sample is gone (dropped with its hour's partition, or deleted from the default partition when
    // its hour had none: test/polling/thermal-partitions.e2e-spec.ts tells the two apart).
    expect(result).toMatchObject({ deletedRollups: 1 });
    expect(await count('ThermalSample')).toBe(4);

    const from = new Date(now - 3 * 86_400_000).toISOString();
    const means = await api('GET', `/api/v1/boards/${boardId}/thermal?resolution=5m&sensor=cpu&from=${from}`);
    expect(means.status).toBe(200);
    expect(means.body.items).toEqual([
      { sensor: 'cpu', at: new Date(previousBucket).toISOString(), mean: 50, min: 40, max: 60 },
      // Two days old: inside the three days of rollup retention.
      expect.objectContaining({ sensor: 'cpu', mean: 41 }),
    ]);
    const raw = await api('GET', `/api/v1/boards/${boardId}/thermal?resolution=raw&sensor=board`);
    expect(raw.body.items).toEqual([
      { sensor: 'board', at: new Date(previousBucket + MIN).toISOString(), mean: 30, min: 30, max: 30 },
    ]);

    // Idempotent: a second run (a retried job, or two workers) recomputes the same means and deletes nothing more.
    const again = await app.app.get(PollingWorker).compactThermal();
    expect(again).toMatchObject({ createdPartitions: 0, droppedPartitions: 0, deletedRaw: 0, deletedRollups: 0 });
    const rollups = await sql.query<{ samples: number; mean: number }>(
      `SELECT "samples", "mean" FROM "ThermalRollup" WHERE "boardId" = $1 AND "sensor" = 'cpu' AND "bucket" = $2`,
      [boardId, new Date(previousBucket)],
    );
    expect(rollups.rows).toEqual([{ samples: 3, mean: 50 }]);
  });

  it('refuses a bad resolution or time with a problem naming the field', async () => {
    const res = await api('GET', `/api/v1/boards/${boardId}/thermal?resolution=1h&from=yesterday`);
    expect(res.status).toBe(400);
    expect(res.type).toContain('application/problem+json');
    expect(JSON.stringify(res.body)).toMatch(/resolution/);
    expect(JSON.stringify(res.body)).toMatch(/from/);
  });
});
