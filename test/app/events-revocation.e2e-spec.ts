// Issue #14 (Low): an SSE stream lives only as long as its credential. Two fleet-manager instances on one PostgreSQL:
// a token revoked through one instance ends the streams opened with it (bearer or console cookie) on both within
// seconds, a sign-out ends that session's streams, other tokens' streams stay open, and a revocation nobody announced
// (written straight to the database, as if the message were lost) is caught by the periodic re-check.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { request } from 'undici';
import { EventsController } from '../../src/events/events.controller.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

interface OpenStream {
  text: () => string;
  ended: () => boolean;
  destroy: () => void;
}

async function openStream(baseUrl: string, headers: Record<string, string>): Promise<OpenStream> {
  const res = await request(`${baseUrl}/api/v1/events?types=alert`, { headers });
  expect(res.statusCode).toBe(200);
  let text = '';
  let ended = false;
  res.body.on('data', (c: Buffer) => (text += c.toString()));
  res.body.on('end', () => (ended = true));
  res.body.on('error', () => (ended = true));
  return { text: () => text, ended: () => ended, destroy: () => res.body.destroy() };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('event streams end with their credential', () => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let sql: pg.Client;
  const streams: OpenStream[] = [];
  const open = async (baseUrl: string, headers: Record<string, string>) => {
    const s = await openStream(baseUrl, headers);
    streams.push(s);
    return s;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await startTestApp({ db });
    b = await startTestApp({ db });
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  }, 90_000);

  afterAll(async () => {
    streams.forEach((s) => s.destroy());
    await sql?.end();
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  async function createToken(name: string): Promise<{ id: string; token: string }> {
    const res = await apiClient(a.baseUrl)('POST', '/api/v1/tokens', { name, role: 'viewer' });
    expect(res.status).toBe(201);
    return res.body as { id: string; token: string };
  }

  /** Signs in to the console: the session cookie and its CSRF token. */
  async function signIn(baseUrl: string, token: string): Promise<{ cookie: string; csrf: string }> {
    const res = await request(`${baseUrl}/api/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(res.statusCode).toBe(201);
    const body = (await res.body.json()) as { csrf_token: string };
    return { cookie: String(res.headers['set-cookie']).split(';')[0]!, csrf: body.csrf_token };
  }

  it('a token revoked on one instance ends its bearer and cookie streams on both; others stay open', async () => {
    const doomed = await createToken('doomed');
    const kept = await createToken('kept');
    const session = await signIn(a.baseUrl, doomed.token);

    const onB = await open(b.baseUrl, bearer(doomed.token));
    const onA = await open(a.baseUrl, bearer(doomed.token));
    const cookieOnB = await open(b.baseUrl, { cookie: session.cookie });
    const other = await open(b.baseUrl, bearer(kept.token));

    const revoked = await apiClient(a.baseUrl)('DELETE', `/api/v1/tokens/${doomed.id}`);
    expect(revoked.status).toBe(200);

    // Well inside the 15 s re-check and the 10 s token cache: the revocation message does it.
    await waitFor(
      'the revoked token’s streams to end',
      async () => [onA, onB, cookieOnB].every((s) => s.ended()),
      (v) => v,
      5000,
    );
    for (const s of [onA, onB, cookieOnB]) {
      expect(s.text()).toContain('event: end\ndata: {"reason":"the API token was revoked"}');
    }
    // Instance B had the token cached a moment ago; the message emptied its cache, so a new stream is refused now.
    const again = await request(`${b.baseUrl}/api/v1/events`, { headers: bearer(doomed.token) });
    expect(again.statusCode).toBe(401);
    await again.body.text();

    await new Promise((r) => setTimeout(r, 500));
    expect(other.ended()).toBe(false);
    expect(other.text()).not.toContain('event: end');
  }, 30_000);

  it('a sign-out ends that session’s streams on every instance, not the token’s other streams', async () => {
    const user = await createToken('signs-out');
    const session = await signIn(b.baseUrl, user.token);
    const cookieOnA = await open(a.baseUrl, { cookie: session.cookie });
    const bearerOnA = await open(a.baseUrl, bearer(user.token));

    const out = await request(`${b.baseUrl}/api/v1/session`, {
      method: 'DELETE',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
    });
    expect(out.statusCode).toBe(204);
    await out.body.text();

    await waitFor(
      'the session’s stream to end',
      async () => cookieOnA.ended(),
      (v) => v,
      5000,
    );
    expect(cookieOnA.text()).toContain('"reason":"the console session was signed out"');
    await new Promise((r) => setTimeout(r, 500));
    expect(bearerOnA.ended()).toBe(false);
  }, 30_000);

  it('a revocation whose message was lost is caught by the periodic re-check', async () => {
    a.app.get(EventsController).revalidateMs = 500;
    const quiet = await createToken('quietly-revoked');
    const kept = await createToken('still-fine');
    const stream = await open(a.baseUrl, bearer(quiet.token));
    const other = await open(a.baseUrl, bearer(kept.token));
    // Straight into the database: no message on the bus. The token cache may trust it up to 10 s more.
    await sql.query(`UPDATE "ApiToken" SET "revokedAt" = now() WHERE "id" = $1`, [quiet.id]);
    await waitFor(
      'the re-check to end the stream',
      async () => stream.ended(),
      (v) => v,
      15_000,
    );
    expect(stream.text()).toContain('"reason":"the API token is unknown, expired or revoked"');
    expect(other.ended()).toBe(false);
  }, 30_000);
});
