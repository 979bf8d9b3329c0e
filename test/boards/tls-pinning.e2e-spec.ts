// Boards serve self-signed certificates; the fleet manager pins each board's certificate on first use. A board
// that comes back with another certificate (replaced, re-keyed, or someone in between) is refused before any
// credential is sent, until an admin trusts the new one. Real PostgreSQL, Redis and `board-agent --tls` processes.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import { apiClient, waitFor } from './api.js';
import {
  presentedFingerprint as fingerprintOn,
  randomPort,
  startTlsBoard as startOn,
  type TlsBoard,
} from './tls-board.js';

const redis = requireRedis();
// One port for both boards (the second takes the first's place).
const PORT = randomPort();
const startTlsBoard = () => startOn(PORT);
const presentedFingerprint = () => fingerprintOn(PORT);

redis.describe('TLS certificate pinning', () => {
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let board: TlsBoard | undefined;
  let id: string;

  beforeAll(async () => {
    board = await startTlsBoard();
    app = await startTestApp({
      redisUrl: redis.url,
      // A short backoff cap (POLL_SLOW_INTERVAL_SECONDS): the board is unreachable while it restarts.
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
  });

  it('pins the certificate a board presents first', async () => {
    const res = await api('POST', '/api/v1/boards', {
      name: 'tls1',
      base_url: `https://127.0.0.1:${PORT}`,
      credentials: { username: 'root', password: 'turing' },
    });
    expect(res.status).toBe(201);
    expect(res.body.state).toBe('online');
    id = res.body.id;
    const pinned = await waitFor(
      'the pin stored',
      () => api('GET', `/api/v1/boards/${id}`),
      (r) => r.body.tls_fingerprint !== null,
      5_000,
    );
    expect(pinned.value.body.tls_fingerprint).toBe(await presentedFingerprint());
  }, 30_000);

  it('refuses a board that comes back with another certificate, until an admin trusts it', async () => {
    const first = (await api('GET', `/api/v1/boards/${id}`)).body.tls_fingerprint as string;
    await board!.stop();
    board = await startTlsBoard(); // a new state directory: a new key and certificate on the same address
    const second = await presentedFingerprint();
    expect(second).not.toBe(first);

    const refused = await waitFor(
      'the board refused for its certificate',
      () => api('GET', `/api/v1/boards/${id}`),
      // (While the board restarted it was refused for ECONNREFUSED; then for its certificate.)
      (r) => r.body.state === 'unreachable' && /certificate changed/.test(r.body.state_reason ?? ''),
      20_000,
      250,
    );
    expect(refused.value.body.tls_fingerprint).toBe(first);
    const failures = await api('GET', `/api/v1/boards/${id}/timeline?kind=poll_failed`);
    expect(failures.body.items[0].summary).toMatch(/certificate/);

    // Only an admin may trust it.
    const operator = await api('POST', '/api/v1/tokens', { name: 'op', role: 'operator' });
    const denied = await api('POST', `/api/v1/boards/${id}/tls/trust`, undefined, { token: operator.body.token });
    expect(denied.status).toBe(403);

    const trusted = await api('POST', `/api/v1/boards/${id}/tls/trust`);
    expect(trusted.status).toBe(200);
    expect(trusted.body.tls_fingerprint).toBe(second);
    await waitFor(
      'the board online again',
      () => api('GET', `/api/v1/boards/${id}`),
      (r) => r.body.state === 'online',
      15_000,
      250,
    );
    const timeline = await api('GET', `/api/v1/boards/${id}/timeline?kind=config,user_action`);
    expect(timeline.body.items.map((e: { summary: string }) => e.summary).join('\n')).toMatch(
      /certificate pin cleared/,
    );
  }, 60_000);

  it('refuses to trust a certificate of a board reached over plain HTTP', async () => {
    const plain = await api('POST', '/api/v1/boards/bulk', {
      boards: [{ name: 'plain', base_url: 'http://127.0.0.1:9' }],
    });
    const res = await api('POST', `/api/v1/boards/${plain.body.items[0].id}/tls/trust`);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/plain HTTP/);
  });
});
