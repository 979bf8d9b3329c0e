// Issue #14, High 1: a board registered under a non-canonical URL (upper-case host, explicit default port) was never
// pinned, so an impostor with another certificate on its address received the session token, then the password.
// Base URLs are now stored in one spelling and pins are saved by board id. Real PostgreSQL, Redis, a real
// `board-agent --tls` and an impostor HTTPS server with a certificate of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import pg from 'pg';
import { makeTestPki } from '../../apps/agent/test/support/pki.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';
import { requireRedis } from '../support/redis.js';
import { apiClient, waitFor } from './api.js';
import { presentedFingerprint, randomPort, startTlsBoard, type TlsBoard } from './tls-board.js';

const redis = requireRedis();
const PORT = randomPort();

interface Impostor {
  requests: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }>;
  server: Server;
}

/** An HTTPS server on PORT with a certificate of its own that records everything sent to it. */
async function startImpostor(dir: string): Promise<Impostor> {
  const pki = await makeTestPki(dir);
  const requests: Impostor['requests'] = [];
  const server = createServer({ cert: pki.strangerCert, key: pki.strangerKey }, (req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"stolen"}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(PORT, '127.0.0.1', resolve);
  });
  return { requests, server };
}

redis.describe('certificate pin behind a non-canonical base URL', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let board: TlsBoard | undefined;
  let impostor: Impostor | undefined;
  const pkiDir = mkdtempSync(join(tmpdir(), 'tpfleet-impostor-'));

  beforeAll(async () => {
    board = await startTlsBoard(PORT);
    app = await startTestApp({
      redisUrl: redis.url,
      env: {
        POLL_INTERVAL_SECONDS: '1',
        POLL_TIMEOUT_MS: '2000',
        POLL_UNREACHABLE_AFTER: '2',
        POLL_SLOW_INTERVAL_SECONDS: '2',
      },
    });
    api = apiClient(app.baseUrl);
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await board?.stop();
    await new Promise((r) => (impostor ? impostor.server.close(r) : r(undefined)));
    rmSync(pkiDir, { recursive: true, force: true });
  });

  it('stores https://LOCALHOST:<port>/ as https://localhost:<port>, pins it, and sends nothing to an impostor', async () => {
    const res = await api('POST', '/api/v1/boards', {
      name: 'upper',
      base_url: `https://LOCALHOST:${PORT}/`,
      credentials: { username: 'root', password: 'turing' },
    });
    expect(res.status).toBe(201);
    expect(res.body.base_url).toBe(`https://localhost:${PORT}`);
    expect(res.body.state).toBe('online');
    const id = res.body.id as string;
    // The pin is on the row before the first request went out (the connection waited for it).
    expect(res.body.tls_fingerprint).toBe(await presentedFingerprint(PORT));

    await board!.stop();
    board = undefined;
    impostor = await startImpostor(pkiDir);

    const refused = await waitFor(
      'the board refused for its certificate',
      () => api('GET', `/api/v1/boards/${id}`),
      (r) => /certificate changed/.test(r.body.state_reason ?? ''),
      20_000,
      250,
    );
    expect(refused.value.body.tls_fingerprint).toBe(res.body.tls_fingerprint);
    // A few more polls: still nothing reaches the impostor (no token, no password, not even a GET).
    await new Promise((r) => setTimeout(r, 2500));
    expect(impostor.requests).toEqual([]);
  }, 60_000);

  it('stores an explicit default port and upper-case scheme/host in one spelling', async () => {
    const res = await api('POST', '/api/v1/boards/bulk', {
      boards: [
        { name: 'dflt-https', base_url: 'HTTPS://Board-9.Example:443/' },
        { name: 'dflt-http', base_url: 'http://10.9.9.9:80/boards/2/api/bmc' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.items.map((b: { base_url: string }) => b.base_url)).toEqual([
      'https://board-9.example',
      'http://10.9.9.9/boards/2',
    ]);
    // The same address spelled another way is the same board.
    const again = await api('POST', '/api/v1/boards/bulk', {
      boards: [{ name: 'dflt-again', base_url: 'https://BOARD-9.example' }],
    });
    expect(again.status).toBe(409);
  });

  it('refuses user:password in a base URL with a clear 400', async () => {
    const res = await api('POST', '/api/v1/boards/bulk', {
      boards: [{ name: 'userinfo', base_url: 'https://root:turing@10.9.9.10' }],
    });
    expect(res.status).toBe(400);
    expect(res.type).toMatch(/problem\+json/);
    expect(JSON.stringify(res.body)).toMatch(/user:password/);
    expect(JSON.stringify(res.body)).not.toMatch(/turing/);
  });
});

// On Redis: the queue's PostgreSQL backend may still hold a connection when the database is dropped.
redis.describe('rows stored before normalisation', () => {
  it('get their canonical base URL at boot', async () => {
    const db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(
      `INSERT INTO "Board" ("id", "name", "baseUrl", "updatedAt") VALUES
         ('00000000-0000-4000-8000-000000000001', 'legacy-a', 'https://LOCALHOST:443/', now()),
         ('00000000-0000-4000-8000-000000000002', 'legacy-b', 'http://10.1.1.1:80', now()),
         ('00000000-0000-4000-8000-000000000003', 'legacy-c', 'https://10.1.1.2:8443', now());
       INSERT INTO "BoardSchedule" ("boardId") SELECT "id" FROM "Board"`,
    );
    const app = await startTestApp({ db, redisUrl: redis.url });
    try {
      const rows = await client.query<{ name: string; baseUrl: string }>(
        `SELECT "name", "baseUrl" FROM "Board" ORDER BY "name"`,
      );
      expect(rows.rows).toEqual([
        { name: 'legacy-a', baseUrl: 'https://localhost' },
        { name: 'legacy-b', baseUrl: 'http://10.1.1.1' },
        { name: 'legacy-c', baseUrl: 'https://10.1.1.2:8443' },
      ]);
    } finally {
      await client.end();
      await app.close();
      await db.drop();
    }
  }, 60_000);
});
