// app.close() must release Redis too, even while a job outlives the shutdown grace (SHUTDOWN_JOB_GRACE_MS): the
// worker is then closed by force, and the job goes on until its board answers. BullMQ's pause(), which the close used
// to wait for running jobs with, reconnects its worker's blocking connection once they end, and that connection, made
// after the close, was never closed: jest's worker process could not exit (test/firmware/rollout.e2e-spec.ts).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { startTestApp } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();

redis.describe('closing the app (queues in Redis)', () => {
  let rack: RackProcess;
  let admin: Redis;

  beforeAll(async () => {
    rack = await startRack(1, ['--trust-loopback']);
    admin = new Redis(redis.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await rack?.stop();
  });

  /** The names of the Redis clients of queues under `prefix` (BullMQ names each connection `<prefix>:<queue>`). */
  const clients = async (prefix: string) =>
    String(await admin.client('LIST'))
      .split('\n')
      .map((line) => /\bname=(\S*)/.exec(line)?.[1] ?? '')
      .filter((name) => name.startsWith(`${prefix}:`));

  it('leaves no Redis connection behind when a job outlives the shutdown grace', async () => {
    const app = await startTestApp({
      redisUrl: redis.url,
      env: { POLL_INTERVAL_SECONDS: '1', POLL_TIMEOUT_MS: '10000' },
    });
    const prefix = app.config.redis.prefix;
    const api = apiClient(app.baseUrl);
    const created = await api('POST', '/api/v1/boards', { name: 'b1', base_url: rack.boardUrl(1) });
    expect(created.status).toBe(201);
    await waitFor(
      'the board online',
      async () => (await api('GET', `/api/v1/boards/${created.body.id}`)).body,
      (b) => b.state === 'online',
      20_000,
    );
    // Every answer now takes 7 s: polls run longer than the 4 s the close gives running jobs.
    expect((await rack.control('POST', '/rack/boards/1/faults', { latencyMs: 7000 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2500));
    expect((await clients(prefix)).length).toBeGreaterThan(0);

    await app.close();
    // The jobs cut off by the close end when the board answers (7 s after they asked); nothing may connect then.
    await new Promise((r) => setTimeout(r, 6000));
    expect(await clients(prefix)).toEqual([]);
  }, 90_000);
});
