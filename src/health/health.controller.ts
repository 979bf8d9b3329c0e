import { Controller, Get, Logger } from '@nestjs/common';
import { z } from 'zod';
import { Public } from '../auth/auth.decorators.js';
import { ApiDoc } from '../openapi/api-doc.decorator.js';
import { ProblemException } from '../common/problem.js';
import { QueueHealth } from '../queue/queue.health.js';
import { HealthRepository } from './health.repository.js';

const CHECK_TIMEOUT_MS = 2000;

const logger = new Logger('HealthController');
const TIMED_OUT = `no answer within ${CHECK_TIMEOUT_MS} ms`;

/**
 * 'ok', or what is wrong in words that give nothing away: /readyz answers anyone, and a driver's error text can
 * carry host names, user names and versions. The error itself goes to the server log.
 */
async function check(name: string, probe: () => Promise<void>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // A dead Redis makes ioredis queue commands forever: bound each probe.
    timer = setTimeout(() => reject(new Error(TIMED_OUT)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), timeout]);
    return 'ok';
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    logger.warn(`readiness: ${name}: ${message}`);
    return message === TIMED_OUT ? TIMED_OUT : 'unavailable (the reason is in the server log)';
  } finally {
    clearTimeout(timer);
  }
}

/** Probes for load balancers and compose health checks: open, and saying nothing about the fleet. */
@Controller()
@Public()
export class HealthController {
  constructor(
    private readonly database: HealthRepository,
    private readonly queue: QueueHealth,
  ) {}

  /** Liveness: the process is up and serving HTTP. */
  @Get('healthz')
  @ApiDoc({ summary: 'Liveness', tags: ['meta'], response: z.object({ status: z.literal('ok') }) })
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: the database and the queue backend answer. 503 problem+json naming what does not. */
  @Get('readyz')
  @ApiDoc({
    summary: 'Readiness: the database and the queue answer (503 problem+json naming what does not)',
    tags: ['meta'],
    response: z.object({
      status: z.literal('ok'),
      checks: z.object({ database: z.literal('ok'), queue: z.literal('ok') }),
    }),
  })
  async readyz(): Promise<{ status: 'ok'; checks: Record<string, string> }> {
    // One after the other: the embedded database (pglite-socket) serves every client on one session and garbles
    // extended-protocol messages that interleave.
    const database = await check('database', () => this.database.ping());
    const queue = await check('queue', () => this.queue.ping());
    const checks = { database, queue };
    if (database !== 'ok' || queue !== 'ok') {
      const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
      throw new ProblemException(503, failing.map(([k, v]) => `${k}: ${v}`).join('; '), { checks });
    }
    return { status: 'ok', checks };
  }
}
