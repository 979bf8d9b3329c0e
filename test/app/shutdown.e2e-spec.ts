// Clean stop of the built fleet manager (role `all`, its own process) under a normal load: 20 boards polling every
// second, an SSE client connected, and a firmware install running (the board holds POST /firmware/install for a
// minute). SIGTERM must end the process with exit code 0 within 10 s: the stream is closed, the running job is handed
// back (its DB lease lets a later run take it over), the pools are closed, and nothing is logged as an error.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { request } from 'undici';
import type { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { pushSources, registerBoards, startFirmwareHost, TARGET, waitOnline, type Api } from '../firmware/helpers.js';
import { TEST_ADMIN_TOKEN, TEST_SECRET_KEY } from '../support/app.js';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '../support/database.js';
import { fleetEnv, startFleetProcess, type FleetProcess } from '../support/fleet-process.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();
const BOARDS = 20;

redis.describe('SIGTERM under load', () => {
  let rack: RackProcess;
  let host: FakeFirmwareHost;
  let db: TestDatabase;
  let child: ChildProcess;
  let api: Api;
  let baseUrl: string;
  const log: string[] = [];
  let startUpLog = '';

  beforeAll(async () => {
    host = await startFirmwareHost();
    rack = await startRack(BOARDS, ['--trust-loopback']);
    db = await createTestDatabase();
    child = spawn(process.execPath, ['dist/src/main.js'], {
      env: {
        // eslint-disable-next-line no-restricted-properties -- the child inherits PATH and the like, plus the test's settings
        ...process.env,
        DATABASE_URL: db.url,
        REDIS_URL: redis.url,
        QUEUE_PREFIX: testQueuePrefix(),
        BOOTSTRAP_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        SECRET_KEY: TEST_SECRET_KEY,
        HOST: '127.0.0.1',
        PORT: '0',
        ROLE: 'all',
        LOG_LEVEL: 'log',
        POLL_INTERVAL_SECONDS: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => log.push(d.toString()));
    child.stderr!.on('data', (d: Buffer) => log.push(d.toString()));
    const { value } = await waitFor(
      'the fleet manager to listen',
      () => Promise.resolve(/listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log.join(''))),
      (m) => m !== null,
      60_000,
      100,
    );
    baseUrl = value![1]!;
    startUpLog = log.join('');
    api = apiClient(baseUrl) as Api;
    await registerBoards(
      api,
      rack,
      1,
      BOARDS,
      () => ({ group: 'load' }),
      () => 'r1',
    );
    await waitOnline(api, '', BOARDS, 60_000);
    await pushSources(api, host, '', 60_000);
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
    }
    await rack?.stop();
    await host?.close();
    await db?.drop();
  });

  it('starts without narrating every module and route: the URL comes within a few lines', () => {
    expect(startUpLog).not.toMatch(/Mapped \{|RoutesResolver|dependencies initialized/);
    const lines = startUpLog.split('\n');
    expect(lines.findIndex((l) => /listening on http/.test(l))).toBeLessThan(10);
  });

  it('stops within 10 s with exit code 0, closing the stream and handing the running install back', async () => {
    await rack.control('POST', '/rack/boards/1/faults', { pathLatencyMs: { '/api/bmc/firmware/install': 60_000 } });
    const boards = (await api('GET', '/api/v1/boards?limit=100')).body.items as Array<{ id: string; name: string }>;
    const board1 = boards.find((b) => b.name === 'fw1')!;
    const install = await api('POST', `/api/v1/boards/${board1.id}/firmware/install`, {
      version: TARGET,
      source: 'test-http',
    });
    expect(install.status).toBe(202);
    await waitFor(
      'the install to be sent (the job is running)',
      () => api('GET', `/api/v1/firmware/installs/${install.body.install_id}`),
      (r) => r.body.status === 'staging',
      30_000,
      200,
    );

    const stream = await request(`${baseUrl}/api/v1/events`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, accept: 'text/event-stream' },
    });
    expect(stream.statusCode).toBe(200);
    const streamEnded = new Promise<void>((resolve) => {
      stream.body.on('end', resolve).on('error', () => resolve());
      stream.body.resume();
    });

    const before = log.length;
    const started = Date.now();
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    // While the process stops, requests are refused with a problem, not served against closing pools.
    await new Promise((r) => setTimeout(r, 500));
    const refused = await api('GET', '/api/v1/boards?limit=1');
    expect(refused).toMatchObject({ status: 503, type: expect.stringContaining('application/problem+json') });
    expect(refused.body.detail).toMatch(/shutting down/);
    const code = await Promise.race([
      exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 15_000)),
    ]);
    const elapsed = Date.now() - started;
    expect(code).toBe(0);
    expect(elapsed).toBeLessThan(10_000);
    await streamEnded;
    const after = log.slice(before).join('');
    expect(after).not.toMatch(/ERROR/);
  }, 60_000);
});

