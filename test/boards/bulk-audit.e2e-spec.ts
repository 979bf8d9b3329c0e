// Issue #14 (Low): the per-board audit entries of a bulk node action fail closed as a single action's entry does.
// When they cannot be written the request is refused with 503 and nothing is created or queued (they used to be
// written after the jobs were queued, and a failure was only logged). Real PostgreSQL; the audit write is made to
// fail with a constraint on the real table that only the per-board entries break.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';
import { apiClient } from './api.js';

describe('bulk node actions and the audit log', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let db: pg.Client;
  const ids: string[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    api = apiClient(app.baseUrl);
    db = new pg.Client({ connectionString: app.db.url });
    await db.connect();
    const created = await api('POST', '/api/v1/boards/bulk', {
      boards: [
        // Nothing answers on port 9: the queued jobs fail, which is not what this test is about.
        { name: 'bulk-a', base_url: 'http://127.0.0.1:9', labels: { bulk: 'audit' } },
        { name: 'bulk-b', base_url: 'http://127.0.0.1:9/b', labels: { bulk: 'audit' } },
        { name: 'bulk-c', base_url: 'http://127.0.0.1:9/c', labels: { bulk: 'audit' } },
      ],
    });
    expect(created.status).toBe(201);
    ids.push(...(created.body.items as Array<{ id: string }>).map((b) => b.id));
    // Two boards as if reached once (a dialect is known), so the action is queued for them; bulk-c stays refused.
    await db.query(`UPDATE "Board" SET "dialect" = 'agent', "daemonVersion" = '2.36.3' WHERE "id" = ANY($1::uuid[])`, [
      ids.slice(0, 2),
    ]);
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await app?.close();
  });

  const bulk = () => api('POST', '/api/v1/node-actions', { action: 'power_on', selector: 'bulk=audit', nodes: [1, 2] });
  const count = async (sql: string) => Number((await db.query(sql)).rows[0].n);

  it('refuses the whole action with 503 when the per-board entries cannot be written, and queues nothing', async () => {
    const actionsBefore = await count(`SELECT count(*) AS n FROM "NodeAction"`);
    await db.query(
      `ALTER TABLE "AuditEntry" ADD CONSTRAINT bulk_audit_down CHECK ("action" NOT LIKE 'node-action %') NOT VALID`,
    );
    let res;
    try {
      res = await bulk();
    } finally {
      await db.query(`ALTER TABLE "AuditEntry" DROP CONSTRAINT bulk_audit_down`);
    }
    expect(res.status).toBe(503);
    expect(res.type).toMatch(/problem\+json/);
    expect(res.body.detail).toMatch(/audit log could not be written, so the action was not carried out/);
    expect(await count(`SELECT count(*) AS n FROM "NodeAction"`)).toBe(actionsBefore);
    expect(await count(`SELECT count(*) AS n FROM "NodeActionResult"`)).toBe(0);
  });

  it('with the audit up: one entry per board, queued or refused, tied to the action', async () => {
    const res = await bulk();
    expect(res.status).toBe(202);
    const actionId = res.body.id as string;
    const rows = await db.query<{ boardId: string; outcome: string; status: number; detail: { action_id: string } }>(
      `SELECT "boardId", "outcome", "status", "detail" FROM "AuditEntry" WHERE "action" = 'node-action power_on'`,
    );
    const byBoard = new Map(rows.rows.map((r) => [r.boardId, r]));
    expect(rows.rows).toHaveLength(3);
    expect(byBoard.get(ids[0]!)).toMatchObject({ outcome: 'queued', status: 202, detail: { action_id: actionId } });
    expect(byBoard.get(ids[1]!)).toMatchObject({ outcome: 'queued', status: 202 });
    expect(byBoard.get(ids[2]!)?.outcome).toMatch(/^refused: board bulk-c has not been reached yet/);
    const timeline = await api('GET', `/api/v1/boards/${ids[0]}/timeline?kind=user_action`);
    expect(JSON.stringify(timeline.body)).toContain('node-action power_on');
  });
});
