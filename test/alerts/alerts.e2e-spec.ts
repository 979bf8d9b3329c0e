// Alerts end to end: two fleet-manager instances (API + workers each) on one PostgreSQL, one Redis queue and a
// simulated rack; a webhook receiver and a real Prometheus Alertmanager started here. Thermal runaway fires one
// warning after the dwell and one critical later, both resolve after the fault clears and the hysteresis passes;
// a flapping value fires once; each alert is created and notified once although two instances evaluate and
// deliver; silences suppress notifications, not the record; external alerts; the SSE stream; bad input → 4xx.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { request } from 'undici';
import { AlertsScheduler } from '../../src/alerts/alerts.scheduler.js';
import { AlertsService } from '../../src/alerts/alerts.service.js';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '../support/database.js';
import { requireRedis } from '../support/redis.js';
import { alertmanagerBinary, startAlertmanager, type AlertmanagerProcess } from './alertmanager.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

const redis = requireRedis();
const amBinary = alertmanagerBinary();
const SECRET = 'webhook-secret-0123456789';
const EVAL_MS = 500;

type Api = ReturnType<typeof apiClient>;
interface AlertDto {
  id: string;
  rule: string;
  board_id: string;
  sensor: string | null;
  status: string;
  severity: string;
  pending_since: string;
  fired_at: string | null;
  resolved_at: string | null;
  acknowledged: unknown;
  labels: Record<string, string>;
}

