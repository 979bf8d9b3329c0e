// Registering by scan against a real `board-agent rack`: a dry run reports what answers (dialect, version, already
// registered) without registering; the real scan registers only the new boards, which then poll online; a second scan
// registers nothing; ranges that are too large, backwards or not host addresses are refused with a problem.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';
import { apiClient, waitFor } from './api.js';
import { startRack, type RackProcess } from './rack.js';

const redis = requireRedis();

redis.describe('scanning for boards', () => {
  let rack: RackProcess;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;
  let port: number;
  const paths = [1, 2, 3, 4, 5, 6].map((i) => `/boards/${i}`);
  const scan = (extra: Record<string, unknown> = {}) =>
    api('POST', '/api/v1/boards/scan', {
      from: '127.0.0.1',
      // The rack's port and one where nothing listens.
      ports: [port, 9],
      scheme: 'http',
      paths,
      credentials: { username: 'root', password: 'turing' },
      labels: { found: 'scan' },
      name_prefix: 'lab',
      ...extra,
    });

  beforeAll(async () => {
    rack = await startRack(6);
    port = Number(new URL(rack.url).port);
    await rack.control('POST', '/rack/boards/3/dialect', { dialect: 'fork', version: '2.36.3' });
    await rack.control('POST', '/rack/boards/5/faults', { unreachable: true });
    app = await startTestApp({ redisUrl: redis.url, env: { POLL_INTERVAL_SECONDS: '2', POLL_TIMEOUT_MS: '2000' } });
    api = apiClient(app.baseUrl);
    const first = await api('POST', '/api/v1/boards', { name: 'known', base_url: rack.boardUrl(1) });
    expect(first.status).toBe(201);
  }, 90_000);

  afterAll(async () => {
    await app?.close();
    await rack?.stop();
  });

  it('a dry run reports what answers and registers nothing', async () => {
    const res = await scan({ dry_run: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: true, probed: 12, unanswered: 7, registered: [] });
    expect(res.body.found).toEqual([
      { base_url: rack.boardUrl(1), dialect: 'agent', version: expect.any(String), already_registered: true },
      { base_url: rack.boardUrl(2), dialect: 'agent', version: expect.any(String), already_registered: false },
      { base_url: rack.boardUrl(3), dialect: 'fork', version: '2.36.3', already_registered: false },
      { base_url: rack.boardUrl(4), dialect: 'agent', version: expect.any(String), already_registered: false },
      { base_url: rack.boardUrl(6), dialect: 'agent', version: expect.any(String), already_registered: false },
    ]);
    expect((await api('GET', '/api/v1/boards?limit=100')).body.items).toHaveLength(1);
  });

  it('registers the new boards with the given labels and credentials; they come online; a rescan adds none', async () => {
    const res = await scan();
    expect(res.status).toBe(200);
    const registered = res.body.registered as Array<{ name: string; base_url: string; labels: object }>;
    expect(registered.map((b) => b.base_url)).toEqual([2, 3, 4, 6].map((i) => rack.boardUrl(i)));
    expect(registered[0]).toMatchObject({ name: `lab-127-0-0-1-${port}-boards-2`, labels: { found: 'scan' } });

    const online = await waitFor(
      'scanned boards online',
      () => api('GET', '/api/v1/boards?selector=found%3Dscan&limit=100'),
      (r) => r.body.items.length === 4 && r.body.items.every((b: { state: string }) => b.state === 'online'),
      30_000,
      250,
    );
    const fork = online.value.body.items.find((b: { base_url: string }) => b.base_url === rack.boardUrl(3));
    expect(fork).toMatchObject({ dialect: 'fork', daemon_version: '2.36.3' });

    const again = await scan();
    expect(again.status).toBe(200);
    expect(again.body.registered).toEqual([]);
    expect(again.body.found.every((f: { already_registered: boolean }) => f.already_registered)).toBe(true);
    expect((await api('GET', '/api/v1/boards?limit=100')).body.items).toHaveLength(5);
  }, 60_000);

  it('refuses unbounded, backwards and non-host ranges with a problem', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ from: '10.0.0.0', to: '10.0.255.255' }, /at most/],
      [{ from: '10.0.0.9', to: '10.0.0.1' }, /backwards/],
      [{ from: '0.0.0.1' }, /not a host address/],
      [{ from: '127.0.0.1', ports: [0] }, /ports/],
      [{ from: 'not-an-address' }, /from/],
    ];
    for (const [extra, detail] of cases) {
      const res = await scan({ dry_run: true, ...extra });
      expect(res.status).toBe(400);
      expect(res.type).toContain('application/problem+json');
      expect(JSON.stringify(res.body)).toMatch(detail);
    }
  });
});
