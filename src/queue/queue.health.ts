import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { ConfigService } from '../config/config.service.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { queueBackend } from './queue.options.js';

/** A queue that holds no jobs: reading its counts proves the queue backend answers. */
export const HEALTH_QUEUE = 'health';

@Injectable()
export class QueueHealth implements OnModuleInit {
  constructor(
    @InjectQueue(HEALTH_QUEUE) private readonly queue: Queue,
    private readonly config: ConfigService,
  ) {
    // The probe's caller reports failures; without a listener BullMQ prints every connection error of this queue.
    const errors = new ThrottledLog(new Logger(QueueHealth.name), `health queue`, 'warn');
    queue.on('error', (err) => errors.fail(err));
  }

  // BullMQ's PostgreSQL backend keeps the failure of a queue's first connection for good: a first probe during an
  // outage would report the queue down (and keep the worker supervisor's workers paused) until a restart. So the
  // probe connects at boot, when the database is known to answer. (Redis connections retry by themselves.)
  async onModuleInit(): Promise<void> {
    if (queueBackend(this.config.all) === 'postgres') {
      await this.queue.waitUntilReady();
    }
  }

  async ping(): Promise<void> {
    await this.queue.getJobCounts('waiting');
  }
}
