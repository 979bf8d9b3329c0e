import { describe, expect, it } from '@jest/globals';
import { ProblemException } from '../common/problem.js';
import type { QueueHealth } from '../queue/queue.health.js';
import { HealthController } from './health.controller.js';
import type { HealthRepository } from './health.repository.js';

const ok = async () => {};
const down = async () => {
  throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
};
const controller = (db: () => Promise<void>, queue: () => Promise<void>) =>
  new HealthController({ ping: db } as unknown as HealthRepository, { ping: queue } as unknown as QueueHealth);

describe('HealthController', () => {
  it('readyz is 200 when the database and the queue answer', async () => {
    await expect(controller(ok, ok).readyz()).resolves.toEqual({
      status: 'ok',
      checks: { database: 'ok', queue: 'ok' },
    });
  });

  it('readyz is a 503 problem naming what is down, without the driver error text (it answers anyone)', async () => {
    const err = await controller(ok, down)
      .readyz()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProblemException);
    expect((err as ProblemException).problem).toMatchObject({
      status: 503,
      detail: 'queue: unavailable (the reason is in the server log)',
      checks: { database: 'ok', queue: 'unavailable (the reason is in the server log)' },
    });
    expect(JSON.stringify((err as ProblemException).problem)).not.toContain('6379');
  });

  it('readyz gives up on a probe that hangs', async () => {
    const hang = () => new Promise<void>(() => {});
    const err = (await controller(hang, ok)
      .readyz()
      .catch((e: unknown) => e)) as ProblemException;
    expect(err.problem.detail).toBe('database: no answer within 2000 ms');
  }, 10000);
});
