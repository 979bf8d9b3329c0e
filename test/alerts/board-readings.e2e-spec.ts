// Rules on what polling reads at its medium cadence, end to end against a simulated rack: a fan held through the
// board API (its zone's governor paused) fires governor_overridden after the dwell and fan_max on the device's own
// steps; a microSD card filled with a sparse file fires sdcard_full; all resolve once cleared. Also: /cooling and
// /sdcard are read every few polls, not on every one, and the shipped defaults for both rules exist.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { BoardClient } from '@tpfleet/board-api/client';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { AlertsScheduler } from '../../src/alerts/alerts.scheduler.js';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { MEDIUM_POLL_EVERY } from '../../src/polling/polling.settings.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();

interface AlertDto {
  id: string;
  rule: string;
  sensor: string | null;
  status: string;
  severity: string;
  value: number | null;
  threshold: number | null;
  summary: string;
  pending_since: string;
  fired_at: string | null;
  labels: Record<string, string>;
}

redis.describe('alerts on /cooling and /sdcard readings: a held governor, a full card', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let sql: pg.Client;
  const ids: Record<string, string> = {};

  const boardClient = (i: number) =>
    new BoardClient({ baseUrl: rack.boardUrl(i), credentials: { username: 'root', password: 'turing' } });
  const alertsOf = async (boardId: string): Promise<AlertDto[]> =>
    (await api('GET', `/api/v1/alerts?board_id=${boardId}&limit=100`)).body.items as AlertDto[];
  const byRule = (list: AlertDto[], rule: string) => list.filter((a) => a.rule === rule);

  beforeAll(async () => {
    rack = await startRack(2);
    app = await startTestApp({ redisUrl: redis.url, env: { POLL_INTERVAL_SECONDS: '1', POLL_TIMEOUT_MS: '2000' } });
    const scheduler = app.app.get(AlertsScheduler);
    scheduler.intervalMs = 500;
    scheduler.restart();
    api = apiClient(app.baseUrl);
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();

    // The shipped defaults for both rules exist, documented; then only this test's rules run (shorter dwells).
    const rules = (await api('GET', '/api/v1/alert-rules')).body.items as Array<Record<string, unknown>>;
    expect(rules.find((r) => r.name === 'governor_paused')).toMatchObject({
      kind: 'governor_overridden',
      severity: 'info',
      dwell_seconds: 1800,
      builtin: true,
      description: expect.stringContaining('30 minutes'),
    });
    expect(rules.find((r) => r.name === 'sdcard_nearly_full')).toMatchObject({
      kind: 'sdcard_full',
      severity: 'warning',
      threshold: 90,
      hysteresis: 5,
      builtin: true,
      description: expect.stringContaining('90 %'),
    });
    for (const r of rules) {
      expect((await api('PATCH', `/api/v1/alert-rules/${r.id as string}`, { enabled: false })).status).toBe(200);
    }
    for (const body of [
      // No threshold: the condition holds or not, and the dwell is "for longer than D".
      { name: 'held_governor', kind: 'governor_overridden', severity: 'info', dwell_seconds: 3, clear_seconds: 1 },
      { name: 'fan_top', kind: 'fan_max', severity: 'info', dwell_seconds: 3, clear_seconds: 1 },
      {
        name: 'card_full',
        kind: 'sdcard_full',
        severity: 'warning',
        threshold: 90,
        hysteresis: 5,
        dwell_seconds: 2,
        clear_seconds: 1,
      },
    ]) {
      const res = await api('POST', '/api/v1/alert-rules', { ...body, selector: 'test=readings' });
      expect(res.status).toBe(201);
    }
    // sdcard_full is judged against a percentage, so it needs one; the flag kinds above need none.
    const noThreshold = await api('POST', '/api/v1/alert-rules', { name: 'x', kind: 'sdcard_full', severity: 'info' });
    expect(noThreshold.status).toBe(400);
    expect(noThreshold.type).toContain('application/problem+json');
    const reg = await api('POST', '/api/v1/boards/bulk', {
      boards: [1, 2].map((i) => ({
        name: `board${i}`,
        base_url: rack.boardUrl(i),
        labels: { test: 'readings' },
        credentials: { username: 'root', password: 'turing' },
      })),
    });
    expect(reg.status).toBe(201);
    for (const b of reg.body.items as Array<{ id: string; name: string }>) {
      ids[b.name] = b.id;
    }
    await waitFor(
      'both boards online with /cooling and /sdcard stored',
      () =>
        sql.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "BoardReading" r JOIN "Board" b ON b."id" = r."boardId"
           WHERE b."state" = 'online' AND r."cooling" IS NOT NULL AND r."sdcard" IS NOT NULL`,
        ),
      (r) => r.rows[0]!.n === 2,
      20_000,
      250,
    );
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    if (app) {
      app.app.get(AlertsScheduler).enabled = false;
      app.app.get(PollingScheduler).enabled = false;
      await app.close(); // drops its database too
    }
    await rack?.stop();
  }, 60_000);

  it('reads /cooling and /sdcard every few polls, validated, in the readings', async () => {
    const before = (await rack.control('GET', '/rack/boards/1/calls')).body.succeeded as Record<string, number>;
    await new Promise((r) => setTimeout(r, 6000));
    const after = (await rack.control('GET', '/rack/boards/1/calls')).body.succeeded as Record<string, number>;
    const delta = (op: string) => (after[op] ?? 0) - (before[op] ?? 0);
    expect(delta('getThermal')).toBeGreaterThanOrEqual(4);
    expect(delta('getCooling')).toBeGreaterThanOrEqual(1);
    expect(delta('getSdcard')).toBe(delta('getCooling'));
    // Every MEDIUM_POLL_EVERY-th poll (±1 for the window's edges), not every poll.
    expect(delta('getCooling')).toBeLessThanOrEqual(Math.ceil(delta('getThermal') / MEDIUM_POLL_EVERY) + 1);

    const { rows } = await sql.query<{ cooling: unknown; sdcard: { total: number; free: number; use: number } }>(
      `SELECT "cooling", "sdcard" FROM "BoardReading" WHERE "boardId" = $1`,
      [ids.board1],
    );
    expect(rows[0]!.cooling).toEqual([
      { device: 'system fan', speed: expect.any(Number), max_speed: 6, zone: 'thermal_zone0', overridden: false },
    ]);
    expect(rows[0]!.sdcard.total).toBe(rows[0]!.sdcard.free + rows[0]!.sdcard.use);
  }, 30_000);

  it('a fan held through the board API fires governor_overridden after the dwell (and fan_max); both resolve when given back', async () => {
    const client = boardClient(1);
    try {
      await client.setCooling('system fan', 6, 'manual'); // pauses thermal_zone0's governor, holds the top step
      const firing = await waitFor(
        'held_governor and fan_top firing',
        () => alertsOf(ids.board1!),
        (list) => ['held_governor', 'fan_top'].every((r) => byRule(list, r).some((a) => a.status === 'firing')),
        30_000,
        250,
      );
      const governor = byRule(firing.value, 'held_governor')[0]!;
      expect(governor).toMatchObject({
        sensor: 'thermal_zone0',
        severity: 'info',
        value: 6,
        labels: { alertname: 'held_governor', board: 'board1', sensor: 'thermal_zone0' },
      });
      expect(governor.summary).toBe('governor of thermal_zone0 paused: system fan held at step 6 of 6');
      // The dwell: firing no sooner than 3 s after the hold was first seen.
      expect(Date.parse(governor.fired_at!) - Date.parse(governor.pending_since)).toBeGreaterThanOrEqual(3000);
      // fan_max on the device's own steps (/cooling), keyed by the device.
      expect(byRule(firing.value, 'fan_top')[0]).toMatchObject({ sensor: 'system fan', value: 6, threshold: 6 });

      await client.setCooling('system fan', undefined, 'auto'); // the governor resumes (and lowers the fan)
      const resolved = await waitFor(
        'held_governor and fan_top resolved',
        () => alertsOf(ids.board1!),
        (list) => list.length >= 2 && list.every((a) => a.status === 'resolved'),
        30_000,
        250,
      );
      // One alert per rule: the polls and evaluations in between never duplicated them.
      expect(resolved.value.map((a) => a.rule).sort()).toEqual(['fan_top', 'held_governor']);
    } finally {
      await client.setCooling('system fan', undefined, 'auto').catch(() => undefined);
      await client.close();
    }
    // The other board never held anything.
    expect(byRule(await alertsOf(ids.board2!), 'held_governor')).toEqual([]);
  }, 90_000);

  it('a microSD card filled past 90 % fires sdcard_full after the dwell; it resolves below 85 % once emptied', async () => {
    const client = boardClient(2);
    const fill = join(rack.stateDir, 'boards', '2', 'sdcard', 'fill.img');
    try {
      const card = await client.sdcard();
      // A sparse file: the simulator counts a file's size against its simulated capacity, the disk stays empty.
      const handle = await open(fill, 'w');
      await handle.truncate(Math.ceil(card.total * 0.95) - card.use);
      await handle.close();
      const firing = await waitFor(
        'card_full firing',
        () => alertsOf(ids.board2!),
        (list) => byRule(list, 'card_full').some((a) => a.status === 'firing'),
        30_000,
        250,
      );
      const alert = byRule(firing.value, 'card_full')[0]!;
      expect(alert).toMatchObject({ severity: 'warning', threshold: 90, labels: { alertname: 'card_full' } });
      expect(alert.value).toBeGreaterThanOrEqual(94.9);
      expect(alert.summary).toMatch(/^SD card 9\d(\.\d)? % used \(/);
      expect(Date.parse(alert.fired_at!) - Date.parse(alert.pending_since)).toBeGreaterThanOrEqual(2000);

      await rm(fill);
      await waitFor(
        'card_full resolved',
        () => alertsOf(ids.board2!),
        (list) => byRule(list, 'card_full')[0]?.status === 'resolved',
        30_000,
        250,
      );
      expect(byRule(await alertsOf(ids.board2!), 'card_full')).toHaveLength(1);
    } finally {
      await rm(fill, { force: true });
      await client.close();
    }
  }, 90_000);
});
