// The evaluation passes between full ones (src/alerts/alerts.evaluator.ts) once a release is out, when every board
// has a firmware_update_available alert open: those alerts stay open through them and are judged by the full pass
// alone, an open alert whose value has not moved is not written again, and a board whose only open alert is the
// update's is still one the poll screen judges (its new conditions open at its poll, not at the next full pass).
// The passes are run directly, with both clocks stopped, over readings written here (no board answers).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { AlertsEvaluator } from '../../src/alerts/alerts.evaluator.js';
import { AlertsRepository } from '../../src/alerts/alerts.repository.js';
import { AlertsScheduler } from '../../src/alerts/alerts.scheduler.js';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { apiClient } from '../boards/api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();

redis.describe('alert passes between full ones, with a release out', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let sql: pg.Client;
  let evaluator: AlertsEvaluator;
  const ids: Record<string, string> = {};

  const writeReadings = (boardId: string, celsius: number, updateAvailable: boolean) =>
    sql.query(
      `INSERT INTO "BoardReading" ("boardId", "thermal", "thermalAt", "firmwareCheck", "firmwareAt")
       VALUES ($1, $2, now(), $3, now())
       ON CONFLICT ("boardId") DO UPDATE SET "thermal" = EXCLUDED."thermal", "thermalAt" = now(),
         "firmwareCheck" = EXCLUDED."firmwareCheck", "firmwareAt" = now()`,
      [
        boardId,
        JSON.stringify({ sensors: [{ name: 'cpu', temperature_c: celsius, present: true, trips: [] }], cooling: [] }),
        JSON.stringify({
          stable: { channel: 'stable', running: 'v2.3.0', target: 'v2.4.0', update_available: updateAvailable },
        }),
      ],
    );
  /** Open alerts by rule, with the row version (xmin) that tells whether a pass wrote the row. */
  const openAlerts = async (boardId: string) => {
    const { rows } = await sql.query<{ rule: string; status: string; value: number | null; version: string }>(
      `SELECT "rule", "status"::text AS status, "value", xmin::text AS version FROM "Alert"
       WHERE "boardId" = $1 AND "openKey" IS NOT NULL ORDER BY "rule"`,
      [boardId],
    );
    return Object.fromEntries(rows.map((r) => [r.rule, r]));
  };
  const fullPass = () => evaluator.evaluate(new Date(), { boards: 'all' });
  const openAlertsPass = () => evaluator.evaluate(new Date(), { boards: 'with_open_alerts' });

  beforeAll(async () => {
    app = await startTestApp({ redisUrl: redis.url });
    app.app.get(AlertsScheduler).enabled = false;
    app.app.get(PollingScheduler).enabled = false;
    evaluator = app.app.get(AlertsEvaluator);
    api = apiClient(app.baseUrl);
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
    for (const r of (await api('GET', '/api/v1/alert-rules')).body.items as Array<{ id: string }>) {
      expect((await api('PATCH', `/api/v1/alert-rules/${r.id}`, { enabled: false })).status).toBe(200);
    }
    for (const body of [
      { name: 'update', kind: 'firmware_update', severity: 'info', dwell_seconds: 0, clear_seconds: 0 },
      { name: 'hot', kind: 'temperature', severity: 'warning', threshold: 70, hysteresis: 5, dwell_seconds: 0 },
    ]) {
      expect((await api('POST', '/api/v1/alert-rules', body)).status).toBe(201);
    }
    // Nothing answers on these ports; with polling stopped the readings stay as written.
    const reg = await api('POST', '/api/v1/boards/bulk', {
      boards: [
        { name: 'outdated', base_url: 'http://127.0.0.1:9' },
        { name: 'outdated-and-hot', base_url: 'http://127.0.0.1:11' },
      ],
    });
    expect(reg.status).toBe(201);
    for (const b of reg.body.items as Array<{ id: string; name: string }>) {
      ids[b.name] = b.id;
    }
    await writeReadings(ids.outdated!, 45, true);
    await writeReadings(ids['outdated-and-hot']!, 80, true);
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await app?.close();
  }, 60_000);

  it('leaves the update alerts to the full pass, and rewrites only the open alerts whose value moved', async () => {
    expect(await fullPass()).toMatchObject({ opened: 3, fired: 3 });
    const before = { outdated: await openAlerts(ids.outdated!), hot: await openAlerts(ids['outdated-and-hot']!) };
    expect(Object.keys(before.outdated)).toEqual(['update']);
    expect(Object.keys(before.hot)).toEqual(['hot', 'update']);

    // Nothing changed: no alert row is written, and none closes.
    expect(await openAlertsPass()).toEqual({ opened: 0, fired: 0, resolved: 0, dropped: 0 });
    expect(await fullPass()).toEqual({ opened: 0, fired: 0, resolved: 0, dropped: 0 });
    expect(await openAlerts(ids.outdated!)).toEqual(before.outdated);
    expect(await openAlerts(ids['outdated-and-hot']!)).toEqual(before.hot);

    // The hot board warms further: the pass between full ones writes its new value, and leaves its update alert be.
    await writeReadings(ids['outdated-and-hot']!, 83, true);
    await openAlertsPass();
    const warmer = await openAlerts(ids['outdated-and-hot']!);
    expect(warmer.hot).toMatchObject({ status: 'firing', value: 83 });
    expect(warmer.hot!.version).not.toBe(before.hot.hot!.version);
    expect(warmer.update).toEqual(before.hot.update);

    // Both boards updated: the update alerts stay open through the passes between full ones, and the full pass
    // resolves them (clear_seconds 0).
    await writeReadings(ids.outdated!, 45, false);
    await writeReadings(ids['outdated-and-hot']!, 83, false);
    expect(await openAlertsPass()).toMatchObject({ resolved: 0, dropped: 0 });
    expect(Object.keys(await openAlerts(ids.outdated!))).toEqual(['update']);
    expect(await fullPass()).toMatchObject({ resolved: 2 });
    expect(Object.keys(await openAlerts(ids.outdated!))).toEqual([]);
    expect(Object.keys(await openAlerts(ids['outdated-and-hot']!))).toEqual(['hot']);
  }, 60_000);

  it('counts a board whose only open alert is the update as one the poll screen still judges', async () => {
    await writeReadings(ids.outdated!, 45, true);
    await fullPass();
    expect(Object.keys(await openAlerts(ids.outdated!))).toEqual(['update']);
    const attended = await app.app.get(AlertsRepository).boardsWithOpenAlerts();
    expect(attended).not.toContain(ids.outdated);
    expect(attended).toContain(ids['outdated-and-hot']);
  }, 60_000);
});
