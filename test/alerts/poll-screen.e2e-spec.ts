// Alerts open at the poll that sees their condition, not at the next evaluation pass: with the alerts' clock
// stopped (no pass at all), a board hotter than a rule's threshold and a board refusing its credentials get their
// alerts from their polls alone; a board the rule's selector leaves out gets none; and an alert opened this way is
// opened once, however many polls see the condition. Once open, the board's polls are left to the pass.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { AlertsScheduler } from '../../src/alerts/alerts.scheduler.js';
import { AlertsPollScreen } from '../../src/alerts/poll-screen.js';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();

interface AlertDto {
  rule: string;
  board_id: string;
  sensor: string | null;
  status: string;
  value: number | null;
}

redis.describe('alerts opened by the polls themselves', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  const ids: Record<string, string> = {};

  const alertsOf = async (boardId: string): Promise<AlertDto[]> =>
    (await api('GET', `/api/v1/alerts?board_id=${boardId}&limit=100`)).body.items as AlertDto[];

  beforeAll(async () => {
    rack = await startRack(3);
    app = await startTestApp({ redisUrl: redis.url, env: { POLL_INTERVAL_SECONDS: '1', POLL_TIMEOUT_MS: '2000' } });
    // No evaluation pass from here on: whatever opens, a poll opened.
    app.app.get(AlertsScheduler).enabled = false;
    api = apiClient(app.baseUrl);

    for (const r of (await api('GET', '/api/v1/alert-rules')).body.items as Array<{ id: string }>) {
      expect((await api('PATCH', `/api/v1/alert-rules/${r.id}`, { enabled: false })).status).toBe(200);
    }
    // The simulated boards run at 40–50 °C: a fixed 30 °C threshold holds on every board it applies to.
    for (const body of [
      {
        name: 'warm',
        kind: 'temperature',
        severity: 'warning',
        threshold: 30,
        dwell_seconds: 0,
        selector: 'test=screen',
      },
      { name: 'refused', kind: 'credentials_invalid', severity: 'warning', dwell_seconds: 0, selector: 'test=screen' },
    ]) {
      expect((await api('POST', '/api/v1/alert-rules', body)).status).toBe(201);
    }
    const reg = await api('POST', '/api/v1/boards/bulk', {
      boards: [
        { name: 'hot', base_url: rack.boardUrl(1), labels: { test: 'screen' } },
        { name: 'refusing', base_url: rack.boardUrl(2), labels: { test: 'screen' }, password: 'wrong' },
        { name: 'elsewhere', base_url: rack.boardUrl(3), labels: { test: 'other' } },
      ].map(({ password = 'turing', ...b }) => ({ ...b, credentials: { username: 'root', password } })),
    });
    expect(reg.status).toBe(201);
    for (const b of reg.body.items as Array<{ id: string; name: string }>) {
      ids[b.name] = b.id;
    }
  }, 60_000);

  afterAll(async () => {
    if (app) {
      app.app.get(PollingScheduler).enabled = false;
      await app.close(); // drops its database too
    }
    await rack?.stop();
  }, 60_000);

  it('opens the alerts of a hot board and of refused credentials without any evaluation pass', async () => {
    const { value: hot } = await waitFor(
      'the hot board alerting',
      () => alertsOf(ids.hot!),
      (list) => list.some((a) => a.rule === 'warm'),
      15_000,
      250,
    );
    expect(hot.filter((a) => a.rule === 'warm')).toEqual([
      expect.objectContaining({ status: 'firing', sensor: expect.any(String), value: expect.any(Number) }),
    ]);
    expect(hot.find((a) => a.rule === 'warm')!.value).toBeGreaterThanOrEqual(30);

    const { value: refusing } = await waitFor(
      'the refused credentials alerting',
      () => alertsOf(ids.refusing!),
      (list) => list.some((a) => a.rule === 'refused'),
      15_000,
      250,
    );
    expect(refusing.filter((a) => a.rule === 'refused')).toEqual([expect.objectContaining({ status: 'firing' })]);
  });

  it('opens each alert once while later polls see the same condition, and none for a board the selector leaves out', async () => {
    const polls = async () => (await api('GET', `/api/v1/boards/${ids.hot!}`)).body.last_polled_at as string;
    const first = await polls();
    await waitFor(
      'three more polls of the hot board',
      polls,
      (at) => Date.parse(at) >= Date.parse(first) + 3000,
      15_000,
      250,
    );
    const warm = (await alertsOf(ids.hot!)).filter((a) => a.rule === 'warm');
    // One per sensor the board reports, each once.
    expect(new Set(warm.map((a) => a.sensor)).size).toBe(warm.length);
    expect(warm.length).toBeGreaterThan(0);
    expect(await alertsOf(ids.elsewhere!)).toEqual([]);
  });

  it('stops flagging the polls of a board whose alert is open (the pass reads it every slot)', async () => {
    const screen = app.app.get(AlertsPollScreen);
    const hotPoll = (boardId: string) => ({
      boardId,
      labels: { test: 'screen' },
      state: 'online',
      polledAt: new Date(),
      thermal: { sensors: [{ name: 'cpu', temperature_c: 45, present: true, trips: [] }], cooling: [] },
      mediumRead: false,
    });
    // The screen reads the boards with open alerts with its rules, every 5 s.
    await waitFor(
      'the screen to see the open alert',
      async () => screen.flags(hotPoll(ids.hot!)),
      (f) => !f,
      15_000,
      250,
    );
    expect(screen.flags(hotPoll(ids.elsewhere!))).toBe(true); // the same answers on a board without an open alert
  });
});
