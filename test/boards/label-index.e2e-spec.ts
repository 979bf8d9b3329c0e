// The label selector's index against real PostgreSQL: what a registration or a label change writes goes into the
// index itself, so a board page's selector never scans a pending list that only a vacuum would merge (the test
// database, like this machine's server, may run without autovacuum; production's merges only from time to time).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { apiClient } from './api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();
const BOARDS = 300;

redis.describe('the label selector index', () => {
  let app: TestApp;
  let sql: pg.Client;

  beforeAll(async () => {
    app = await startTestApp({ redisUrl: redis.url });
    app.app.get(PollingScheduler).enabled = false;
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await app?.close();
  });

  it('keeps no pending entries after a bulk registration and a label change, and answers selectors from them', async () => {
    const api = apiClient(app.baseUrl);
    const res = await api('POST', '/api/v1/boards/bulk', {
      boards: Array.from({ length: BOARDS }, (_, k) => ({
        name: `b${k + 1}`,
        base_url: `http://127.0.0.1:${10_000 + k}`,
        labels: { rack: `r${(k % 3) + 1}`, role: k % 10 === 0 ? 'spare' : 'worker' },
      })),
    });
    expect(res.status).toBe(201);
    const moved = res.body.items[0].id as string;
    expect((await api('PATCH', `/api/v1/boards/${moved}`, { labels: { rack: 'r9', role: 'worker' } })).status).toBe(
      200,
    );

    await sql.query('CREATE EXTENSION IF NOT EXISTS pgstattuple');
    const { rows } = await sql.query<{ pages: number; tuples: string }>(
      `SELECT pending_pages AS pages, pending_tuples::text AS tuples FROM pgstatginindex('"Board_labels_idx"')`,
    );
    expect(rows).toEqual([{ pages: 0, tuples: '0' }]);

    const page = await api('GET', `/api/v1/boards?limit=500&selector=${encodeURIComponent('rack=r2,role!=spare')}`);
    expect(page.status).toBe(200);
    const expected = Array.from({ length: BOARDS }, (_, k) => k)
      .filter((k) => k % 3 === 1 && k % 10 !== 0)
      .map((k) => `b${k + 1}`)
      .sort();
    expect(page.body.items.map((b: { name: string }) => b.name).sort()).toEqual(expected);
    const r9 = await api('GET', `/api/v1/boards?selector=rack=r9`);
    expect(r9.body.items.map((b: { id: string }) => b.id)).toEqual([moved]);
  });
});
