// Issue #14 (fleet manager, Medium 3 and 4): a board's stored password never follows its base URL to another host
// unless an admin says so, and a board that refused its credentials (or banned us) is sent nothing by any caller,
// a viewer's fleet catalogue or live config diff included. Real PostgreSQL, a real rack of simulated boards and a
// recording HTTP server standing in for "another host".
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app.js';
import { apiClient, waitFor } from './api.js';
import { startRack, type RackProcess } from './rack.js';

const PASSWORD = 'turing';

describe('board credentials and who may cause a login', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let rack: RackProcess;
  let db: pg.Client;
  let elsewhere: Server;
  let elsewhereUrl: string;
  const received: string[] = [];
  let viewer: string;

  beforeAll(async () => {
    rack = await startRack(8);
    app = await startTestApp({ env: { POLL_INTERVAL_SECONDS: '1', POLL_TIMEOUT_MS: '2000' } });
    api = apiClient(app.baseUrl);
    db = new pg.Client({ connectionString: app.db.url });
    await db.connect();
    elsewhere = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''} ${body}`);
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    viewer = (await api('POST', '/api/v1/tokens', { name: 'viewer', role: 'viewer' })).body.token;
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await app?.close();
    await rack?.stop();
    await new Promise((r) => elsewhere?.close(r));
  });

  async function register(name: string, i: number): Promise<string> {
    const res = await api('POST', '/api/v1/boards', {
      name,
      base_url: rack.boardUrl(i),
      credentials: { username: 'root', password: PASSWORD },
    });
    expect(res.status).toBe(201);
    expect(['online', 'degraded']).toContain(res.body.state);
    expect(res.body.dialect).not.toBeNull(); // reached and logged in (a failed first poll is degraded too)
    return res.body.id as string;
  }

  /** Logins the board has seen (its audit log writes one line per login, issue 14). */
  function logins(i: number): number {
    const log = readFileSync(join(rack.stateDir, 'boards', String(i), 'audit.log'), 'utf8');
    return log.split('\n').filter((l) => / audit: login /.test(l)).length;
  }

  describe('a new origin needs the credentials again', () => {
    let id: string;

    beforeAll(async () => {
      id = await register('moving', 7); // the rack numbers its boards 1..8
    }, 30_000);

    it('refuses to move a board with stored credentials to another host without them', async () => {
      const res = await api('PATCH', `/api/v1/boards/${id}`, { base_url: elsewhereUrl });
      expect(res.status).toBe(409);
      expect(res.type).toMatch(/problem\+json/);
      expect(res.body.detail).toMatch(/credentials again.*keep_credentials: true/);
      expect((await api('GET', `/api/v1/boards/${id}`)).body.base_url).toBe(rack.boardUrl(7));
      await new Promise((r) => setTimeout(r, 1500)); // a poll or two
      expect(received).toEqual([]);
    });

    it('moves within the same origin (another path on the rack) without asking', async () => {
      const res = await api('PATCH', `/api/v1/boards/${id}`, { base_url: rack.boardUrl(4) });
      expect(res.status).toBe(200);
      expect(res.body.base_url).toBe(rack.boardUrl(4));
      const back = await api('PATCH', `/api/v1/boards/${id}`, { base_url: rack.boardUrl(7) });
      expect(back.status).toBe(200);
    });

    it('moves with new credentials, which are what the new host receives', async () => {
      const res = await api('PATCH', `/api/v1/boards/${id}`, {
        base_url: elsewhereUrl,
        credentials: { username: 'root', password: 'the-new-one' },
      });
      expect(res.status).toBe(200);
      // Polled now, in the request, at the new host, even if a poll of the old one was in flight.
      const polled = await api('POST', `/api/v1/boards/${id}/poll`);
      expect(polled.body.state_reason).toBe('http_4xx: authenticate: 404');
      expect(received.length).toBeGreaterThan(0);
      expect(received.join('\n')).not.toContain(PASSWORD);
      received.length = 0;
    });

    it('polls the new host in the request even while a slow poll of the old one is in flight', async () => {
      const slow = await register('moving-slowly', 8);
      // Every answer of the old host now takes 1.5 s: with a 1 s interval a scheduled poll is always in flight.
      expect((await rack.control('POST', '/rack/boards/8/faults', { latencyMs: 1500 })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1200));
      const res = await api('PATCH', `/api/v1/boards/${slow}`, {
        base_url: `${elsewhereUrl}/moved-while-polled`,
        credentials: { username: 'root', password: 'the-new-one' },
      });
      expect(res.status).toBe(200);
      const polled = await api('POST', `/api/v1/boards/${slow}/poll`);
      expect(polled.body.state_reason).toBe('http_4xx: authenticate: 404');
      expect(received.join('\n')).toContain('the-new-one');
      expect(received.join('\n')).not.toContain(PASSWORD);
      received.length = 0;
      await rack.control('DELETE', '/rack/boards/8/faults');
    }, 30_000);

    it('sends the stored credentials to a new origin only with keep_credentials: true, recorded', async () => {
      const moved = await register('kept', 3);
      const res = await api('PATCH', `/api/v1/boards/${moved}`, {
        base_url: elsewhereUrl.replace('127.0.0.1', 'localhost'),
        keep_credentials: true,
      });
      expect(res.status).toBe(200);
      const timeline = await api('GET', `/api/v1/boards/${moved}/timeline?kind=config,user_action`);
      const text = JSON.stringify(timeline.body.items);
      expect(text).toMatch(/stored credentials kept for the new address http:\/\/localhost:\d+/);
      expect(text).toMatch(/"keep_credentials":true/);
    });
  });

  describe('no login for a board that refused its credentials or banned us', () => {
    let id: string;

    beforeAll(async () => {
      id = await register('refusing', 1);
      // A stored version to diff against, while the credentials still work.
      expect((await api('POST', `/api/v1/boards/${id}/config/backups`)).status).toBe(202);
      await waitFor(
        'a stored version',
        () => api('GET', `/api/v1/boards/${id}/config/versions`),
        (r) => r.body.items?.length > 0,
        15_000,
      );
      const patched = await api('PATCH', `/api/v1/boards/${id}`, {
        credentials: { username: 'root', password: 'wrong' },
      });
      expect(patched.status).toBe(200);
      await api('POST', `/api/v1/boards/${id}/poll`); // now, in the request (not the scheduler's tick)
      await waitFor(
        'credentials_invalid',
        () => api('GET', `/api/v1/boards/${id}`),
        (r) => r.body.state === 'credentials_invalid',
        30_000, // the next poll is due at once; a loaded machine (parallel test runs) can still take a while
      );
    }, 60_000);

    it('a viewer asking for the live config diff or the fleet catalogue causes no login', async () => {
      // The board appends an audit line after it answers (not awaited): the last poll's login may still be on its way.
      await new Promise((r) => setTimeout(r, 500));
      const before = logins(1);
      const diff = await api('GET', `/api/v1/boards/${id}/config/diff?from=1&to=live`, undefined, { token: viewer });
      expect(diff.status).toBe(409);
      expect(diff.type).toMatch(/problem\+json/);
      expect(diff.body.detail).toMatch(/refused its stored credentials/);
      const catalogue = await api('GET', '/api/v1/firmware/catalogue?refresh=1', undefined, { token: viewer });
      expect(catalogue.status).toBe(200);
      const pollNow = await api('POST', `/api/v1/boards/${id}/poll`);
      expect(pollNow.status).toBeLessThan(500);
      await new Promise((r) => setTimeout(r, 1500)); // and the poller, a poll or two later
      expect(logins(1)).toBe(before);
    });

    it('a banned board is sent nothing until the ban ends (503 naming the wait)', async () => {
      const banned = await register('banned', 2);
      expect((await api('POST', `/api/v1/boards/${banned}/config/backups`)).status).toBe(202);
      await waitFor(
        'a stored version',
        () => api('GET', `/api/v1/boards/${banned}/config/versions`),
        (r) => r.body.items?.length > 0,
        15_000,
      );
      // The ban as the poller records it on a 429 (the board's own ban is exercised in fleet.e2e-spec.ts).
      // (Twice: a poll already in flight at the first write would overwrite it with its own result.)
      for (const _ of [1, 2]) {
        await db.query(
          `UPDATE "BoardSchedule" SET "nextPollAt" = now() + interval '1 hour', "nextSlowPollAt" = now() + interval '1 hour'
           WHERE "boardId" = $1`,
          [banned],
        );
        await db.query(
          `UPDATE "Board" SET "state" = 'banned', "bannedUntil" = now() + interval '1 hour' WHERE "id" = $1`,
          [banned],
        );
        await new Promise((r) => setTimeout(r, 1500));
      }
      expect((await api('GET', `/api/v1/boards/${banned}`)).body.state).toBe('banned');
      // The session from the registration is still valid: before the check, this diff reached the board.
      const diff = await api('GET', `/api/v1/boards/${banned}/config/diff?from=1&to=live`, undefined, {
        token: viewer,
      });
      expect(diff.status).toBe(503);
      expect(diff.body.detail).toMatch(/banned the fleet manager's address for \d+ s more/);
      expect(diff.body.retry_after_seconds).toBeGreaterThan(3000);
    });
  });

  it('cuts off a board that answers with 100 MB and records why (Medium 5)', async () => {
    let written = 0;
    const huge = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked: no length given
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (written < 100 * 1024 * 1024 && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((r) => huge.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(huge.address() as AddressInfo).port}`;
      const created = await api('POST', '/api/v1/boards/bulk', { boards: [{ name: 'huge', base_url: url }] });
      const id = created.body.items[0].id as string;
      const polled = await api('POST', `/api/v1/boards/${id}/poll`);
      expect(polled.status).toBe(200);
      // Cut off by the dispatcher's limit (board-clients.service.ts) or, past it, by the reader's (transport.ts).
      expect(polled.body.state_reason).toMatch(/exceeded max size|ran past the 4194304 bytes read; cut off/);
      const failures = await api('GET', `/api/v1/boards/${id}/timeline?kind=poll_failed`);
      expect(JSON.stringify(failures.body.items[0])).toMatch(/exceeded max size|cut off/);
      expect(written).toBeLessThan(32 * 1024 * 1024);
    } finally {
      huge.closeAllConnections();
      await new Promise((r) => huge.close(r));
    }
  }, 30_000);

  it('an operator restore that sets firmware_sources, or copies another board, is 403 (Medium 7)', async () => {
    const mine = await register('restore-mine', 5);
    const other = await register('restore-other', 6);
    expect((await api('POST', `/api/v1/boards/${mine}/config/backups`)).status).toBe(202);
    const versions = await waitFor(
      'a stored version',
      () => api('GET', `/api/v1/boards/${mine}/config/versions`),
      (r) => r.body.items?.length > 0,
      15_000,
    );
    const versionId = versions.value.body.items[0].id as string;
    const operator = (await api('POST', '/api/v1/tokens', { name: 'op-restore', role: 'operator' })).body.token;
    const as = (token: string | undefined, target: string, body: unknown) =>
      api('POST', `/api/v1/boards/${target}/config/restore`, body, token ? { token } : {});

    const sources = await as(operator, mine, { version_id: versionId });
    expect(sources.status).toBe(403);
    expect(sources.type).toMatch(/problem\+json/);
    expect(sources.body.detail).toMatch(/only an admin may make this restore: it sets firmware_sources/);
    const copy = await as(operator, other, { version_id: versionId, fields: ['hostname'] });
    expect(copy.status).toBe(403);
    expect(copy.body.detail).toMatch(/the version belongs to board restore-mine/);

    expect((await as(operator, mine, { version_id: versionId, fields: ['hostname', 'ntp_servers'] })).status).toBe(202);
    expect((await as(undefined, other, { version_id: versionId })).status).toBe(202); // the admin may
  }, 40_000);
});
