// A board that refused its credentials to a poll whose result was not written (the poll outlived its lease, so a
// newer claim holds the board) must still end up `credentials_invalid`: the next poll records the refusal this
// process already saw, without logging in again (each failed login counts towards the board's ban). Before, the
// process kept the refusal in memory, skipped every later poll of the board, and the stored state stayed `online`
// for good (CI saw test/boards/board-security.e2e-spec.ts wait 30 s for credentials_invalid on a loaded machine).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, describe } from '@jest/globals';
import pg from 'pg';
import { PollingScheduler } from '../../src/polling/polling.scheduler.js';
import { PollingRepository } from '../../src/polling/polling.repository.js';
import { PollingWorker } from '../../src/polling/polling.worker.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, type TestApp } from '../support/app.js';

describe('a refusal whose poll lost its lease', () => {
  let app: TestApp;
  let rack: RackProcess;
  let sql: pg.Client;
  let id: string;

  beforeAll(async () => {
    rack = await startRack(1);
    app = await startTestApp();
    app.app.get(PollingScheduler).enabled = false; // this test polls by hand, under the leases it chooses
    sql = new pg.Client({ connectionString: app.db.url });
    await sql.connect();
    const api = apiClient(app.baseUrl);
    const res = await api('POST', '/api/v1/boards', {
      name: 'refusing',
      base_url: rack.boardUrl(1),
      credentials: { username: 'root', password: 'turing' },
    });
    expect(res.status).toBe(201);
    expect(res.body.state).toBe('online');
    id = res.body.id;
    expect(
      (await api('PATCH', `/api/v1/boards/${id}`, { credentials: { username: 'root', password: 'wrong' } })).status,
    ).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await sql?.end();
    await app?.close();
    await rack?.stop();
  });

  const failedLogins = () =>
    readFileSync(join(rack.stateDir, 'boards', '1', 'audit.log'), 'utf8')
      .split('\n')
      .filter((l) => / audit: login /.test(l) && !/: ok$/.test(l)).length;
  /**
   * Failed logins once the board's audit log has caught up: the board appends each line after it answers (the
   * append is not awaited), so a read right after the poll may miss the last one.
   */
  const failedLoginsSettled = async (atLeast: number) =>
    (
      await waitFor(
        'the audit log',
        () => Promise.resolve(failedLogins()),
        (n) => n >= atLeast,
        5000,
      )
    ).value;
  const stored = async () =>
    (
      await sql.query<{ state: string; reason: string | null }>(
        `SELECT "state"::text AS state, "stateReason" AS reason FROM "Board" WHERE "id" = $1`,
        [id],
      )
    ).rows[0]!;

  it('records credentials_invalid on the next poll, without a second login', async () => {
    const repository = app.app.get(PollingRepository);
    const worker = app.app.get(PollingWorker);
    const first = (await repository.lease([id], 60)).get(id)!;
    // The lease runs out while the poll is slow, and the scheduler claims the board again.
    await sql.query(
      `UPDATE "BoardSchedule" SET "pollLease" = "pollLease" + 1, "pollLeaseUntil" = now() + interval '60 s'
       WHERE "boardId" = $1`,
      [id],
    );
    const second = first + 1;
    await worker.pollBatch({ boards: [{ id, slow: false, lease: first }] });
    expect(await failedLoginsSettled(1)).toBe(1); // the board refused the password…
    expect((await stored()).state).toBe('online'); // …but that poll's result was not the board's to write

    await worker.pollBatch({ boards: [{ id, slow: false, lease: second }] });
    const after = await stored();
    expect(after.state).toBe('credentials_invalid');
    expect(after.reason).toMatch(/401|refused|credentials/i);
    // No second login: nothing more reaches the audit log, even given the time an append takes.
    await new Promise((r) => setTimeout(r, 500));
    expect(failedLogins()).toBe(1);
    const timeline = await apiClient(app.baseUrl)('GET', `/api/v1/boards/${id}/timeline?kind=state`);
    expect(timeline.body.items.map((e: { summary: string }) => e.summary)).toContainEqual(
      expect.stringMatching(/^online → credentials_invalid/),
    );
  });
});