// The same stop for the roles docker-compose runs apart: an `api` process holding an SSE stream open, and a `worker`
// process in the middle of a firmware install. Each exits 0 within 10 s of SIGTERM, with no ERROR line.
redis.describe('SIGTERM of the api and worker roles', () => {
  let rack: RackProcess;
  let host: FakeFirmwareHost;
  let db: TestDatabase;
  let apiProcess: FleetProcess;
  let worker: FleetProcess;
  let api: Api;

  beforeAll(async () => {
    host = await startFirmwareHost();
    rack = await startRack(BOARDS, ['--trust-loopback']);
    db = await createTestDatabase();
    const env = fleetEnv(db, redis.url, { LOG_LEVEL: 'log', POLL_INTERVAL_SECONDS: '1' });
    worker = await startFleetProcess('worker', env);
    apiProcess = await startFleetProcess('api', env);
    api = apiClient(apiProcess.url) as Api;
    await registerBoards(
      api,
      rack,
      1,
      BOARDS,
      () => ({ group: 'load' }),
      () => 'r1',
    );
    await waitOnline(api, '', BOARDS, 60_000);
    await pushSources(api, host, '', 60_000);
  }, 180_000);

  afterAll(async () => {
    await worker?.stop();
    await apiProcess?.stop();
    await rack?.stop();
    await host?.close();
    await db?.drop();
  });

  it('--role worker stops within 10 s with exit code 0 while an install runs', async () => {
    await rack.control('POST', '/rack/boards/1/faults', { pathLatencyMs: { '/api/bmc/firmware/install': 60_000 } });
    const boards = (await api('GET', '/api/v1/boards?limit=100')).body.items as Array<{ id: string; name: string }>;
    const board1 = boards.find((b) => b.name === 'fw1')!;
    const install = await api('POST', `/api/v1/boards/${board1.id}/firmware/install`, {
      version: TARGET,
      source: 'test-http',
    });
    expect(install.status).toBe(202);
    await waitFor(
      'the install to be sent (the job is running)',
      () => api('GET', `/api/v1/firmware/installs/${install.body.install_id}`),
      (r) => r.body.status === 'staging',
      30_000,
      200,
    );

    const exit = await worker.stop();
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(10_000);
    expect(worker.errorLines()).toEqual([]);
  }, 60_000);

  it('--role api stops within 10 s with exit code 0 while an SSE stream is open, closing the stream', async () => {
    const stream = await request(`${apiProcess.url}/api/v1/events`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, accept: 'text/event-stream' },
    });
    expect(stream.statusCode).toBe(200);
    const streamEnded = new Promise<void>((resolve) => {
      stream.body.on('end', resolve).on('error', () => resolve());
      stream.body.resume();
    });

    const exit = await apiProcess.stop();
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit.ms).toBeLessThan(10_000);
    await streamEnded;
    expect(apiProcess.errorLines()).toEqual([]);
  }, 60_000);
});
