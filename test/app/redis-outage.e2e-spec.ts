// Queues in Redis: the Redis server goes away for ten seconds under a running fleet manager. As with PostgreSQL
// (database-outage.e2e-spec.ts), the process lives through it, says the queue is down, logs the loss a bounded
// number of times, and polls its boards again once Redis is back. A private redis-server of its own (the shared one
// serves other tests), killed and started again on the same port.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'undici';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp, type TestApp } from '../support/app.js';

const OUTAGE_MS = 10_000;
const MAX_ERRORS_DURING_OUTAGE = 30;

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;
const describeWithRedisServer = hasRedisServer ? describe : describe.skip;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return child;
}

function stopRedis(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

async function get(url: string): Promise<{ status: number; body: any }> {
  const res = await request(url, { headersTimeout: 5000, bodyTimeout: 5000 });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? JSON.parse(text) : null };
}

describeWithRedisServer('a Redis outage under a running fleet manager (queues in Redis)', () => {
  let rack: RackProcess;
  let app: TestApp;
  let redis: ChildProcess | undefined;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    rack = await startRack(1);
    app = await startTestApp({
      redisUrl: `redis://127.0.0.1:${port}`,
      env: { POLL_INTERVAL_SECONDS: '1', POLL_TIMEOUT_MS: '2000' },
    });
  }, 60_000);

  afterAll(async () => {
    if (redis?.exitCode !== null || redis?.signalCode !== null) {
      redis = await startRedis(port).catch(() => undefined); // so the queues can close
    }
    await app?.close();
    await stopRedis(redis);
    await rack?.stop();
  });

  it('survives, says the queue is down, logs it a bounded number of times, and polls again once it is back', async () => {
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

    const errorsBefore = app.errorLines().length;
    const started = Date.now();
    await stopRedis(redis);
    let sawDown = false;
    while (Date.now() - started < OUTAGE_MS) {
      await new Promise((r) => setTimeout(r, 1000));
      expect((await get(`${app.baseUrl}/healthz`)).status).toBe(200);
      const ready = await get(`${app.baseUrl}/readyz`);
      if (ready.status === 503 && ready.body.checks.queue !== 'ok') {
        sawDown = true;
      }
    }
    const errors = app.errorLines().slice(errorsBefore);
    expect(sawDown).toBe(true);
    const tally = new Map<string, number>();
    for (const line of errors) {
      tally.set(line.split('\n')[0]!, (tally.get(line.split('\n')[0]!) ?? 0) + 1);
    }
    const repeated = [...tally].sort((a, b) => b[1] - a[1]).slice(0, 5);
    expect({ errors: errors.length <= MAX_ERRORS_DURING_OUTAGE ? 'bounded' : errors.length, repeated }).toEqual({
      errors: 'bounded',
      repeated,
    });

    redis = await startRedis(port); // empty: the jobs queued before are gone, the clocks queue new ones
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
  }, 120_000);
});
