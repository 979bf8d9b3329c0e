// The database goes away under a running fleet manager (queues in PostgreSQL, the default): every connection of the
// app is terminated, as a PostgreSQL restart does, and for ten seconds no new one is accepted. The process must live
// through it: /healthz keeps answering, /readyz says the database is down, the loss is logged a few times rather
// than in a loop, and once the database is back the app reconnects by itself and polls its boards again.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { request } from 'undici';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { testEnv, withDatabase } from '../support/env.js';

const OUTAGE_MS = 10_000;
/**
 * Errors the whole outage may log. Each part that lost its connection says so, and repeats it now and then while the
 * database stays away (the queue workers, the polling clock, the event bus, readiness probes): a few dozen at most.
 * Before the fix a queue worker logged "Connection terminated unexpectedly" thousands of times a second.
 */
const MAX_ERRORS_DURING_OUTAGE = 30;

async function get(url: string): Promise<{ status: number; body: any }> {
  const res = await request(url, { headersTimeout: 5000, bodyTimeout: 5000 });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : null };
}

// Terminating backends and refusing connections needs a PostgreSQL server (the in-memory PGlite has no backends).
const describeOnServer = testEnv.databaseUrl === null ? describe.skip : describe;

describeOnServer('a PostgreSQL outage under a running fleet manager (queues in PostgreSQL)', () => {
  let rack: RackProcess;
  let app: TestApp;
  let admin: pg.Client;
  let dbName: string;

  beforeAll(async () => {
    rack = await startRack(1);
    app = await startTestApp({ env: { POLL_INTERVAL_SECONDS: '1', POLL_TIMEOUT_MS: '2000' } });
    dbName = new URL(app.db.url).pathname.slice(1);
    // On the maintenance database, so the outage of the app's database does not touch it.
    admin = new pg.Client({ connectionString: withDatabase(app.db.url, 'postgres') });
    await admin.connect();
  }, 60_000);

  afterAll(async () => {
    await admin?.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`).catch(() => undefined);
    await admin?.end();
    await app?.close();
    await rack?.stop();
  });

  it('survives, says the database is down, logs it a bounded number of times, and polls again once it is back', async () => {
    const api = apiClient(app.baseUrl);
    const created = await api('POST', '/api/v1/boards', {
      name: 'b1',
      base_url: rack.boardUrl(1),
      credentials: { username: 'root', password: 'turing' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await waitFor(
      'the board online',
      () => api('GET', `/api/v1/boards/${id}`),
      (r) => r.body.state === 'online',
      20_000,
    );

    // The outage: no new connection to the app's database, every existing one terminated (again each second, as a
    // restarting server refuses and drops whatever reaches it).
    const errorsBefore = app.errorLines().length;
    const started = Date.now();
    await admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS false`);
    const terminate = () =>
      admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [dbName]);
    await terminate();
    let sawDown = false;
    while (Date.now() - started < OUTAGE_MS) {
      await new Promise((r) => setTimeout(r, 1000));
      await terminate();
      expect((await get(`${app.baseUrl}/healthz`)).status).toBe(200);
      const ready = await get(`${app.baseUrl}/readyz`);
      if (ready.status === 503 && ready.body.checks.database !== 'ok') {
        sawDown = true;
      }
    }
    const errors = app.errorLines().slice(errorsBefore);
    expect(sawDown).toBe(true);
    // The count, and on failure which errors repeated (the log lines themselves went to the console).
    const tally = new Map<string, number>();
    for (const line of errors) {
      tally.set(line.split('\n')[0]!, (tally.get(line.split('\n')[0]!) ?? 0) + 1);
    }
    const repeated = [...tally].sort((a, b) => b[1] - a[1]).slice(0, 5);
    expect({ errors: errors.length <= MAX_ERRORS_DURING_OUTAGE ? 'bounded' : errors.length, repeated }).toEqual({
      errors: 'bounded',
      repeated,
    });

    // The database is back: the app is ready again and polls the board.
    await admin.query(`ALTER DATABASE ${dbName} ALLOW_CONNECTIONS true`);
    const back = Date.now();
    await waitFor(
      '/readyz ok',
      () => get(`${app.baseUrl}/readyz`),
      (r) => r.status === 200,
      30_000,
      250,
    );
    await waitFor(
      'a poll of the board after the outage',
      () => api('GET', `/api/v1/boards/${id}`),
      (r) => r.body.state === 'online' && Date.parse(r.body.last_success_at) > back,
      45_000,
      250,
    );
    expect((await get(`${app.baseUrl}/healthz`)).status).toBe(200);
  }, 120_000);
});
