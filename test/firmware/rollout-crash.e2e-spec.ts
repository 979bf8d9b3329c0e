// Crash safety: the built fleet manager (API + worker in one process) is killed with SIGKILL at random moments of a
// 100-board rollout, five times, and started again each time. The rollout must complete with every board on the
// target (read from each board's own /firmware/slots) and the rack's counters must show exactly one install per
// board: the per-board state lives in PostgreSQL, runs are DB-leased, and a run checks the slots before installing.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { FakeFirmwareHost } from '../../apps/agent/test/support/firmware-server.js';
import { apiClient, waitFor } from '../boards/api.js';
import { startRack, type RackProcess } from '../boards/rack.js';
import { TEST_ADMIN_TOKEN, TEST_SECRET_KEY } from '../support/app.js';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '../support/database.js';
import { requireRedis } from '../support/redis.js';
import {
  boardSlots,
  installCalls,
  pushSources,
  registerBoards,
  startFirmwareHost,
  TARGET,
  waitOnline,
  type Api,
} from './helpers.js';
import { mapLimit } from '../../src/common/concurrency.js';

const redis = requireRedis();
const BOARDS = 100;
const KILLS = 5;

redis.describe('rollout survives kill -9 of the fleet manager', () => {
  let rack: RackProcess;
  let host: FakeFirmwareHost;
  let db: TestDatabase;
  let child: ChildProcess | undefined;
  // One port across restarts, below Linux's ephemeral range (32768+), where outgoing connections never land.
  const port = 20000 + Math.floor(Math.random() * 12000);
  const baseUrl = `http://127.0.0.1:${port}`;
  const api = apiClient(baseUrl) as Api;
  let env: Record<string, string>;
  const log: string[] = [];

  const startApp = async () => {
    child = spawn(process.execPath, ['dist/src/main.js'], {
      // eslint-disable-next-line no-restricted-properties -- the child inherits PATH and the like, plus the test's settings
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => log.push(d.toString()));
    child.stderr!.on('data', (d: Buffer) => log.push(d.toString()));
    await waitFor(
      'fleet manager up',
      () => api('GET', '/api/v1/firmware/rollouts?limit=1').catch(() => ({ status: 0, type: '', body: null })),
      (r) => r.status === 200,
      30_000,
      100,
    );
  };
  const kill9 = async () => {
    const c = child!;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };

  beforeAll(async () => {
    host = await startFirmwareHost();
    rack = await startRack(BOARDS, ['--boot-delay-ms', '1000', '--trust-loopback']);
    db = await createTestDatabase();
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: testQueuePrefix(),
      BOOTSTRAP_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SECRET_KEY: TEST_SECRET_KEY,
      HOST: '127.0.0.1',
      PORT: String(port),
      ROLE: 'all',
      LOG_LEVEL: 'warn',
      POLL_INTERVAL_SECONDS: '2',
      POLL_SLOW_INTERVAL_SECONDS: '5',
      POLL_CONCURRENCY: '64',
      POLL_TIMEOUT_MS: '5000',
    };
    await startApp();
    await registerBoards(
      api,
      rack,
      1,
      BOARDS,
      () => ({ group: 'crash' }),
      (i) => `r${(i % 5) + 1}`,
    );
    await waitOnline(api, '', BOARDS, 60_000);
    await pushSources(api, host, '', 60_000);
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      await kill9();
    }
    await rack?.stop();
    await host?.close();
    await db?.drop();
  });

  it('completes with every board on the target and exactly one install per board', async () => {
    const created = await api('POST', '/api/v1/firmware/rollouts', {
      name: 'crash',
      version: TARGET,
      source: 'test-http',
      selector: { labels: 'group=crash' },
      policy: {
        canary: 2,
        waves: [{ percent: 20 }],
        concurrency: 20,
        install_timeout_seconds: 20,
        reboot_timeout_seconds: 90,
        board_timeout_seconds: 600,
        error_threshold: { percent: 20, min_finished: 2 },
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const progress: string[] = [];
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 1000 + Math.random() * 3000));
      const before = await api('GET', `/api/v1/firmware/rollouts/${id}`);
      progress.push(
        `kill ${k + 1}: ${before.body.status} wave ${before.body.current_wave} ${JSON.stringify(before.body.summary)}`,
      );
      await kill9();
      await startApp();
    }
    const { value } = await waitFor(
      'rollout finished after the crashes',
      () => api('GET', `/api/v1/firmware/rollouts/${id}`),
      (r) => ['completed', 'failed', 'paused', 'cancelled'].includes(r.body.status),
      240_000,
      500,
    );
    // Shown on failure: where each kill landed.
    expect({ status: value.body.status, reason: value.body.status_reason, progress }).toMatchObject({
      status: 'completed',
      reason: null,
    });
    expect(value.body.summary).toEqual({ succeeded: BOARDS });
    const indexes = Array.from({ length: BOARDS }, (_, k) => k + 1);
    const slots = await mapLimit(indexes, 16, (i) => boardSlots(rack, i));
    expect(slots.map((s) => s.running.version)).toEqual(indexes.map(() => TARGET));
    expect(await mapLimit(indexes, 16, (i) => installCalls(rack, i))).toEqual(indexes.map(() => 1));
  }, 400_000);
});
