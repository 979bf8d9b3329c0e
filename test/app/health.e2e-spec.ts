// The fleet manager boots on a database of its own and reports liveness and readiness.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('health endpoints, queues in PostgreSQL', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it('GET /healthz answers while the process is up', async () => {
    expect(await get(`${app.baseUrl}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('GET /readyz reports the database and the queue backend ready', async () => {
    expect(await get(`${app.baseUrl}/readyz`)).toEqual({
      status: 200,
      body: { status: 'ok', checks: { database: 'ok', queue: 'ok' } },
    });
  });
});

const redis = requireRedis();
redis.describe('health endpoints, queues in Redis', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ redisUrl: redis.url });
  });
  afterAll(() => app?.close());

  it('GET /readyz reports the Redis queue backend ready', async () => {
    expect(await get(`${app.baseUrl}/readyz`)).toEqual({
      status: 200,
      body: { status: 'ok', checks: { database: 'ok', queue: 'ok' } },
    });
  });
});
