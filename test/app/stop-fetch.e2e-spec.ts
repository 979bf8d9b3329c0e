// A worker that is stopping can still be handed a job: BullMQ's pause() stops the worker's fetch loop, but a fetch
// already blocked on the queue (a queue whose concurrency is not used up is always waiting for its next job) takes the
// next job that arrives and runs it. That is what a rollout does while a worker stops: the install that finished in
// the grace asks for the next board's install, and the stopping worker takes it. Such a job must be waited for like
// the others, and handed back (its signal aborted) when the close goes on, before the board connections close under
// it: otherwise it marks an install sent that never left (test/firmware/mixed-rack.e2e-spec.ts waited 15 minutes for
// it). Real Redis and BullMQ; the worker is the fleet manager's own, with two jobs of its own kind.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { z } from 'zod';
import { ConfigService, loadConfig } from '../../src/config/config.service.js';
import { defineJob, type JobContext } from '../../src/jobs/job-definition.js';
import type { JobsRegistry, RegisteredJob } from '../../src/jobs/jobs.registry.js';
import { JobsWorker } from '../../src/jobs/jobs.worker.js';
import { SHUTDOWN_JOB_GRACE_MS } from '../../src/jobs/queue-settings.js';
import type { QueueHealth } from '../../src/queue/queue.health.js';
import { queueRootOptions } from '../../src/queue/queue.options.js';
import { TEST_ADMIN_TOKEN, TEST_SECRET_KEY } from '../support/app.js';
import { requireRedis } from '../support/redis.js';

const redis = requireRedis();

/** What a job saw: when it started and whether its hand-back signal was aborted by the time the close returned. */
interface Seen {
  started: number;
  abortedAt: number | null;
}

redis.describe('a job a stopping worker is handed', () => {
  const hold = defineJob({
    name: 'hold',
    queue: 'actions',
    payload: z.object({ name: z.string() }),
    retry: { attempts: 1, backoff: { type: 'fixed', delayMs: 1000 } },
  });
  const seen = new Map<string, Seen>();
  let releaseFirst: () => void = () => undefined;
  const firstReleased = new Promise<void>((resolve) => (releaseFirst = resolve));

  /** The first job holds until released; the second until its signal is aborted (a board call cut by the close). */
  const handler = async (payload: unknown, ctx: JobContext) => {
    const { name } = payload as { name: string };
    const entry: Seen = { started: Date.now(), abortedAt: null };
    seen.set(name, entry);
    ctx.signal.addEventListener('abort', () => (entry.abortedAt = Date.now()), { once: true });
    if (name === 'first') {
      await firstReleased;
      return;
    }
    while (!ctx.signal.aborted && Date.now() - entry.started < 3 * SHUTDOWN_JOB_GRACE_MS) {
      await sleep(50);
    }
  };
  const registered: RegisteredJob = { definition: hold, handler, owner: 'test.hold' };
  const registry = { get: (name: string) => (name === 'hold' ? registered : undefined), all: () => [registered] };

  const prefix = `stop-fetch-${randomUUID().slice(0, 8)}`;
  const config = new ConfigService(
    loadConfig({
      ROLE: 'worker',
      REDIS_URL: redis.url,
      QUEUE_PREFIX: prefix,
      BOOTSTRAP_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SECRET_KEY: TEST_SECRET_KEY,
    }),
  );
  let queue: Queue;
  let worker: JobsWorker;
  let admin: Redis;

  beforeAll(() => {
    admin = new Redis(redis.url);
    queue = new Queue('actions', queueRootOptions(config.all));
    const health = { ping: () => queue.getJobCounts('waiting').then(() => undefined) } as unknown as QueueHealth;
    worker = new JobsWorker(registry as unknown as JobsRegistry, config, health);
    Logger.overrideLogger(false);
    worker.onApplicationBootstrap();
  });

  afterAll(async () => {
    releaseFirst(); // a failed run left it held: the worker's close below would wait its grace for it
    await worker?.onModuleDestroy(); // a second close finds nothing to stop
    Logger.overrideLogger(['error', 'warn', 'log']);
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    admin?.disconnect();
  });

  const waitUntil = async (what: string, check: () => boolean | Promise<boolean>) => {
    const until = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > until) {
        throw new Error(`timed out waiting for ${what}`);
      }
      await sleep(20);
    }
  };

  /** Whether a connection of this test's queues is blocked in BZPOPMIN: the worker waiting for its next job. */
  const fetchBlocked = async () =>
    String(await admin.client('LIST'))
      .split('\n')
      // `cmd` is the last command; `flags` holds `b` while the client is blocked in it.
      .some((line) => line.includes(`name=${prefix}:`) && /\bflags=\S*b/.test(line) && /\bcmd=bzpopmin\b/.test(line));

  it('waits for it, and hands it back before the close returns', async () => {
    await queue.add('hold', { payload: { name: 'first' } });
    await waitUntil('the first job to start', () => seen.has('first'));
    // The state the stop meets in a rollout: a job running, the worker's fetch blocked on the queue for the next.
    await waitUntil('the worker to wait for its next job', fetchBlocked);

    const closed = worker.onModuleDestroy().then(() => Date.now());
    // Stopping now: the worker's fetch, blocked on the queue while the first job runs, takes this one.
    await queue.add('hold', { payload: { name: 'second' } });
    await waitUntil('the stopping worker to start the second job', () => seen.has('second'));
    releaseFirst();

    const closedAt = await closed;
    const second = seen.get('second')!;
    // Not left running with its signal intact while the process goes on to close what the job uses.
    expect(second.abortedAt).not.toBeNull();
    expect(second.abortedAt!).toBeLessThanOrEqual(closedAt);
    // It had the grace like any running job: not cut off as soon as the first one ended.
    expect(second.abortedAt! - second.started).toBeGreaterThanOrEqual(SHUTDOWN_JOB_GRACE_MS - 1000);
  }, 30_000);
});