redis.describe('alerts: two instances, a rack, a webhook and Alertmanager', () => {
  let rack: RackProcess;
  let db: TestDatabase;
  let apps: TestApp[] = [];
  let api: Api;
  let api2: Api;
  let webhook: WebhookReceiver;
  let am: AlertmanagerProcess | null = null;
  let sql: pg.Client;
  const boards: Record<string, string> = {};

  const alertsOf = async (boardId: string): Promise<AlertDto[]> =>
    (await api('GET', `/api/v1/alerts?board_id=${boardId}&limit=500`)).body.items as AlertDto[];

  /** Writes a board's stored thermal reading directly (for boards that polling cannot reach). */
  const writeTemperature = async (boardId: string, celsius: number) => {
    const thermal = { sensors: [{ name: 'cpu', temperature_c: celsius, present: true, trips: [] }], cooling: [] };
    await sql.query(
      `INSERT INTO "BoardReading" ("boardId", "thermal", "thermalAt") VALUES ($1, $2, now())
       ON CONFLICT ("boardId") DO UPDATE SET "thermal" = EXCLUDED."thermal", "thermalAt" = now()`,
      [boardId, JSON.stringify(thermal)],
    );
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(async () => {
    rack = await startRack(1);
    db = await createTestDatabase();
    const prefix = testQueuePrefix();
    const env = {
      QUEUE_PREFIX: prefix,
      POLL_INTERVAL_SECONDS: '1',
      POLL_TIMEOUT_MS: '1000',
      POLL_UNREACHABLE_AFTER: '1000', // the direct-write boards stay "degraded", never a state alert of their own
    };
    // Two instances on one database and one queue: both schedule, evaluate, claim groups and run jobs.
    apps = [await startTestApp({ redisUrl: redis.url, db, env }), await startTestApp({ redisUrl: redis.url, db, env })];
    for (const app of apps) {
      const scheduler = app.app.get(AlertsScheduler);
      scheduler.intervalMs = EVAL_MS;
      scheduler.restart();
    }
    api = apiClient(apps[0]!.baseUrl);
    api2 = apiClient(apps[1]!.baseUrl);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    webhook = await startWebhookReceiver(SECRET);
    if (amBinary) {
      am = await startAlertmanager(amBinary);
    }

    // Only the test's rules: the shipped defaults (2-minute dwell) are disabled.
    const rules = (await api('GET', '/api/v1/alert-rules')).body.items as Array<{ id: string; builtin: boolean }>;
    expect(rules.filter((r) => r.builtin).length).toBeGreaterThanOrEqual(5);
    for (const r of rules) {
      expect((await api('PATCH', `/api/v1/alert-rules/${r.id}`, { enabled: false })).status).toBe(200);
    }
    const reg = await api('POST', '/api/v1/boards/bulk', {
      boards: [
        {
          name: 'hot1',
          base_url: rack.boardUrl(1),
          labels: { test: 'runaway' },
          credentials: { username: 'root', password: 'turing' },
        },
        // Nothing answers on ports 9 and 11: polling fails and leaves the readings this test writes alone.
        { name: 'flap1', base_url: 'http://127.0.0.1:9', labels: { test: 'flap' } },
        { name: 'quiet1', base_url: 'http://127.0.0.1:11', labels: { test: 'silenced' } },
      ],
    });
    expect(reg.status).toBe(201);
    for (const b of reg.body.items as Array<{ id: string; name: string }>) {
      boards[b.name] = b.id;
    }
    const rule = (over: Record<string, unknown>) => ({
      kind: 'temperature',
      dwell_seconds: 2,
      hysteresis: 5,
      clear_seconds: 2,
      ...over,
    });
    for (const body of [
      rule({
        name: 'hot_warning',
        severity: 'warning',
        threshold_from: 'trip_active',
        selector: 'test=runaway',
        remediation: 'fan_max',
      }),
      rule({ name: 'hot_critical', severity: 'critical', threshold_from: 'trip_hot', selector: 'test=runaway' }),
      rule({ name: 'cpu_hot', severity: 'warning', threshold: 70, selector: 'test!=runaway', sensor: 'cpu' }),
    ]) {
      const res = await api('POST', '/api/v1/alert-rules', body);
      expect(res.status).toBe(201);
    }
    const hook = await api('POST', '/api/v1/alert-receivers', {
      name: 'hook',
      type: 'webhook',
      url: webhook.url,
      secret: SECRET,
      group_by: ['alertname', 'board'],
      group_interval_seconds: 1,
      repeat_interval_seconds: 1,
    });
    expect(hook.status).toBe(201);
    expect(hook.body).toMatchObject({ has_secret: true });
    expect(JSON.stringify(hook.body)).not.toContain(SECRET);
    if (am) {
      const res = await api('POST', '/api/v1/alert-receivers', {
        name: 'am',
        type: 'alertmanager',
        url: am.url,
        group_by: ['alertname'],
        group_interval_seconds: 1,
        repeat_interval_seconds: 2,
      });
      expect(res.status).toBe(201);
    }
    await waitFor(
      'hot1 online',
      () => api('GET', `/api/v1/boards/${boards.hot1}`),
      (r) => r.body.state === 'online',
      15_000,
    );
  }, 120_000);

  afterAll(async () => {
    for (const app of apps) {
      app.app.get(AlertsScheduler).enabled = false;
      app.app.get(PollingScheduler).enabled = false;
    }
    for (const app of apps) {
      await app.close();
    }
    await sql?.end();
    await db?.drop();
    await webhook?.stop();
    await am?.stop();
    await rack?.stop();
  }, 60_000);

  it('thermal runaway: one warning after the dwell, one critical later; both resolve after the fault and hysteresis', async () => {
    expect(
      (await rack.control('POST', '/rack/boards/1/faults', { thermalRunaway: { ratePerMinute: 300 } })).status,
    ).toBe(200);
    const firing = await waitFor(
      'warning and critical firing',
      () => alertsOf(boards.hot1!),
      (list) => ['hot_warning', 'hot_critical'].every((r) => list.some((a) => a.rule === r && a.status === 'firing')),
      60_000,
      250,
    );
    await rack.control('DELETE', '/rack/boards/1/faults');
    const warning = firing.value.find((a) => a.rule === 'hot_warning')!;
    const critical = firing.value.find((a) => a.rule === 'hot_critical')!;
    expect(warning).toMatchObject({
      severity: 'warning',
      sensor: 'bmc-thermal',
      labels: { alertname: 'hot_warning', board: 'hot1', test: 'runaway' },
    });
    // The dwell: firing no sooner than 2 s after the condition was first seen; the critical came later.
    expect(Date.parse(warning.fired_at!) - Date.parse(warning.pending_since)).toBeGreaterThanOrEqual(2000);
    expect(Date.parse(critical.fired_at!)).toBeGreaterThan(Date.parse(warning.fired_at!));

    // Alertmanager sees both, with our labels.
    if (am) {
      const seen = await waitFor(
        'alertmanager has both alerts',
        () => am!.alerts(),
        (list) =>
          ['hot_warning', 'hot_critical'].every((n) =>
            list.some((a) => a.labels.alertname === n && a.status.state === 'active'),
          ),
        15_000,
        250,
      );
      const amWarning = seen.value.find((a) => a.labels.alertname === 'hot_warning')!;
      expect(amWarning.labels).toMatchObject({
        board: 'hot1',
        severity: 'warning',
        sensor: 'bmc-thermal',
        board_id: boards.hot1,
        kind: 'temperature',
      });
      expect(amWarning.annotations.summary).toContain('bmc-thermal');
    }

    // The heat decays (time constant 40 s): the critical clears below 95 − 5, the warning below 70 − 5.
    const resolved = await waitFor(
      'both resolved',
      () => alertsOf(boards.hot1!),
      (list) => list.length >= 2 && list.every((a) => a.status === 'resolved'),
      150_000,
      500,
    );
    // One alert per rule, never duplicated by the polls or the second instance.
    expect(resolved.value.map((a) => a.rule).sort()).toEqual(['hot_critical', 'hot_warning']);

    // The webhook heard of each firing once and each resolution once, with a valid signature.
    const hook = await waitFor(
      'webhook resolved notices',
      async () => webhook.deliveries.filter((d) => d.body.alerts.some((a) => a.board_id === boards.hot1)),
      (ds) =>
        ds.flatMap((d) => d.body.alerts).filter((a) => a.board_id === boards.hot1 && a.status === 'resolved').length ===
        2,
      15_000,
      250,
    );
    expect(hook.value.every((d) => d.signatureValid)).toBe(true);
    const notices = hook.value.flatMap((d) => d.body.alerts).filter((a) => a.board_id === boards.hot1);
    for (const alert of resolved.value) {
      expect(notices.filter((n) => n.id === alert.id && n.status === 'firing')).toHaveLength(1);
      expect(notices.filter((n) => n.id === alert.id && n.status === 'resolved')).toHaveLength(1);
    }
    // Alertmanager: resolved there too (no longer active).
    if (am) {
      await waitFor(
        'alertmanager resolved',
        () => am!.alerts(),
        (list) => !list.some((a) => a.labels.board === 'hot1' && a.status.state === 'active'),
        15_000,
        250,
      );
    }
    // Timeline: fired and resolved entries.
    const timeline = await api('GET', `/api/v1/boards/${boards.hot1}/timeline?kind=alert&limit=50`);
    const summaries = (timeline.body.items as Array<{ summary: string }>).map((e) => e.summary);
    expect(summaries.filter((s) => s.startsWith('hot_warning firing'))).toHaveLength(1);
    expect(summaries.filter((s) => s.startsWith('hot_warning resolved'))).toHaveLength(1);
    // Remediation (fan_max on hot_warning): fans held at the top step while firing, given back on resolution.
    const remediation = await waitFor(
      'fans given back',
      async () =>
        (
          (await api('GET', `/api/v1/boards/${boards.hot1}/timeline?kind=alert&limit=50`)).body.items as Array<{
            summary: string;
          }>
        ).map((e) => e.summary),
      (list) => list.some((s) => s.startsWith('remediation: fans given back')),
      15_000,
      250,
    );
    expect(remediation.value.filter((s) => s.startsWith('remediation: fans raised'))).toHaveLength(1);
    const calls = await rack.control('GET', '/rack/boards/1/calls');
    expect(calls.body.succeeded.postCooling).toBeGreaterThanOrEqual(2); // mode=manual at the top step, then mode=auto
  }, 240_000);

  it('a value flapping around the threshold fires once, and resolves once after the hysteresis', async () => {
    const id = boards.flap1!;
    await writeTemperature(id, 72);
    // A reading no poll brought is judged by the next full pass (every 4th evaluation): from its pending alert on,
    // the value is held above 70 for longer than the 2 s dwell.
    await waitFor(
      'flap1 pending',
      () => alertsOf(id),
      (l) => l.length === 1,
      15_000,
      100,
    );
    await sleep(3000);
    for (let i = 0; i < 16; i++) {
      await writeTemperature(id, i % 2 ? 72 : 68); // 68: below the threshold, above threshold − hysteresis
      await sleep(400);
    }
    let list = await alertsOf(id);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ rule: 'cpu_hot', status: 'firing' });
    await writeTemperature(id, 60);
    await waitFor(
      'flap resolved',
      () => alertsOf(id),
      (l) => l[0]?.status === 'resolved',
      15_000,
      250,
    );
    list = await alertsOf(id);
    expect(list).toHaveLength(1);
    const notices = await waitFor(
      'webhook notices for flap1',
      async () => webhook.deliveries.flatMap((d) => d.body.alerts).filter((a) => a.board_id === id),
      (n) => n.some((a) => a.status === 'resolved'),
      10_000,
      250,
    );
    expect(notices.value.map((a) => a.status).sort()).toEqual(['firing', 'resolved']);
  }, 60_000);

  it("clock and firmware rules judge the stored /health clock and /firmware/check's stable channel", async () => {
    const reg = await api('POST', '/api/v1/boards', {
      name: 'facts1',
      base_url: 'http://127.0.0.1:13', // nothing answers: the readings below stay as written
      labels: { test: 'facts' },
    });
    expect(reg.status).toBe(201);
    const id = reg.body.id as string;
    for (const body of [
      { name: 'clock_test', kind: 'clock_unsynced' },
      { name: 'firmware_test', kind: 'firmware_update' },
    ]) {
      const res = await api('POST', '/api/v1/alert-rules', {
        ...body,
        severity: 'info',
        selector: 'test=facts',
        dwell_seconds: 0,
        clear_seconds: 1,
      });
      expect(res.status).toBe(201);
    }
    const writeFacts = (synchronised: boolean, updateAvailable: boolean) =>
      sql.query(
        `INSERT INTO "BoardReading" ("boardId", "health", "firmwareCheck") VALUES ($1, $2, $3)
         ON CONFLICT ("boardId") DO UPDATE SET "health" = EXCLUDED."health", "firmwareCheck" = EXCLUDED."firmwareCheck"`,
        [
          id,
          JSON.stringify({
            clock: { synchronised, offset_seconds: synchronised ? 0.001 : -42.5, source: 'pool.ntp.org' },
            uptime_seconds: 100,
          }),
          JSON.stringify({
            stable: { channel: 'stable', running: 'v2.3.0', target: 'v2.4.0', update_available: updateAvailable },
          }),
        ],
      );
    await writeFacts(false, true);
    const firing = await waitFor(
      'clock and firmware alerts firing',
      () => alertsOf(id),
      (l) => l.filter((a) => a.status === 'firing').length === 2,
      15_000,
      250,
    );
    const byRule = Object.fromEntries(firing.value.map((a) => [a.rule, a as AlertDto & Record<string, unknown>]));
    expect(byRule.clock_test).toMatchObject({ value: -42.5, summary: 'clock not synchronised (chrony)' });
    expect(byRule.firmware_test).toMatchObject({ summary: 'firmware v2.4.0 available (running v2.3.0)' });

    await writeFacts(true, false);
    await waitFor(
      'clock and firmware alerts resolved',
      () => alertsOf(id),
      (l) => l.length === 2 && l.every((a) => a.status === 'resolved'),
      15_000,
      250,
    );
  }, 60_000);

  it('silences suppress notifications but not the record; acknowledgement is recorded', async () => {
    const id = boards.quiet1!;
    const silence = await api2('POST', '/api/v1/silences', {
      matchers: [{ name: 'board', value: 'quiet1' }],
      ends_at: new Date(Date.now() + 3_600_000).toISOString(),
      comment: 'maintenance',
    });
    expect(silence.status).toBe(201);
    expect(silence.body).toMatchObject({ state: 'active', created_by: expect.any(String) });
    await writeTemperature(id, 80);
    const firing = await waitFor(
      'quiet1 firing',
      () => alertsOf(id),
      (l) => l[0]?.status === 'firing',
      15_000,
      250,
    );
    const ack = await api('POST', `/api/v1/alerts/${firing.value[0]!.id}/acknowledge`, { comment: 'on it' });
    expect(ack.status).toBe(200);
    expect(ack.body.acknowledged).toMatchObject({ comment: 'on it', by: expect.any(String) });
    // Mirrored into Alertmanager as a silence on the alert's identity, so its own routes stop notifying too.
    const mirrored = (list: Awaited<ReturnType<AlertmanagerProcess['silences']>>) =>
      list.find((s) => s.comment.includes(firing.value[0]!.id));
    if (am) {
      const silenced = await waitFor(
        'silence in Alertmanager',
        () => am!.silences(),
        (l) => !!mirrored(l),
        5000,
      );
      expect(mirrored(silenced.value)).toMatchObject({
        status: { state: 'active' },
        comment: expect.stringContaining('on it'),
        matchers: expect.arrayContaining([
          { name: 'alertname', value: firing.value[0]!.rule, isEqual: true, isRegex: false },
          { name: 'board_id', value: id, isEqual: true, isRegex: false },
        ]),
      });
    }
    await sleep(3000); // several group intervals
    expect(webhook.deliveries.flatMap((d) => d.body.alerts).filter((a) => a.board_id === id)).toEqual([]);
    const listed = await api('GET', `/api/v1/alerts?status=firing&acknowledged=true&board_id=${id}`);
    expect(listed.body.items).toHaveLength(1);
    expect((await api('DELETE', `/api/v1/silences/${silence.body.id}`)).body.state).toBe('expired');
    await writeTemperature(id, 40);
    await waitFor(
      'quiet1 resolved',
      () => alertsOf(id),
      (l) => l[0]?.status === 'resolved',
      15_000,
      250,
    );
    if (am) {
      // Resolved: the acknowledgement's silence is expired, so it cannot hide the next episode.
      await waitFor(
        'silence expired in Alertmanager',
        () => am!.silences(),
        (l) => mirrored(l)?.status.state === 'expired',
        10_000,
        250,
      );
    }
  }, 60_000);

  it('external alerts (config drift) are raised once by racing instances, listed by firingAlerts, resolved, and streamed', async () => {
    const id = boards.quiet1!;
    // Subscribe on instance 2; raise on instance 1: the event crosses processes through Postgres NOTIFY.
    const stream = await request(`${apps[1]!.baseUrl}/api/v1/events?types=alert&board_id=${id}`, {
      headers: { authorization: `Bearer ${'test-admin-token-0123456789abcdef'}` },
    });
    expect(stream.statusCode).toBe(200);
    expect(String(stream.headers['content-type'])).toContain('text/event-stream');
    let text = '';
    stream.body.on('data', (c: Buffer) => (text += c.toString()));
    await sleep(300);

    const [s1, s2] = apps.map((a) => a.app.get(AlertsService));
    const input = {
      key: 'config_drift',
      boardId: id,
      severity: 'warning' as const,
      summary: 'hostname differs',
      detail: { field: 'hostname' },
    };
    await Promise.all([s1!.raiseExternal(input), s2!.raiseExternal(input), s1!.raiseExternal(input)]);
    const firing = await s2!.firingAlerts([id, boards.hot1!], 'warning');
    expect(firing.get(id)).toEqual([{ rule: 'config_drift', severity: 'warning', sensor: null }]);
    expect(firing.has(boards.hot1!)).toBe(false);
    expect((await s1!.firingAlerts([id], 'critical')).size).toBe(0);
    const rows = (await alertsOf(id)).filter((a) => a.rule === 'config_drift');
    expect(rows).toHaveLength(1);

    await waitFor(
      'SSE firing event',
      async () => text,
      (t) => t.includes('event: alert') && t.includes('config_drift'),
      5000,
    );
    // The dashboard drops off; the alert resolves meanwhile; it reconnects to the OTHER instance with the id of the
    // last event it saw and is given what it missed.
    const seenId = /id: (\S+)\nevent: alert\ndata: [^\n]*config_drift/.exec(text)![1]!;
    stream.body.destroy();
    await s2!.resolveExternal({ key: 'config_drift', boardId: id });
    await s1!.resolveExternal({ key: 'config_drift', boardId: id });
    expect((await alertsOf(id)).find((a) => a.rule === 'config_drift')?.status).toBe('resolved');
    await sleep(300); // the NOTIFY reaches instance 1
    const resumed = await request(`${apps[0]!.baseUrl}/api/v1/events?types=alert&board_id=${id}`, {
      headers: { authorization: `Bearer ${'test-admin-token-0123456789abcdef'}`, 'last-event-id': seenId },
    });
    let replayed = '';
    resumed.body.on('data', (c: Buffer) => (replayed += c.toString()));
    await waitFor(
      'SSE resolved event replayed',
      async () => replayed,
      (t) => /"action":"resolved"[^\n]*config_drift/.test(t),
      5000,
    );
    expect(replayed).not.toContain(`id: ${seenId}\n`); // only what came after it
    resumed.body.destroy();

    const stale = await request(`${apps[0]!.baseUrl}/api/v1/events?types=alert`, {
      headers: { authorization: `Bearer ${'test-admin-token-0123456789abcdef'}`, 'last-event-id': 'long-gone' },
    });
    let reset = '';
    stale.body.on('data', (c: Buffer) => (reset += c.toString()));
    await waitFor(
      'SSE reset',
      async () => reset,
      (t) => t.includes('event: reset'),
      5000,
    );
    stale.body.destroy();
  }, 30_000);

  it('receivers: a test send is signed and logged', async () => {
    const list = await api('GET', '/api/v1/alert-receivers');
    const hook = (list.body.items as Array<{ id: string; name: string }>).find((r) => r.name === 'hook')!;
    const before = webhook.deliveries.length;
    const res = await api('POST', `/api/v1/alert-receivers/${hook.id}/test`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, status: 204 });
    expect(webhook.deliveries.length).toBe(before + 1);
    expect(webhook.deliveries.at(-1)!.signatureValid).toBe(true);
    const log = await api('GET', `/api/v1/alert-receivers/${hook.id}/deliveries?limit=100`);
    expect(log.body.items[0]).toMatchObject({ ok: true, test: true });
    expect((log.body.items as Array<{ test: boolean }>).some((d) => !d.test)).toBe(true);
  });

  describe('bad input is a 4xx problem, never a 500', () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    const cases: Array<[string, 'GET' | 'POST' | 'PATCH' | 'DELETE', string, unknown, number]> = [
      ['unknown status filter', 'GET', '/api/v1/alerts?status=burning', undefined, 400],
      ['bad board id filter', 'GET', '/api/v1/alerts?board_id=nope', undefined, 400],
      ['bad cursor', 'GET', '/api/v1/alerts?cursor=xyz', undefined, 400],
      ['unknown query key', 'GET', '/api/v1/alerts?colour=red', undefined, 400],
      ['alert id not a uuid', 'GET', '/api/v1/alerts/42', undefined, 400],
      ['missing alert', 'GET', `/api/v1/alerts/${missing}`, undefined, 404],
      ['ack missing alert', 'POST', `/api/v1/alerts/${missing}/acknowledge`, {}, 404],
      ['ack with extra field', 'POST', `/api/v1/alerts/${missing}/acknowledge`, { who: 'me' }, 400],
      [
        'rule without threshold',
        'POST',
        '/api/v1/alert-rules',
        { name: 'x', kind: 'temperature', severity: 'warning' },
        400,
      ],
      [
        'rule with unknown kind',
        'POST',
        '/api/v1/alert-rules',
        { name: 'x', kind: 'smoke', severity: 'warning', threshold: 1 },
        400,
      ],
      [
        'rule with bad selector',
        'POST',
        '/api/v1/alert-rules',
        { name: 'x', kind: 'board_unreachable', severity: 'warning', selector: '=bad' },
        400,
      ],
      [
        'rule with negative dwell',
        'POST',
        '/api/v1/alert-rules',
        { name: 'x', kind: 'board_unreachable', severity: 'info', dwell_seconds: -1 },
        400,
      ],
      [
        'power_off without nodes',
        'POST',
        '/api/v1/alert-rules',
        { name: 'x', kind: 'temperature', severity: 'critical', threshold: 90, remediation: 'power_off' },
        400,
      ],
      [
        'duplicate rule name',
        'POST',
        '/api/v1/alert-rules',
        { name: 'hot_warning', kind: 'temperature', severity: 'warning', threshold: 1 },
        409,
      ],
      ['empty rule patch', 'PATCH', `/api/v1/alert-rules/${missing}`, {}, 400],
      ['patch missing rule', 'PATCH', `/api/v1/alert-rules/${missing}`, { enabled: false }, 404],
      ['delete missing rule', 'DELETE', `/api/v1/alert-rules/${missing}`, undefined, 404],
      [
        'silence without matchers',
        'POST',
        '/api/v1/silences',
        { matchers: [], ends_at: '2099-01-01T00:00:00Z', comment: 'x' },
        400,
      ],
      [
        'silence ending in the past',
        'POST',
        '/api/v1/silences',
        { matchers: [{ name: 'a', value: 'b' }], ends_at: '2001-01-01T00:00:00Z', comment: 'x' },
        400,
      ],
      [
        'silence with a bad regex',
        'POST',
        '/api/v1/silences',
        { matchers: [{ name: 'a', value: '(', is_regex: true }], ends_at: '2099-01-01T00:00:00Z', comment: 'x' },
        400,
      ],
      [
        'silence with a bad date',
        'POST',
        '/api/v1/silences',
        { matchers: [{ name: 'a', value: 'b' }], ends_at: 'tomorrow', comment: 'x' },
        400,
      ],
      ['expire missing silence', 'DELETE', `/api/v1/silences/${missing}`, undefined, 404],
      ['silence state filter', 'GET', '/api/v1/silences?state=sleeping', undefined, 400],
      ['receiver with bad url', 'POST', '/api/v1/alert-receivers', { name: 'r', type: 'webhook', url: 'ftp://x' }, 400],
      [
        'receiver with short secret',
        'POST',
        '/api/v1/alert-receivers',
        { name: 'r', type: 'webhook', url: 'http://x', secret: 'short' },
        400,
      ],
      [
        'alertmanager with secret',
        'POST',
        '/api/v1/alert-receivers',
        { name: 'r', type: 'alertmanager', url: 'http://x', secret: '0123456789abcdef0' },
        422,
      ],
      [
        'duplicate receiver',
        'POST',
        '/api/v1/alert-receivers',
        { name: 'hook', type: 'webhook', url: 'http://x' },
        409,
      ],
      ['test missing receiver', 'POST', `/api/v1/alert-receivers/${missing}/test`, undefined, 404],
      ['events with unknown type', 'GET', '/api/v1/events?types=weather', undefined, 400],
      ['events with bad board id', 'GET', '/api/v1/events?board_id=1', undefined, 400],
      ['not json', 'POST', '/api/v1/alert-rules', '{', 400],
    ];
    it.each(cases)('%s', async (_name, method, path, body, status) => {
      const res =
        typeof body === 'string' ? await api(method, path, undefined, { raw: body }) : await api(method, path, body);
      expect(res.status).toBe(status);
      expect(res.type).toContain('application/problem+json');
    });

    it('roles: a viewer reads alerts but cannot acknowledge, silence or change rules', async () => {
      const token = await api('POST', '/api/v1/tokens', { name: 'viewer1', role: 'viewer' });
      expect(token.status).toBe(201);
      const viewer = token.body.token as string;
      expect((await api('GET', '/api/v1/alerts', undefined, { token: viewer })).status).toBe(200);
      expect((await api('POST', `/api/v1/alerts/${missing}/acknowledge`, {}, { token: viewer })).status).toBe(403);
      expect((await api('POST', '/api/v1/silences', {}, { token: viewer })).status).toBe(403);
      expect((await api('GET', '/api/v1/alert-receivers', undefined, { token: viewer })).status).toBe(403);
      expect((await api('GET', '/api/v1/events', undefined, { token: null })).status).toBe(401);
    });
  });
});

describe('alertmanager binary', () => {
  (amBinary ? it : it.skip)(
    amBinary
      ? 'is installed'
      : 'skipped: prometheus-alertmanager is not installed (apt-get install prometheus-alertmanager)',
    () => expect(amBinary).not.toBeNull(),
  );
});
