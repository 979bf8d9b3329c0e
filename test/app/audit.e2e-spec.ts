// Issue #14, Medium 6: the audit log records the validated request (never raw input, nothing below the redaction
// depth), bounds what it stores, and fails closed: an action whose entry cannot be written is refused, not run.
// Real PostgreSQL; the audit write is made to fail with a constraint on the real table.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { apiClient } from '../boards/api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();

redis.describe('audit log', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let db: pg.Client;
  let id: string;

  beforeAll(async () => {
    app = await startTestApp({ redisUrl: redis.url });
    api = apiClient(app.baseUrl);
    db = new pg.Client({ connectionString: app.db.url });
    await db.connect();
    const created = await api('POST', '/api/v1/boards/bulk', {
      boards: [{ name: 'audited', base_url: 'http://127.0.0.1:9' }],
    });
    id = created.body.items[0].id;
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await app?.close();
  });

  async function entries(): Promise<Array<{ outcome: string; status: number; detail: unknown }>> {
    const res = await db.query(
      `SELECT "outcome", "status", "detail" FROM "AuditEntry" WHERE "boardId" = $1 ORDER BY "id"`,
      [id],
    );
    return res.rows;
  }

  it('never stores a secret sent deep inside a refused body', async () => {
    let deep: Record<string, unknown> = { password: 'hunter2' };
    for (let i = 0; i < 10; i++) {
      deep = { inner: deep };
    }
    const res = await api('PATCH', `/api/v1/boards/${id}`, { notes: 'x', extra: deep });
    expect(res.status).toBe(400);
    const all = JSON.stringify(await entries());
    expect(all).toContain('refused');
    expect(all).not.toContain('hunter2');
    const timeline = await api('GET', `/api/v1/boards/${id}/timeline?kind=user_action`);
    expect(JSON.stringify(timeline.body)).not.toContain('hunter2');
  });

  it('records the request as validated, not as sent', async () => {
    const res = await api('PATCH', `/api/v1/boards/${id}`, { base_url: 'HTTP://Board-Audit.Example:80/' });
    expect(res.status).toBe(200);
    const last = (await entries()).at(-1)!;
    expect(last).toMatchObject({
      outcome: 'ok',
      status: 200,
      detail: { body: { base_url: 'http://board-audit.example' } },
    });
  });

  it('refuses an action whose audit entry cannot be written, and does not run it', async () => {
    await db.query(`ALTER TABLE "AuditEntry" ADD CONSTRAINT audit_down CHECK ("actor" <> 'bootstrap admin') NOT VALID`);
    try {
      const actor = await db.query(`SELECT "actor" FROM "AuditEntry" ORDER BY "id" DESC LIMIT 1`);
      expect(actor.rows[0].actor).toBe('bootstrap admin');
      const res = await api('PATCH', `/api/v1/boards/${id}`, { notes: 'written while the audit is down' });
      expect(res.status).toBe(503);
      expect(res.type).toMatch(/problem\+json/);
      expect(res.body.detail).toMatch(/audit log could not be written, so the action was not carried out/);
    } finally {
      await db.query(`ALTER TABLE "AuditEntry" DROP CONSTRAINT audit_down`);
    }
    expect((await api('GET', `/api/v1/boards/${id}`)).body.notes).not.toBe('written while the audit is down');
  });
});
